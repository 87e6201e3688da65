# TVMScript functions below are parsed by apache-tvm, not typed Python.
# mypy: disable-error-code="valid-type,untyped-decorator,no-untyped-def"
"""Libraries built by Apache TVM 0.27 (tvm-ffi convention) load and run in pytvm, here and on a
pytvm server. apache-tvm compiles them inside the test, so its own runtime is loaded in this
process too: the libraries must still report errors through pytvm's runtime.
"""

from __future__ import annotations

import ctypes
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tvm
from tvm.script import tirx as T

import pytvm
from pytvm.ffi import tvm_ffi_abi
from pytvm.ffi.elf_symbols import read_dynamic_symbols
from pytvm.ffi.errors import TVMError
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.client import RPCSession, connect
from pytvm.runtime import LibraryModule, load_module

pytestmark = pytest.mark.needs_cc

N = 1024


@T.prim_func
def myadd(
    A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), C: T.Buffer((N,), "float32")
) -> None:
    T.func_attr({"global_symbol": "myadd"})
    for i in range(N):
        C[i] = A[i] + B[i]


@T.prim_func
def scale_parallel(
    A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32"), k: T.float32
) -> None:
    T.func_attr({"global_symbol": "scale_parallel"})
    for i in T.parallel(N):
        B[i] = A[i] * k


@T.prim_func
def reverse_plus_one(A: T.Buffer((N,), "float32"), B: T.Buffer((N,), "float32")) -> None:
    T.func_attr({"global_symbol": "reverse_plus_one"})
    tmp = T.alloc_buffer((N,), "float32")  # too big for the stack: a TVMBackendAllocWorkspace
    for i in range(N):
        tmp[i] = A[i] + T.float32(1)
    for i in range(N):
        B[i] = tmp[N - 1 - i]


@T.prim_func
def answer() -> T.int64:
    T.func_attr({"global_symbol": "answer"})
    return T.int64(42)


@T.prim_func
def call_global(A: T.Buffer((4,), "float32"), x: T.int64) -> T.int64:
    T.func_attr({"global_symbol": "call_global"})
    r: T.int64 = T.call_packed("testing.tvm_modules.times_ten", x)
    return r + T.int64(1)


def _export(func: tvm.tirx.PrimFunc, target: str, path: Path) -> Path:
    tvm.compile(func, target=target).export_library(str(path))
    return path


@pytest.fixture(scope="module")
def libs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """Shared objects exported by apache-tvm, by ``<function>_<target>``."""
    out = tmp_path_factory.mktemp("tvm_libs")
    built = {}
    for func, targets in (
        (myadd, ("llvm", "c")),
        (scale_parallel, ("llvm",)),
        (reverse_plus_one, ("llvm", "c")),
        (answer, ("llvm", "c")),
        (call_global, ("llvm",)),
    ):
        name = func.attrs["global_symbol"]
        for target in targets:
            built[f"{name}_{target}"] = _export(func, target, out / f"{name}_{target}.so")
    return built


def _arrays(dev: pytvm.Device | None = None) -> tuple[np.ndarray, np.ndarray, list[pytvm.NDArray]]:
    a = np.random.default_rng(0).standard_normal(N).astype("float32")
    b = np.arange(N, dtype="float32")
    arrays = [pytvm.nd.array(x, dev) for x in (a, b, np.zeros(N, "float32"))]
    return a, b, arrays


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_tvm_built_add_runs_locally(libs: dict[str, Path], target: str) -> None:
    mod = load_module(libs[f"myadd_{target}"])
    assert isinstance(mod, LibraryModule) and mod.convention == "tvm-ffi"
    assert "myadd" in mod and "nothing" not in mod
    assert mod.get_function("nothing", allow_missing=True) is None
    a, b, (x, y, z) = _arrays()
    func = mod.get_function("myadd")
    assert func is not None
    func(x, y, z)
    np.testing.assert_allclose(z.numpy(), a + b, rtol=1e-6)
    # The entry function: main, also what mod(...) calls.
    assert mod.entry_name == "main"
    z.copyfrom(np.zeros(N, "float32"))
    mod(x, y, z)
    np.testing.assert_allclose(z.numpy(), a + b, rtol=1e-6)
    mod[mod.entry_name](y, y, z)
    np.testing.assert_allclose(z.numpy(), 2 * b)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_zero_argument_function_returns_int64(libs: dict[str, Path], target: str) -> None:
    mod = load_module(libs[f"answer_{target}"])
    assert mod["answer"]() == 42
    assert type(mod()) is int


def test_parallel_loop_runs_on_pytvm_thread_pool(libs: dict[str, Path]) -> None:
    mod = load_module(libs["scale_parallel_llvm"])
    a, _, (x, y, _) = _arrays()
    mod["scale_parallel"](x, y, 2.5)
    np.testing.assert_allclose(y.numpy(), a * 2.5, rtol=1e-6)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_workspace_comes_from_pytvm_backend(libs: dict[str, Path], target: str) -> None:
    mod = load_module(libs[f"reverse_plus_one_{target}"])
    a, _, (x, y, _) = _arrays()
    mod["reverse_plus_one"](x, y)
    np.testing.assert_allclose(y.numpy(), (a + 1)[::-1], rtol=1e-6)


