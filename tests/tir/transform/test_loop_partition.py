from __future__ import annotations

from collections.abc import Callable

import numpy as np

from pytvm import tir
from pytvm.tir.transform import LoopPartition

S, V, P = tir.ForKind.SERIAL, tir.ForKind.VECTORIZED, tir.ForKind.PARALLEL


def _likely(cond: tir.PrimExpr) -> tir.PrimExpr:
    return tir.Call("bool", "tir.likely", (cond,))


def _mod(body: tir.Stmt, *bufs: tir.Buffer) -> tir.IRModule:
    params = tuple(b.data for b in bufs)
    func = tir.PrimFunc(params, body, {b.data: b for b in bufs}, {"global_symbol": "f"})
    return tir.IRModule.from_expr(func)


def _split_loop(
    n: tir.PrimExpr, extent: tir.PrimExpr, kind: tir.ForKind
) -> tuple[tir.IRModule, tir.Var, tir.Var, tir.Buffer, tir.Buffer]:
    A = tir.decl_buffer((n,), "float32", "A")
    B = tir.decl_buffer((n,), "float32", "B")
    io, ii = tir.Var("io"), tir.Var("ii")
    idx = io * 8 + ii
    store = tir.BufferStore(B, A.vload((idx,)) * 2.0, (idx,))
    body = tir.For(
        io, tir.const(0), extent, P,
        tir.For(ii, tir.const(0), tir.const(8), kind, tir.IfThenElse(_likely(idx < n), store)),
    )  # fmt: skip
    return _mod(body, A, B), io, ii, A, B


def test_symbolic_extent_splits_into_main_and_guarded_tail() -> None:
    n = tir.Var("n")
    before, io, ii, A, B = _split_loop(n, (n + 7) // 8, V)
    after = LoopPartition(before)
    io2 = tir.Var("io")
    idx, idx2 = io * 8 + ii, io2 * 8 + ii
    main = tir.For(
        io, tir.const(0), n // 8, P,
        tir.For(ii, tir.const(0), tir.const(8), V,
                tir.IfThenElse(tir.const(True), tir.BufferStore(B, A.vload((idx,)) * 2.0, (idx,)))),
    )  # fmt: skip
    tail = tir.For(  # at most one iteration: serial, not a parallel launch
        io2, n // 8, (n + 7) // 8 - n // 8, S,
        tir.For(ii, tir.const(0), tir.const(8), V,
                tir.IfThenElse(idx2 < n, tir.BufferStore(B, A.vload((idx2,)) * 2.0, (idx2,)))),
    )  # fmt: skip
    tir.assert_structural_equal(after["f"].body, tir.seq(main, tail), map_free_vars=True)


def test_constant_non_divisible_extent() -> None:
    before, *_ = _split_loop(tir.const(20), tir.const(3), S)
    after = LoopPartition(before)["f"].body
    assert isinstance(after, tir.SeqStmt)
    main, tail = after.seq
    assert isinstance(main, tir.For) and isinstance(tail, tir.For)
    assert (main.extent.value, tail.min.value, tail.extent.value) == (2, 2, 1)  # type: ignore[attr-defined]
    assert "likely" not in str(after)


def test_divisible_guard_drops_tail() -> None:
    before, *_ = _split_loop(tir.const(24), tir.const(3), S)
    after = LoopPartition(before)["f"].body
    assert isinstance(after, tir.For)
    assert after.extent.value == 3  # type: ignore[attr-defined]
    inner = after.body
    assert isinstance(inner, tir.For) and isinstance(inner.body, tir.IfThenElse)
    tir.assert_structural_equal(inner.body.condition, tir.const(True))


def test_lower_bound_guard_gives_suffix_main() -> None:
    A = tir.decl_buffer((16,), "float32", "A")
    i = tir.Var("i")
    body = tir.For(
        i, tir.const(0), tir.const(16), S,
        tir.IfThenElse(_likely(i >= 3), tir.BufferStore(A, tir.const(1.0), (i,))),
    )  # fmt: skip
    after = LoopPartition(_mod(body, A))["f"].body
    assert isinstance(after, tir.SeqStmt)
    tail, main = after.seq
    assert isinstance(main, tir.For) and isinstance(tail, tir.For)
    assert (tail.extent.value, main.min.value, main.extent.value) == (3, 3, 13)  # type: ignore[attr-defined]


def test_guard_not_on_loop_var_is_kept_and_likely_stripped() -> None:
    A = tir.decl_buffer((16,), "float32", "A")
    i, m = tir.Var("i"), tir.Var("m")
    body = tir.For(
        i, tir.const(0), tir.const(16), S,
        tir.IfThenElse(_likely(A.vload((i,)) > 0.0), tir.BufferStore(A, tir.const(1.0), (i,))),
    )  # fmt: skip
    del m
    after = LoopPartition(_mod(body, A))["f"].body
    expected = tir.For(
        i, tir.const(0), tir.const(16), S,
        tir.IfThenElse(A.vload((i,)) > 0.0, tir.BufferStore(A, tir.const(1.0), (i,))),
    )  # fmt: skip
    tir.assert_structural_equal(after, expected)


def test_likely_of_conjunction_is_cut_per_bound(run_tir: Callable[..., None]) -> None:
    n, m = tir.Var("n"), tir.Var("m")
    A = tir.decl_buffer((n, m), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    guard = _likely(tir.And(i < n, j < m))
    body = tir.For(i, tir.const(0), tir.const(8), S, tir.For(j, tir.const(0), tir.const(8), S,
                   tir.IfThenElse(guard, tir.BufferStore(A, tir.const(1.0), (i, j)))))  # fmt: skip
    after = LoopPartition(_mod(body, A))["f"].body
    # i is cut at min(n, 8): a main part whose only guard left is j < m, and a tail
    assert isinstance(after, tir.SeqStmt) and len(after.seq) == 2
    assert "likely" not in str(after)
    for rows, cols in ((3, 5), (8, 8), (10, 2)):
        a, b = np.zeros((rows, cols), "float32"), np.zeros((rows, cols), "float32")
        run_tir(_mod(body, A)["f"], [a])
        run_tir(_mod(after, A)["f"], [b])
        np.testing.assert_array_equal(a, b)
