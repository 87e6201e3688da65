"""``rpc.with_minrpc``: an executable of the C runtime's MinRPC server that PopenSession starts."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc, te
from pytvm.ffi.errors import TVMValueError
from pytvm.support import cc

pytestmark = pytest.mark.needs_cc


def test_minrpc_executable_without_objects_serves_the_cpu(tmp_path: Path) -> None:
    exe = tmp_path / "minrpc"
    rpc.with_minrpc(cc.create_executable)(str(exe), [])
    remote = rpc.PopenSession(str(exe))
    data = np.arange(6, dtype="float32")
    np.testing.assert_array_equal(pytvm.nd.array(data, remote.cpu()).numpy(), data)


def test_export_library_links_a_system_library_into_minrpc(tmp_path: Path) -> None:
    a = te.placeholder((32,), name="A")
    b = te.compute(a.shape, lambda i: a[i] * 2.0, name="B")
    func = te.create_prim_func([a, b]).with_attr("global_symbol", "twice")
    built = pytvm.build(func, target="c --system-lib")
    exe = tmp_path / "dev_lib.minrpc"
    built.export_library(str(exe), fcompile=rpc.with_minrpc(cc.create_executable))
    remote = rpc.PopenSession(str(exe))
    x = pytvm.nd.array(np.arange(32, dtype="float32"), remote.cpu())
    y = pytvm.nd.array(np.zeros(32, "float32"), remote.cpu())
    remote.system_lib()["twice"](x, y)
    np.testing.assert_allclose(y.numpy(), x.numpy() * 2)


def test_minrpc_needs_a_system_library_and_a_known_server() -> None:
    built = pytvm.build(te.create_prim_func(_one()), target="c")
    with pytest.raises(TVMValueError, match="needs a system library"):
        built.export_library("x", fcompile=rpc.with_minrpc(cc.create_executable))
    with pytest.raises(TVMValueError, match="no MinRPC server 'nope'"):
        rpc.with_minrpc(cc.create_executable, server="nope")


def _one() -> list[te.Tensor]:
    a = te.placeholder((4,), name="A")
    return [a, te.compute(a.shape, lambda i: a[i] + 1.0, name="B")]


def test_tvms_system_lib_prefix_builds_for_minrpc_and_times_there(tmp_path: Path) -> None:
    a = te.placeholder((102,), name="A")
    b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
    func = te.create_prim_func([a, b]).with_attr("global_symbol", "myadd")
    mod = pytvm.ir.IRModule.from_expr(func).with_attr("system_lib_prefix", "")
    built = pytvm.compile(mod, "llvm")  # a system library, so built from C
    exe = tmp_path / "dev_lib.minrpc"
    built.export_library(str(exe), fcompile=rpc.with_minrpc(cc.create_executable))
    remote = rpc.PopenSession(str(exe))
    x = pytvm.nd.array(np.random.default_rng(0).uniform(size=102).astype("float32"), remote.cpu())
    y = pytvm.nd.array(np.zeros(102, "float32"), remote.cpu())
    timer = remote.system_lib().time_evaluator("myadd", remote.cpu(0), number=3, repeat=4)
    result = timer(x, y)  # runtime.RPCTimeEvaluator of the C runtime
    assert len(result.results) == 4 and all(t > 0 for t in result.results)
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)
    remote.close()


def test_the_c_runtimes_time_evaluator_refuses_what_it_cannot_do(tmp_path: Path) -> None:
    exe = tmp_path / "minrpc"
    rpc.with_minrpc(cc.create_executable)(str(exe), [])
    remote = rpc.PopenSession(str(exe))
    lib = remote.system_lib()
    factory = remote.get_function("runtime.RPCTimeEvaluator")
    with pytest.raises(AttributeError, match="the module has no function 'nothing'"):
        factory(lib, "nothing", 1, 0, 1, 1, 0, 100, 0, 1, 0, "")
    with pytest.raises(ValueError, match="keeps at most 64"):
        factory(lib, "nothing", 1, 0, 1, 65, 0, 100, 0, 1, 0, "")
    with pytest.raises(ValueError, match="cannot sleep, flush caches"):
        factory(lib, "nothing", 1, 0, 1, 1, 0, 100, 5, 1, 0, "")
    with pytest.raises(RuntimeError, match=r"call runtime\.RPCTimeEvaluator first"):
        remote.get_function("runtime.RPCTimeEvaluator.evaluate")()
    remote.close()


def test_popen_session_refuses_a_missing_or_non_executable_file(tmp_path: Path) -> None:
    with pytest.raises(RuntimeError, match="does not exist"):
        rpc.PopenSession(str(tmp_path / "filenotexist"))
    plain = tmp_path / "plain"
    plain.write_bytes(b"\x7fELF")
    plain.chmod(0o400)
    with pytest.raises(RuntimeError, match="is not an executable file"):
        rpc.PopenSession(str(plain))
