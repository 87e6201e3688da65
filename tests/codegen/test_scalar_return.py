# TVMScript functions below are parsed by pytvm's parser, not typed Python.
# mypy: disable-error-code="valid-type"
"""A kernel's scalar result (``T.ret`` / ``return``) from both code generators: called here,
through a pytvm server, inside the C runtime, and by Apache TVM 0.27 loading the library.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc, tir
from pytvm.ffi.errors import TVMValueError
from pytvm.rpc.services.server import Server
from pytvm.script import ir as I
from pytvm.script import tirx as T
from pytvm.support import cc

pytestmark = pytest.mark.needs_cc

TARGETS = ["c", "llvm"]


@I.ir_module
class Returns:
    @T.prim_func
    def answer() -> T.int64:
        return T.int64(42)

    @T.prim_func
    def unused_arg(unused: T.int64) -> T.int64:
        return T.int64(42)

    @T.prim_func
    def half(x: T.float64) -> T.float64:
        return x * 0.5

    @T.prim_func
    def twice_i32(x: T.int32) -> T.int32:
        return x * 2

    @T.prim_func
    def is_positive(x: T.int64) -> T.bool:
        return x > T.int64(0)

    @T.prim_func
    def sum_or_minus_one(x: T.float64, A: T.Buffer((4,), "float32")) -> T.float64:
        s: T.float32 = A[0] + A[1] + A[2] + A[3]
        if x > 0.0:
            return T.float64(s) * x
        return T.float64(-1.0)


def _check(mod: pytvm.runtime.Module, dev: pytvm.Device | None = None) -> None:
    a = pytvm.nd.array(np.array([1, 2, 3, 4], "float32"), dev)
    assert mod["answer"]() == 42 and mod["unused_arg"](0) == 42
    assert mod["half"](3.0) == 1.5
    assert mod["twice_i32"](-21) == -42 and isinstance(mod["twice_i32"](1), int)
    assert mod["is_positive"](5) is True and mod["is_positive"](-5) is False
    assert mod["sum_or_minus_one"](2.0, a) == 20.0
    assert mod["sum_or_minus_one"](-2.0, a) == -1.0


@pytest.fixture(scope="module")
def libraries(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("returns")
    paths = {}
    for target in TARGETS:
        paths[target] = out / f"returns_{target}.so"
        pytvm.compile(Returns, target=target).export_library(paths[target])
    return paths


@pytest.mark.parametrize("target", TARGETS)
def test_a_compiled_function_returns_its_scalar(target: str) -> None:
    _check(pytvm.compile(Returns, target=target))


@pytest.mark.parametrize("target", TARGETS)
def test_an_exported_library_returns_its_scalar(libraries: dict[str, Path], target: str) -> None:
    _check(pytvm.runtime.load_module(libraries[target]))


@pytest.fixture(scope="module")
def server() -> Iterator[int]:
    with Server(port=0, key="returns", silent=True) as srv:
        yield srv.port


@pytest.mark.parametrize("target", TARGETS)
def test_a_function_on_a_pytvm_server_returns_its_scalar(
    libraries: dict[str, Path], server: int, target: str
) -> None:
    sess = rpc.connect("127.0.0.1", server, key="returns")
    sess.upload(str(libraries[target]))
    _check(sess.load_module(libraries[target].name), sess.cpu())
    sess.close()


@pytest.mark.parametrize("target", TARGETS)
def test_apache_tvm_sees_the_scalar_of_a_pytvm_library(
    libraries: dict[str, Path], target: str
) -> None:
    tvm = pytest.importorskip("tvm")
    mod = tvm.runtime.load_module(str(libraries[target]))
    a = tvm.runtime.tensor(np.array([1, 2, 3, 4], "float32"))
    assert mod["answer"]() == 42 and mod["unused_arg"](0) == 42
    assert mod["half"](3.0) == 1.5 and mod["twice_i32"](-21) == -42
    assert mod["is_positive"](5) is True
    assert mod["sum_or_minus_one"](2.0, a) == 20.0 and mod["sum_or_minus_one"](-1.0, a) == -1.0


def _workspace_kernel() -> tir.PrimFunc:
    """``x`` stored in a 64 KiB workspace, then returned doubled from inside the allocation
    when positive (the return leaves through the workspace's release), else -1 after it.
    """
    x = tir.Var("x", "int64")
    tmp = tir.decl_buffer((16384,), "float32", name="tmp")
    load = tir.BufferLoad(tmp, (tir.const(0, "int32"),))
    doubled = tir.Cast("int64", load) * tir.const(2, "int64")
    body = tir.seq(
        tir.Allocate(
            tmp,
            tir.seq(
                tir.BufferStore(tmp, tir.Cast("float32", x), (tir.const(0, "int32"),)),
                tir.IfThenElse(
                    x > tir.const(0, "int64"),
                    tir.Evaluate(tir.Call("int64", "tir.ret", (doubled,))),
                ),
            ),
        ),
        tir.Evaluate(tir.Call("int64", "tir.ret", (tir.const(-1, "int64"),))),
    )
    return tir.PrimFunc((x,), body, attrs={"global_symbol": "ws_ret"})


@pytest.mark.parametrize("target", TARGETS)
def test_a_return_inside_a_workspace_releases_it(target: str) -> None:
    mod = pytvm.build(_workspace_kernel(), target=target)
    assert [mod["ws_ret"](v) for v in (21, -3, 5)] == [42, -1, 10]


def test_returns_release_the_c_runtimes_workspaces(tmp_path: Path) -> None:
    """The C runtime's workspace is a bounded stack: a return that skipped a release would run
    it out within these calls (16 MiB of workspace, 64 KiB a call).
    """
    built = pytvm.build(_workspace_kernel(), target="c --system-lib")
    exe = tmp_path / "ws.minrpc"
    built.export_library(str(exe), fcompile=rpc.with_minrpc(cc.create_executable))
    sess = rpc.PopenSession(str(exe))
    func = sess.system_lib()["ws_ret"]
    assert all(func(k + 1) == 2 * (k + 1) for k in range(400))
    sess.close()


def test_returns_refuse_vectors_and_parallel_loops() -> None:
    vector = tir.PrimFunc(
        (), tir.Evaluate(tir.Call("float32x4", "tir.ret", (tir.Broadcast(tir.const(1.0), 4),)))
    )
    with pytest.raises(TVMValueError, match="cannot return a value of type float32x4"):
        pytvm.build(vector.with_attr("global_symbol", "vec"), target="c")
    i = tir.Var("i", "int32")
    ret = tir.Evaluate(tir.Call("int32", "tir.ret", (i,)))
    loop = tir.For(i, tir.const(0), tir.const(4), tir.ForKind.PARALLEL, ret)
    parallel = tir.PrimFunc((), loop, attrs={"global_symbol": "par"})
    for target in TARGETS:
        with pytest.raises(TVMValueError, match="a parallel loop cannot return"):
            pytvm.build(parallel, target=target)
