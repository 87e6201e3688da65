"""The llvmlite backend (``target="llvm -backend=llvmlite"``): every operator the C path builds,
vectors, parallel loops, workspaces, integer division, lazy conditionals, symbolic shapes; bad
calls raise the C path's very messages; export, reload, and a stock Apache TVM process; and a
build with no C compiler at all.
"""

from __future__ import annotations

import importlib.util
import math
import os
import subprocess
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.driver import compile_stats
from pytvm.driver.llvm_jit_module import LLVMModule
from pytvm.ffi.host_library import runtime_library
from pytvm.target import Target
from pytvm.testing.te_eval import evaluate

LLVM = "llvm -backend=llvmlite"
Arr = np.ndarray[Any, Any]


def _build(s: te.Schedule, args: list[Any], name: str, target: str = LLVM) -> Any:
    return pytvm.build(s, args, target=target, name=name)


def _topi_cases() -> ModuleType:
    """The C path's table of operators (tests/topi/test_build_ops.py), loaded as a module."""
    path = Path(__file__).resolve().parents[2] / "topi" / "test_build_ops.py"
    spec = importlib.util.spec_from_file_location("llvm_backend_topi_cases", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


TOPI = _topi_cases()


@pytest.fixture(scope="module")
def topi_module() -> Any:
    """Every operator of the C path's table, lowered and compiled into one LLVM module."""
    funcs = {
        TOPI._symbol(case): te.lower_schedule(
            case.schedule(case.outputs), [*case.inputs, *case.outputs], TOPI._symbol(case)
        )
        for case in TOPI.CASES
    }
    return pytvm.build(pytvm.tir.IRModule(funcs), target=LLVM)


@pytest.mark.parametrize("case", TOPI.CASES, ids=[c.name for c in TOPI.CASES])
def test_topi_operator_matches_the_reference(case: Any, topi_module: Any) -> None:
    inputs = {t: TOPI._input(t, case.positive) for t in case.inputs}
    want = evaluate(case.outputs, inputs)
    args = [pytvm.nd.array(v) for v in inputs.values()]
    outs = [pytvm.nd.empty(w.shape, str(w.dtype)) for w in want]
    topi_module[TOPI._symbol(case)](*args, *outs)
    for got, ref in zip(outs, want, strict=True):
        np.testing.assert_allclose(got.numpy(), ref, rtol=2e-5, atol=2e-5)


def test_build_gives_an_in_process_module_with_its_ir() -> None:
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] + 1.0, name="B")
    mod = _build(te.create_schedule(B.op), [A, B], "add_one")
    assert isinstance(mod, LLVMModule) and mod.type_key == "llvm"
    source = mod.get_source("ll")
    assert source.startswith("; pytvm target: llvm -backend=llvmlite")
    assert 'define i32 @"add_one"(ptr' in source and "__tvm_ffi_add_one" in source
    assert mod.get_source() == source
    with pytest.raises(ValueError, match="source of format 'll', not 'c'"):
        mod.get_source("c")


def test_an_unchanged_kernel_is_not_compiled_again(tmp_path: Path) -> None:
    A = te.placeholder((16,), name="A")
    B = te.compute((16,), lambda i: A[i] * 2.0, name="B")
    s = te.create_schedule(B.op)
    before = (compile_stats().compiled, compile_stats().cached)
    first = pytvm.build(s, [A, B], target=LLVM, name="twice", cache_dir=tmp_path)
    second = pytvm.build(s, [A, B], target=LLVM, name="twice", cache_dir=tmp_path)
    assert (compile_stats().compiled, compile_stats().cached) == (before[0] + 1, before[1] + 1)
    assert len(list(tmp_path.rglob("twice-*.o"))) == 1
    out = pytvm.nd.empty((16,), "float32")
    second["twice"](pytvm.nd.array(np.ones(16, "float32")), out)
    assert out.numpy().tolist() == [2.0] * 16
    assert first.get_source() == second.get_source()


# ----------------------------------------------------------------------------- math, vectors