def test_kernel_calls_a_pytvm_global_function(libs: dict[str, Path]) -> None:
    pytvm.register_func("testing.tvm_modules.times_ten", lambda v: v * 10, override=True)
    try:
        mod = load_module(libs["call_global_llvm"])
        assert mod["call_global"](pytvm.nd.array(np.zeros(4, "float32")), 4) == 41
    finally:
        pytvm.remove_global_func("testing.tvm_modules.times_ten")


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_bad_arguments_raise_the_message_tvm_generated(libs: dict[str, Path], target: str) -> None:
    f = load_module(libs[f"myadd_{target}"])["myadd"]
    _, _, (x, y, z) = _arrays()
    with pytest.raises(TypeError, match="Expected 3 arguments when calling:\n  `myadd"):
        f(x, y)
    with pytest.raises(TypeError, match="Mismatched type on argument #2"):
        f(x, y, 1.5)
    with pytest.raises(TypeError, match=r"Mismatched A\.dtype on argument #0"):
        f(pytvm.nd.array(np.zeros(N, "float64")), y, z)
    with pytest.raises(ValueError, match=r"Invalid A\.shape\[0\] on argument #0"):
        f(pytvm.nd.array(np.zeros(N + 1, "float32")), y, z)
    with pytest.raises(TypeError, match="argument 0 is a pytvm object"):
        f(load_module(libs["answer_c"]), y, z)
    f(x, y, z)  # still usable after errors


def test_time_evaluator_times_a_tvm_function(libs: dict[str, Path]) -> None:
    mod = load_module(libs["myadd_llvm"])
    _, _, arrays = _arrays()
    result = mod.time_evaluator("myadd", pytvm.cpu(0), number=20, repeat=3)(*arrays)
    assert len(result.results) == 3 and 0 < result.mean < 0.01


def test_context_symbols_are_filled_as_tvm_loader_does(libs: dict[str, Path]) -> None:
    load_module(libs["scale_parallel_llvm"])
    lib = ctypes.CDLL(str(libs["scale_parallel_llvm"]), mode=os.RTLD_NOLOAD)  # the loaded one
    slot = ctypes.c_void_p.in_dll(lib, "__TVMBackendParallelLaunch")
    env = tvm_ffi_abi.env_library()
    assert slot.value == ctypes.cast(env.TVMBackendParallelLaunch, ctypes.c_void_p).value


def test_library_embedding_a_relax_vm_is_refused_by_name(tmp_path: Path) -> None:
    from tvm.script import ir as I
    from tvm.script import relax as R

    @I.ir_module
    class Doubler:
        @R.function
        def main(x: R.Tensor((4,), "float32")) -> R.Tensor((4,), "float32"):
            return R.add(x, x)

    tvm.compile(Doubler, target="llvm").export_library(str(tmp_path / "vm.so"))
    with pytest.raises(ValueError, match=r"embeds module.* relax\.VMExecutable"):
        load_module(tmp_path / "vm.so")


def test_dynamic_symbols_tell_tvm_libraries_apart(libs: dict[str, Path], tmp_path: Path) -> None:
    symbols = read_dynamic_symbols(libs["reverse_plus_one_c"])
    assert symbols is not None
    assert {"__tvm_ffi_reverse_plus_one", "__tvm_ffi_main"} <= symbols.defined
    assert {"TVMFFIErrorSetRaisedFromCStrParts", "TVMBackendAllocWorkspace"} <= symbols.undefined
    assert tvm_ffi_abi.is_tvm_ffi_library(libs["myadd_llvm"])
    (tmp_path / "text.so").write_text("not an ELF file")
    assert read_dynamic_symbols(tmp_path / "text.so") is None
    assert not tvm_ffi_abi.is_tvm_ffi_library(tmp_path / "text.so")


@pytest.fixture(scope="module")
def session() -> Iterator[RPCSession]:
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        try:
            yield sess
        finally:
            sess.close()


def test_runs_on_a_pytvm_server_after_upload(libs: dict[str, Path], session: RPCSession) -> None:
    sess = session
    sess.upload(str(libs["myadd_llvm"]), "myadd.so")
    sess.upload(str(libs["answer_c"]), "answer.so")
    sess.upload(str(libs["scale_parallel_llvm"]), "scale.so")
    mod = sess.load_module("myadd.so")
    dev = sess.cpu(0)
    a, b, (x, y, z) = _arrays(dev)
    mod["myadd"](x, y, z)
    np.testing.assert_allclose(z.numpy(), a + b, rtol=1e-6)
    assert sess.load_module("answer.so")["answer"]() == 42
    sess.load_module("scale.so")["scale_parallel"](x, y, 3.0)
    np.testing.assert_allclose(y.numpy(), a * 3.0, rtol=1e-6)
    with pytest.raises(TVMError, match="Expected 3 arguments") as info:
        mod["myadd"](x, y)
    assert isinstance(info.value, TypeError)
    timer = mod.time_evaluator("myadd", dev, number=10, repeat=2)
    assert len(timer(x, y, z).results) == 2


def test_remote_array_into_a_local_tvm_function_is_refused(
    libs: dict[str, Path], session: RPCSession
) -> None:
    _, _, (x, y, z) = _arrays(session.cpu(0))
    # TVM's own check (device_type) or pytvm's check of remote arrays, before any access.
    with pytest.raises((TypeError, ValueError), match=r"A\.device_type on argument #0|remote"):
        load_module(libs["myadd_llvm"])["myadd"](x, y, z)
