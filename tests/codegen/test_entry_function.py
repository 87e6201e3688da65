"""The entry function of a one-kernel library (TVM's ``__tvm_main__``): ``mod(...)`` calls the
kernel in process, after export and load, on a pytvm server and in Apache TVM 0.27; a library
of several kernels has none; the entries are weak symbols, as TVM's.
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc, te, tir
from pytvm.ffi.elf_symbols import read_dynamic_symbols
from pytvm.ffi.errors import TVMAttributeError
from pytvm.rpc.services.server import Server

pytestmark = pytest.mark.needs_cc

TARGETS = ["c", "llvm"]
N = 16


def _kernel(name: str, offset: float) -> tir.PrimFunc:
    a = te.placeholder((N,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + offset, name="B")
    return te.create_prim_func([a, b]).with_attr("global_symbol", name)


def _run(mod: pytvm.runtime.Module, dev: pytvm.Device | None = None) -> np.ndarray:
    x = pytvm.nd.array(np.arange(N, dtype="float32"), dev)
    y = pytvm.nd.empty((N,), "float32", dev)
    mod(x, y)
    return y.numpy()


@pytest.mark.parametrize("target", TARGETS)
def test_the_only_kernel_is_the_entry_function(target: str, tmp_path: Path) -> None:
    built = pytvm.build(_kernel("myadd", 1.0), target=target)
    np.testing.assert_array_equal(_run(built), np.arange(N) + 1)
    path = tmp_path / "one.so"
    built.export_library(path)
    symbols = read_dynamic_symbols(path)
    assert symbols is not None
    assert {"myadd", "__tvm_main__", "__tvm_ffi_myadd", "__tvm_ffi_main"} <= symbols.defined
    loaded = pytvm.runtime.load_module(path)
    np.testing.assert_array_equal(_run(loaded), np.arange(N) + 1)
    assert loaded.entry_name == "main"
    assert loaded[loaded.entry_name] is not None


def test_the_entry_functions_are_weak(tmp_path: Path) -> None:
    path = tmp_path / "one.so"
    pytvm.build(_kernel("myadd", 1.0), target="c").export_library(path)
    table = subprocess.run(
        ["readelf", "--dyn-syms", "-W", str(path)], capture_output=True, text=True, check=True
    ).stdout
    binding = {line.split()[-1]: line.split()[4] for line in table.splitlines() if "FUNC" in line}
    assert binding["__tvm_main__"] == binding["__tvm_ffi_main"] == "WEAK"
    assert binding["myadd"] == "GLOBAL"


@pytest.mark.parametrize("target", TARGETS)
def test_a_library_of_two_kernels_has_no_entry(target: str) -> None:
    mod = tir.IRModule.from_expr(_kernel("first", 1.0), {"second": _kernel("second", 2.0)})
    built = pytvm.build(mod, target=target)
    with pytest.raises(TVMAttributeError, match="__tvm_main__"):
        _run(built)


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    with Server(port=0, key="entry", silent=True) as srv:
        yield srv.port


@pytest.mark.parametrize("target", TARGETS)
def test_the_entry_function_on_a_pytvm_server(target: str, server: int, tmp_path: Path) -> None:
    path = tmp_path / f"entry_{target}.so"
    pytvm.build(_kernel("myadd", 1.0), target=target).export_library(path)
    sess = rpc.connect("127.0.0.1", server, key="entry")
    sess.upload(str(path))
    remote = sess.load_module(path.name)
    np.testing.assert_array_equal(_run(remote, sess.cpu()), np.arange(N) + 1)
    timer = remote.time_evaluator(remote.entry_name, sess.cpu(), number=2)
    x = pytvm.nd.array(np.zeros(N, "float32"), sess.cpu())
    assert timer(x, pytvm.nd.empty((N,), "float32", sess.cpu())).mean > 0
    sess.close()


@pytest.mark.parametrize("target", TARGETS)
def test_apache_tvm_calls_the_entry_function(target: str, tmp_path: Path) -> None:
    tvm = pytest.importorskip("tvm")
    path = tmp_path / f"entry_{target}.so"
    pytvm.build(_kernel("myadd", 1.0), target=target).export_library(path)
    mod = tvm.runtime.load_module(str(path))
    x = tvm.runtime.tensor(np.arange(N, dtype="float32"))
    y = tvm.runtime.tensor(np.zeros(N, "float32"))
    mod(x, y)
    np.testing.assert_array_equal(y.numpy(), np.arange(N) + 1)