_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any], float]] = {
    "exp": (te.exp, np.exp, -3),
    "log": (te.log, np.log, 0.1),
    "sqrt": (te.sqrt, np.sqrt, 0.1),
    "rsqrt": (te.rsqrt, lambda x: 1 / np.sqrt(x), 0.1),
    "tanh": (te.tanh, np.tanh, -3),
    "erf": (te.erf, np.vectorize(math.erf), -3),
    "sigmoid": (te.sigmoid, lambda x: 1 / (1 + np.exp(-x)), -3),
    "floor": (te.floor, np.floor, -3),
    "ceil": (te.ceil, np.ceil, -3),
    "round": (te.round, np.round, -3),
    "abs": (te.abs, np.abs, -3),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("op", list(_UNARY))
def test_vectorized_math_matches_numpy(op: str, dtype: str) -> None:
    fn, ref, lo = _UNARY[op]
    A = te.placeholder((37,), dtype, name="A")
    B = te.compute((37,), lambda i: fn(A[i]), name="B")
    s = te.create_schedule(B.op)
    _, inner = s[B].split(B.op.axis[0], factor=8)  # 4 vectors and a tail
    s[B].vectorize(inner)
    mod = _build(s, [A, B], f"math_{op}")
    x = np.linspace(lo, 3.0, 37).astype(dtype)
    out = pytvm.nd.empty((37,), dtype)
    mod[f"math_{op}"](pytvm.nd.array(x), out)
    np.testing.assert_allclose(out.numpy(), ref(x).astype(dtype), rtol=1e-6, atol=1e-6)


def test_pow_fmod_and_scalar_parameters() -> None:
    alpha = te.var("alpha", "float32")
    A = te.placeholder((20,), name="A")
    B = te.placeholder((20,), name="B")
    C = te.compute((20,), lambda i: te.pow(A[i], B[i]) + te.fmod(A[i], 0.75) * alpha, name="C")
    s = te.create_schedule(C.op)
    _, inner = s[C].split(C.op.axis[0], factor=4)
    s[C].vectorize(inner)
    mod = _build(s, [A, B, alpha, C], "pow_fmod")
    a, b = np.linspace(0.1, 3, 20, dtype="float32"), np.linspace(-1, 2, 20, dtype="float32")
    out = pytvm.nd.empty((20,), "float32")
    mod["pow_fmod"](pytvm.nd.array(a), pytvm.nd.array(b), 2.5, out)
    np.testing.assert_allclose(out.numpy(), a**b + np.fmod(a, 0.75) * 2.5, rtol=1e-5)


def test_comparisons_store_bools_and_casts_truncate() -> None:
    A = te.placeholder((19,), name="A")
    P = te.compute((19,), lambda i: A[i] > 0.5, name="P")
    Q = te.compute((19,), lambda i: (A[i] * 100.0).astype("int8"), name="Q")
    R = te.compute((19,), lambda i: te.if_then_else(P[i], Q[i], (-Q[i]).astype("int8")), name="R")
    s = te.create_schedule([P.op, Q.op, R.op])
    mod = _build(s, [A, P, Q, R], "bools")
    a = np.linspace(-1.2, 1.2, 19).astype("float32")
    p, q, r = (pytvm.nd.empty((19,), d) for d in ("bool", "int8", "int8"))
    mod["bools"](pytvm.nd.array(a), p, q, r)
    np.testing.assert_array_equal(p.numpy(), a > 0.5)
    np.testing.assert_array_equal(q.numpy(), (a * 100).astype("int8"))
    np.testing.assert_array_equal(r.numpy(), np.where(a > 0.5, q.numpy(), -q.numpy()))


@pytest.mark.parametrize("vectorize", [False, True])
def test_integer_floordiv_and_floormod_round_toward_negative_infinity(vectorize: bool) -> None:
    A = te.placeholder((24,), "int32", name="A")
    B = te.placeholder((24,), "int32", name="B")
    Q = te.compute((24,), lambda i: te.floordiv(A[i], B[i]), name="Q")
    R = te.compute((24,), lambda i: te.floormod(A[i], B[i]), name="R")
    K = te.compute((24,), lambda i: te.floordiv(A[i] - 7, 3) + te.floormod(A[i], -5), name="K")
    s = te.create_schedule([Q.op, R.op, K.op])
    if vectorize:
        for t in (Q, R, K):
            s[t].vectorize(s[t].split(t.op.axis[0], factor=8)[1])
    mod = _build(s, [A, B, Q, R, K], "floor_ops")
    a = np.arange(-12, 12, dtype="int32")
    b = np.array([3, -3, 5, -5, 7, -2] * 4, dtype="int32")
    q, r, k = (pytvm.nd.empty((24,), "int32") for _ in range(3))
    mod["floor_ops"](pytvm.nd.array(a), pytvm.nd.array(b), q, r, k)
    np.testing.assert_array_equal(q.numpy(), a // b)
    np.testing.assert_array_equal(r.numpy(), a % b)
    np.testing.assert_array_equal(k.numpy(), (a - 7) // 3 + a % -5)


def test_if_then_else_reads_only_the_taken_side() -> None:
    # The last element's neighbour is past the end of A: it must never be read.
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: te.if_then_else(i < n - 1, A[i + 1] - A[i], 0.0), name="B")
    mod = _build(te.create_schedule(B.op), [A, B], "diff")
    for size in (1, 9):
        a = np.cumsum(np.arange(size, dtype="float32"))
        out = pytvm.nd.empty((size,), "float32")
        mod["diff"](pytvm.nd.array(a), out)
        np.testing.assert_array_equal(out.numpy(), np.append(np.diff(a), 0.0))


# ----------------------------------------------------------------------------- schedules


def test_tiled_matmul_with_parallel_vector_and_local_cache() -> None:
    k = te.reduce_axis((0, 29), name="k")
    X = te.placeholder((37, 29), name="X")
    W = te.placeholder((29, 45), name="W")
    Y = te.compute((37, 45), lambda i, j: te.sum(X[i, k] * W[k, j], axis=k), name="Y")
    s = te.create_schedule(Y.op)
    YL = s.cache_write(Y, "local")
    yo, yi = s[Y].split(Y.op.axis[1], factor=8)
    s[YL].compute_at(s[Y], yo)
    s[Y].vectorize(yi)
    s[Y].parallel(Y.op.axis[0])
    mod = _build(s, [X, W, Y], "tiled")
    assert ".parallel1" in mod.get_source()
    rng = np.random.default_rng(1)
    x, w = rng.standard_normal((37, 29), "float32"), rng.standard_normal((29, 45), "float32")
    out = pytvm.nd.empty((37, 45), "float32")
    mod["tiled"](pytvm.nd.array(x), pytvm.nd.array(w), out)
    np.testing.assert_allclose(out.numpy(), x @ w, rtol=1e-4, atol=1e-4)


def _matmul(m: int, n: int, k_extent: int) -> tuple[te.Tensor, te.Tensor, te.Tensor]:
    k = te.reduce_axis((0, k_extent), name="k")
    A = te.placeholder((m, k_extent), name="A")
    B = te.placeholder((k_extent, n), name="B")
    return A, B, te.compute((m, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")


def _edge_tiles() -> tuple[te.Schedule, list[te.Tensor]]:
    A, B, C = _matmul(37, 45, 29)
    s = te.create_schedule(C.op)
    CC = s.cache_write(C, "local")
    _, yo, _, yi = s[C].tile(C.op.axis[0], C.op.axis[1], 8, 16)
    s[CC].compute_at(s[C], yo)
    xc, yc = s[CC].op.axis
    ko, ki = s[CC].split(s[CC].op.reduce_axis[0], factor=4)
    s[CC].reorder(ko, xc, ki, yc)
    s[CC].vectorize(yc)
    s[C].vectorize(yi)
    return s, [A, B, C]


def _cached_panel() -> tuple[te.Schedule, list[te.Tensor]]:
    A, B, C = _matmul(64, 80, 96)
    s = te.create_schedule(C.op)
    BB = s.cache_read(B, "global", [C.op])
    io, ii = s[C].split(C.op.axis[0], factor=8)
    jo, ji = s[C].split(C.op.axis[1], factor=32)
    s[C].reorder(jo, io, C.op.reduce_axis[0], ii, ji)
    s[BB].compute_at(s[C], jo)
    s[C].unroll(ii)
    s[C].vectorize(ji)
    return s, [A, B, C]


@pytest.mark.parametrize("schedule", [_edge_tiles, _cached_panel], ids=["edges", "panel"])
def test_partial_tiles_stay_in_bounds(schedule: Callable[[], Any]) -> None:
    s, (A, B, C) = schedule()
    mod = _build(s, [A, B, C], "tiles")
    (m, k), n = (int(d) for d in A.shape), int(B.shape[1])
    rng = np.random.default_rng(0)
    a, b = rng.random((m, k), dtype=np.float32), rng.random((k, n), dtype=np.float32)
    c = pytvm.nd.empty((m, n), "float32")
    mod["tiles"](pytvm.nd.array(a), pytvm.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-4)


def test_topi_x86_matmul_schedule_at_a_size_that_runs_in_parallel() -> None:
    with Target(LLVM):
        A = te.placeholder((96, 80), name="A")
        B = te.placeholder((80, 136), name="B")
        C = topi.nn.matmul(A, B)
        mod = _build(topi.x86.schedule_matmul([C]), [A, B, C], "mm")
    rng = np.random.default_rng(2)
    a, b = rng.standard_normal((96, 80), "float32"), rng.standard_normal((80, 136), "float32")
    out = pytvm.nd.empty((96, 136), "float32")
    mod["mm"](pytvm.nd.array(a), pytvm.nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), a @ b, rtol=1e-4, atol=1e-4)


def _workspace_kernel() -> tuple[te.Schedule, list[te.Tensor]]:
    n = te.var("n")
    P = te.placeholder((n,), name="P")
    Q = te.compute((n,), lambda i: te.exp(P[i]) * 2.0, name="Q")  # an intermediate: a workspace
    R = te.compute((n,), lambda i: Q[n - 1 - i] + P[i], name="R")
    return te.create_schedule(R.op), [P, R]


def test_workspaces_of_symbolic_size() -> None:
    s, args = _workspace_kernel()
    mod = _build(s, args, "ws")
    assert "pytvm_ws_alloc" in mod.get_source()
    for size in (3, 20000):  # 80 KB: far beyond any stack buffer
        p = np.linspace(-1, 1, size).astype("float32")
        out = pytvm.nd.empty((size,), "float32")
        mod["ws"](pytvm.nd.array(p), out)
        np.testing.assert_allclose(out.numpy(), 2 * np.exp(p)[::-1] + p, rtol=1e-6)


def test_symbolic_shapes_bind_from_the_arguments() -> None:
    n = te.var("n")
    x = te.placeholder((n, 37), name="x")
    b = te.placeholder((37,), name="b")
    y = topi.nn.relu(topi.add(x, b))
    mod = _build(topi.generic.schedule_injective(y), [x, b, y], "sym_relu")
    rng = np.random.default_rng(3)
    bv = rng.standard_normal(37, "float32")
    for rows in (1, 5):
        xv = rng.standard_normal((rows, 37), "float32")
        out = pytvm.nd.empty((rows, 37), "float32")
        mod["sym_relu"](pytvm.nd.array(xv), pytvm.nd.array(bv), out)
        np.testing.assert_allclose(out.numpy(), np.maximum(xv + bv, 0), rtol=1e-6)
    with pytest.raises(
        ValueError, match=r"sym_relu: argument T_relu: expected shape \(5, 37\), got"
    ):
        mod["sym_relu"](pytvm.nd.array(xv), pytvm.nd.array(bv), pytvm.nd.empty((4, 37), "float32"))


# ----------------------------------------------------------------------------- bad calls


def _bad_calls() -> list[tuple[str, Callable[[Any], object]]]:
    a = pytvm.nd.array(np.zeros((4, 6), "float32"))
    b = pytvm.nd.empty((4, 6), "float32")
    return [
        ("too few arguments", lambda f: f(a, 1.0)),
        ("too many arguments", lambda f: f(a, 1.0, b, b)),
        ("wrong ndim", lambda f: f(pytvm.nd.empty((24,), "float32"), 1.0, b)),
        ("wrong shape", lambda f: f(a, 1.0, pytvm.nd.empty((4, 7), "float32"))),
        ("wrong dtype", lambda f: f(a, 1.0, pytvm.nd.empty((4, 6), "float64"))),
        ("wrong vector dtype", lambda f: f(a, 1.0, pytvm.nd.empty((4, 6), "int8"))),
        ("an int for an array", lambda f: f(a, 1.0, 3)),
        ("None for an array", lambda f: f(None, 1.0, b)),
        ("a str for a float", lambda f: f(a, "x", b)),
    ]


def test_bad_calls_raise_the_c_paths_messages() -> None:
    def kernel() -> tuple[te.Schedule, list[Any]]:
        scale = te.var("scale", "float32")
        A = te.placeholder((4, 6), name="A")
        B = te.compute((4, 6), lambda i, j: A[i, j] * scale, name="B")
        return te.create_schedule(B.op), [A, scale, B]

    via_llvm = _build(*kernel(), "scale")
    via_c = _build(*kernel(), "scale", target="c")
    for what, call in _bad_calls():
        errors = []
        for mod in (via_llvm, via_c):
            with pytest.raises(Exception) as info:
                call(mod["scale"])
            errors.append((type(info.value), str(info.value)))
        assert errors[0] == errors[1], what
        assert errors[0][1].startswith("scale: "), errors[0]


# ----------------------------------------------------------------------------- export


def test_export_library_load_module_and_time(tmp_path: Path) -> None:
    s, args = _workspace_kernel()
    mod = _build(s, args, "main")  # exported as the library's entry function
    mod.export_library(tmp_path / "ws.so")
    mod.save(tmp_path / "ws.ll")
    mod.save(tmp_path / "ws.o")
    assert (tmp_path / "ws.ll").read_text() == mod.get_source()
    assert (tmp_path / "ws.o").read_bytes()[:4] == b"\x7fELF"
    with pytest.raises(ValueError, match="an LLVM-built module has no C source"):
        mod.save(tmp_path / "ws.c")
    loaded = pytvm.runtime.load_module(tmp_path / "ws.so")
    p = np.linspace(-1, 1, 50).astype("float32")
    for m in (mod, loaded):
        out = pytvm.nd.empty((50,), "float32")
        m(pytvm.nd.array(p), out)
        np.testing.assert_allclose(out.numpy(), 2 * np.exp(p)[::-1] + p, rtol=1e-6)
        timing = m.time_evaluator("main", pytvm.cpu(), number=5, repeat=2)(pytvm.nd.array(p), out)
        assert len(timing.results) == 2
    with pytest.raises(ValueError, match=r"main: argument R: expected shape \(50,\), got \(3,\)"):
        loaded["main"](pytvm.nd.array(p), pytvm.nd.empty((3,), "float32"))


_TVM_SCRIPT = """
import numpy as np, tvm
lib = tvm.runtime.load_module({path!r})
dev = tvm.cpu()
x = np.linspace(-1, 1, 64).astype("float32")
a, y = tvm.runtime.tensor(x, dev), tvm.runtime.empty((64,), "float32", dev)
lib["kernel"](a, y)
np.testing.assert_allclose(y.numpy(), np.exp(x)[::-1] * 2 + x, rtol=1e-6)
try:
    lib["kernel"](a, tvm.runtime.empty((65,), "float32", dev))
except Exception as err:
    print(type(err).__name__, err)
"""


def test_a_stock_tvm_process_runs_an_exported_parallel_kernel_with_a_workspace(
    tmp_path: Path,
) -> None:
    pytest.importorskip("tvm")
    P = te.placeholder((64,), name="P")
    Q = te.compute((64,), lambda i: te.exp(P[i]) * 2.0, name="Q")
    R = te.compute((64,), lambda i: Q[63 - i] + P[i], name="R")
    s = te.create_schedule(R.op)
    s[R].parallel(s[R].split(R.op.axis[0], factor=16)[0])
    _build(s, [P, R], "kernel").export_library(tmp_path / "k.so")
    script = _TVM_SCRIPT.format(path=str(tmp_path / "k.so"))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "ValueError kernel: argument R: expected shape (64,), got (65,)" in result.stdout


_NO_CC_SCRIPT = """
import numpy as np, pytvm
from pytvm import te
from pytvm.ffi.libinfo import find_cc
assert find_cc() is None
A = te.placeholder((100,), name="A")
B = te.compute((100,), lambda i: te.tanh(A[i]) * 2.0, name="B")
s = te.create_schedule(B.op)
s[B].vectorize(s[B].split(B.op.axis[0], factor=8)[1])
mod = pytvm.build(s, [A, B], target="llvm -backend=llvmlite", name="f", cache_dir={cache!r})
x = np.linspace(-2, 2, 100).astype("float32")
out = pytvm.nd.empty((100,), "float32")
mod["f"](pytvm.nd.array(x), out)
np.testing.assert_allclose(out.numpy(), 2 * np.tanh(x), rtol=1e-6)
print("built and ran without a C compiler")
"""


def test_building_needs_no_c_compiler(tmp_path: Path) -> None:
    runtime_library()  # the host runtime, built once per install, is cached
    env = dict(os.environ, CC="/nonexistent/cc")
    script = textwrap.dedent(_NO_CC_SCRIPT.format(cache=str(tmp_path)))
    result = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "built and ran without a C compiler" in result.stdout


# ----------------------------------------------------------------------------- targets


def test_target_backend_option() -> None:
    assert Target("llvm -backend=llvmlite").backend == "llvmlite"
    assert Target("llvm -backend=c").backend == "c"
    assert Target("c").backend == "c"
    assert Target("llvm --system-lib").backend == "c"
    assert Target("llvm").backend in ("c", "llvmlite")
    with pytest.raises(ValueError, match="unknown backend 'gcc'"):
        Target("llvm -backend=gcc")
    with pytest.raises(ValueError, match="kind 'c' always builds through the C compiler"):
        Target("c -backend=llvmlite")
    with pytest.raises(ValueError, match="builds for this host only"):
        Target("llvm -backend=llvmlite --system-lib")


def test_c_compiler_options_pick_the_c_path() -> None:
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] * 3.0, name="B")
    s = te.create_schedule(B.op)
    built = pytvm.build(s, [A, B], target="llvm", name="triple", options=["-DUNUSED=1"])
    assert not isinstance(built, LLVMModule)
    with pytest.raises(ValueError, match="cc= and options= configure the C compiler"):
        pytvm.build(s, [A, B], target=LLVM, name="triple", options=["-DUNUSED=1"])


def test_loop_pragmas_become_llvm_loop_metadata() -> None:
    """``pragma(axis, "loop_vectorize"/"loop_unroll", False)`` reach LLVM as the loop's
    ``llvm.loop`` options (one self-referential loop ID per loop); the kernel still computes.
    """
    a = te.placeholder((64, 37), name="a")
    b = te.compute(a.shape, lambda i, j: a[i, j] * 2.0 + 1.0, name="b")
    s = te.create_schedule(b.op)
    i, j = s[b].op.axis
    s[b].pragma(i, "loop_unroll", False)
    s[b].pragma(j, "loop_vectorize", False)
    lib = _build(s, [a, b], "hinted")
    source = lib.get_source("ll")
    assert source.count("!llvm.loop !") == 2
    assert '!"llvm.loop.vectorize.enable", i1 false' in source
    assert '!"llvm.loop.unroll.disable"' in source
    x = np.random.default_rng(0).standard_normal((64, 37)).astype("float32")
    out = pytvm.runtime.empty((64, 37), "float32")
    lib["hinted"](pytvm.runtime.ndarray.array(x), out)
    np.testing.assert_allclose(out.numpy(), x * 2 + 1, rtol=1e-6)


def test_a_library_of_many_kernels_is_compiled_in_parts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On more than one core, a library of several kernels is optimised in parts by worker
    threads and linked into one object: every kernel runs, the library exports as one shared
    object, and a rebuild takes the object from the cache.
    """
    from pytvm.driver import llvm_build
    from pytvm.tir.function import IRModule

    monkeypatch.setattr(llvm_build, "_cores", lambda target: 2)
    functions: dict[str, Any] = {}
    for k in range(6):
        A = te.placeholder((64,), name="A")
        factor = float(k + 1)
        B = te.compute((64,), lambda i: A[i] * factor, name="B")
        s = te.create_schedule(B.op)
        functions.update(pytvm.lower(s, [A, B], name=f"scale{k}").functions)
    before = compile_stats().compiled
    lib = pytvm.build(IRModule(functions), target=LLVM, cache_dir=tmp_path)
    assert compile_stats().compiled == before + 1
    assert lib.get_source().count("; part ") > 1
    x = np.arange(64, dtype="float32")
    lib.export_library(tmp_path / "parts.so")
    loaded = pytvm.runtime.load_module(tmp_path / "parts.so")
    for k in range(6):
        for mod in (lib, loaded):
            out = pytvm.nd.empty((64,), "float32")
            mod[f"scale{k}"](pytvm.nd.array(x), out)
            np.testing.assert_array_equal(out.numpy(), x * (k + 1))
    again = pytvm.build(IRModule(functions), target=LLVM, cache_dir=tmp_path)
    assert compile_stats().compiled == before + 1  # the same object, from the cache
    assert again.get_source() == lib.get_source()
