from __future__ import annotations

from collections.abc import Callable

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytvm import tir
from pytvm.tir.transform import lower_pipeline

S, V, P = tir.ForKind.SERIAL, tir.ForKind.VECTORIZED, tir.ForKind.PARALLEL
U = tir.ForKind.UNROLLED


def _module() -> tuple[tir.IRModule, tir.Var]:
    n = tir.Var("n")
    A = tir.decl_buffer((n, 4), "float32", "A")
    B = tir.decl_buffer((n, 4), "float32", "B")
    T = tir.decl_buffer((n, 4), "float32", "T")
    io, ii, j, k, m = (tir.Var(c) for c in ("io", "ii", "j", "k", "m"))
    row = io * 8 + ii
    guard = tir.Call("bool", "tir.likely", (row < n,))
    body = tir.Allocate(T, tir.seq(
        tir.For(io, tir.const(0), (n + 7) // 8, P, tir.For(ii, tir.const(0), tir.const(8), S,
            tir.IfThenElse(guard, tir.For(j, tir.const(0), tir.const(4), V,
                tir.BufferStore(T, tir.sigmoid(A.vload((row, j))), (row, j)))))),
        tir.For(k, tir.const(0), n, S, tir.For(m, tir.const(0), tir.const(4), tir.ForKind.UNROLLED,
            tir.BufferStore(B, T.vload((k, m)), (k, m)))),
    ))  # fmt: skip
    func = tir.PrimFunc((A.data, B.data), body, {A.data: A, B.data: B}, {"global_symbol": "f"})
    return tir.IRModule.from_expr(func), n


def test_full_pipeline_output_is_what_c_needs() -> None:
    mod, _ = _module()
    text = str(lower_pipeline(mod))
    assert "likely" not in text and "sigmoid" not in text and "floordiv" not in text
    assert "ramp(" in text  # the vectorized row
    assert "unrolled" not in text
    assert "tir.exp" in text or "exp(" in text


# ---------------------------------------------------------------------- the pipeline keeps meaning


def _likely(cond: tir.PrimExpr) -> tir.PrimExpr:
    return tir.Call("bool", "tir.likely", (cond,))


def _same_result(
    run_tir: Callable[..., None], func: tir.PrimFunc, arrays: list[np.ndarray], **scalars: int
) -> tir.PrimFunc:
    lowered = lower_pipeline(tir.IRModule.from_expr(func))[func.name]
    expect = [a.copy() for a in arrays]
    got = [a.copy() for a in arrays]
    run_tir(func, expect, scalars)
    run_tir(lowered, got, scalars)
    for e, g in zip(expect, got, strict=True):
        np.testing.assert_allclose(g, e, rtol=1e-6)
    return lowered


def test_two_dim_guards_on_symbolic_shape(run_tir: Callable[..., None]) -> None:
    n, m = tir.Var("n"), tir.Var("m")
    A = tir.decl_buffer((n, m), "float32", "A")
    C = tir.decl_buffer((n, m), "float32", "C")
    io, ii, jo, ji = (tir.Var(c) for c in ("io", "ii", "jo", "ji"))
    i, j = io * 4 + ii, jo * 8 + ji
    guard = tir.And(_likely(i < n), _likely(j < m))
    store = tir.BufferStore(C, A.vload((i, j)) * 2.0 + 1.0, (i, j))
    inner = tir.For(ji, tir.const(0), tir.const(8), V, tir.IfThenElse(guard, store))
    body = tir.For(io, tir.const(0), (n + 3) // 4, P,
        tir.For(jo, tir.const(0), (m + 7) // 8, S,
            tir.For(ii, tir.const(0), tir.const(4), S, inner)))  # fmt: skip
    func = tir.PrimFunc((A.data, C.data), body, {A.data: A, C.data: C}, {"global_symbol": "g"})
    rng = np.random.default_rng(0)
    for rows, cols in ((5, 19), (8, 16), (3, 7)):
        a = rng.standard_normal((rows, cols)).astype("float32")
        lowered = _same_result(run_tir, func, [a, np.zeros_like(a)])
    text = str(lowered)
    assert "ramp(" in text  # the guard-free main part is vectorized


def test_stages_unroll_storage_and_intrinsics(run_tir: Callable[..., None]) -> None:
    A = tir.decl_buffer((6, 4), "float32", "A")
    B = tir.decl_buffer((6,), "float32", "B")
    T1 = tir.decl_buffer((6, 4), "float32", "T1")
    T2 = tir.decl_buffer((6, 4), "float32", "T2")
    i, j, k, x, y, r = (tir.Var(c) for c in "ijkxyr")
    body = tir.Allocate(T1, tir.Allocate(T2, tir.seq(
        tir.For(i, tir.const(0), tir.const(6), P, tir.For(j, tir.const(0), tir.const(4), V,
            tir.BufferStore(T1, tir.sigmoid(A.vload((i, j))), (i, j)))),
        tir.For(x, tir.const(0), tir.const(6), S, tir.For(y, tir.const(0), tir.const(4), U,
            tir.BufferStore(T2, tir.rsqrt(T1.vload((x, y)) + 1.0), (x, y)))),
        tir.For(k, tir.const(0), tir.const(6), S, tir.seq(
            tir.BufferStore(B, tir.const(0.0), (k,)),
            tir.For(r, tir.const(0), tir.const(4), V,  # a reduction: stays serial
                tir.BufferStore(B, B.vload((k,)) + T2.vload((k, r)), (k,))))),
    )))  # fmt: skip
    func = tir.PrimFunc((A.data, B.data), body, {A.data: A, B.data: B}, {"global_symbol": "h"})
    a = np.random.default_rng(1).standard_normal((6, 4)).astype("float32")
    lowered = _same_result(run_tir, func, [a, np.zeros(6, "float32")])
    text = str(lowered)
    assert "sigmoid" not in text and "rsqrt" not in text and "unrolled" not in text


def test_negative_index_division(run_tir: Callable[..., None]) -> None:
    O = tir.decl_buffer((12,), "int32", "O")  # noqa: E741
    i = tir.Var("i")
    value = (i - 5) // 3 * 10 + (i - 5) % 3 + (i * 4 + 3) // 4
    loop = tir.For(i, tir.const(0), tir.const(12), S, tir.BufferStore(O, value, (i,)))
    func = tir.PrimFunc((O.data,), loop, {O.data: O}, {"global_symbol": "d"})
    lowered = _same_result(run_tir, func, [np.zeros(12, "int32")])
    assert "floordiv" not in str(lowered)


# ---------------------------------------------------------------------- random kernels

_OUTER_KINDS = (S, P, U)
_INNER_KINDS = (S, V, U)


@st.composite
def _kernels(draw: st.DrawFn) -> tuple[tir.PrimFunc, int]:
    size = draw(st.integers(1, 20))
    symbolic = draw(st.booleans())
    n: tir.PrimExpr = tir.Var("n") if symbolic else tir.const(size)
    factor = draw(st.sampled_from([1, 2, 3, 4, 8]))
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    T = tir.decl_buffer((n,), "float32", "T")
    stages = []
    for dst, src, name in ((T, A, "t"), (B, T, "b")):
        io, ii = tir.Var(name + "o"), tir.Var(name + "i")
        idx = io * factor + ii
        x = src.vload((idx,))
        value = draw(st.sampled_from([
            x * 2.0 + 1.0,
            tir.sigmoid(x),
            tir.max(x, tir.const(0.0)),
            tir.Select(x > 0.0, x, x * 0.5),
            x + tir.Cast("float32", idx // 3 - idx % 5),
        ]))  # fmt: skip
        store: tir.Stmt = tir.BufferStore(dst, value, (idx,))
        if symbolic or size % factor or draw(st.booleans()):
            store = tir.IfThenElse(tir.Call("bool", "tir.likely", (idx < n,)), store)
        inner = tir.For(ii, tir.const(0), tir.const(factor), draw(st.sampled_from(_INNER_KINDS)),
                        store)  # fmt: skip
        outer_kind = draw(st.sampled_from(_OUTER_KINDS))
        if symbolic and outer_kind is U:
            outer_kind = S
        stages.append(tir.For(io, tir.const(0), (n + factor - 1) // factor, outer_kind, inner))
    body = tir.Allocate(T, tir.seq(*stages))
    func = tir.PrimFunc((A.data, B.data), body, {A.data: A, B.data: B}, {"global_symbol": "k"})
    return func, size


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_kernels(), st.integers(0, 2**16))
def test_random_kernels_keep_their_results(
    run_tir: Callable[..., None], kernel: tuple[tir.PrimFunc, int], seed: int
) -> None:
    func, size = kernel
    a = np.random.default_rng(seed).standard_normal(size).astype("float32")
    _same_result(run_tir, func, [a, np.zeros(size, "float32")])


@st.composite
def _matmuls(draw: st.DrawFn) -> tuple[tir.PrimFunc, tuple[int, int, int]]:
    m, n, k = draw(st.integers(1, 6)), draw(st.integers(1, 12)), draw(st.integers(1, 5))
    A = tir.decl_buffer((m, k), "float32", "A")
    B = tir.decl_buffer((k, n), "float32", "B")
    C = tir.decl_buffer((m, n), "float32", "C")
    f = draw(st.sampled_from([1, 4, 8]))
    i, jo, ji, r = tir.Var("i"), tir.Var("jo"), tir.Var("ji"), tir.Var("r")
    j = jo * f + ji
    guard = tir.Call("bool", "tir.likely", (j < n,))
    inner_kind = draw(st.sampled_from(_INNER_KINDS))
    init = tir.For(ji, tir.const(0), tir.const(f), inner_kind,
                   tir.IfThenElse(guard, tir.BufferStore(C, tir.const(0.0), (i, j))))  # fmt: skip
    update = tir.BufferStore(C, C.vload((i, j)) + A.vload((i, r)) * B.vload((r, j)), (i, j))
    red = tir.For(r, tir.const(0), tir.const(k), draw(st.sampled_from((S, U))),
                  tir.For(ji, tir.const(0), tir.const(f), inner_kind,
                          tir.IfThenElse(guard, update)))  # fmt: skip
    body = tir.For(i, tir.const(0), tir.const(m), draw(st.sampled_from(_OUTER_KINDS)),
                   tir.For(jo, tir.const(0), tir.const((n + f - 1) // f), S,
                           tir.seq(init, red)))  # fmt: skip
    func = tir.PrimFunc(
        (A.data, B.data, C.data), body, {A.data: A, B.data: B, C.data: C}, {"global_symbol": "mm"}
    )
    return func, (m, n, k)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(_matmuls())
def test_random_matmuls_keep_their_results(
    run_tir: Callable[..., None], kernel: tuple[tir.PrimFunc, tuple[int, int, int]]
) -> None:
    func, (m, n, k) = kernel
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    a = rng.standard_normal((m, k)).astype("float32")
    b = rng.standard_normal((k, n)).astype("float32")
    c = np.zeros((m, n), "float32")
    lowered = _same_result(run_tir, func, [a, b, c])
    out = c.copy()
    run_tir(lowered, [a, b, out])
    np.testing.assert_allclose(out, a @ b, rtol=1e-5, atol=1e-5)
