from __future__ import annotations

from pytvm import tir
from pytvm.tir.transform import Simplify

S = tir.ForKind.SERIAL


def _mod(body: tir.Stmt, *bufs: tir.Buffer) -> tir.IRModule:
    func = tir.PrimFunc(
        tuple(b.data for b in bufs), body, {b.data: b for b in bufs}, {"global_symbol": "f"}
    )
    return tir.IRModule.from_expr(func)


def _body(body: tir.Stmt, *bufs: tir.Buffer) -> tir.Stmt:
    return Simplify(_mod(body, *bufs))["f"].body


def test_index_division_under_loop_ranges() -> None:
    A = tir.decl_buffer((64,), "float32", "A")
    i, j = tir.Var("i"), tir.Var("j")
    fused = i * 4 + j
    before = tir.For(i, tir.const(0), tir.const(16), S, tir.For(j, tir.const(0), tir.const(4), S,
        tir.BufferStore(A, tir.const(1.0), ((fused // 4) * 4 + fused % 4 + 0 * i,))))  # fmt: skip
    expected = tir.For(i, tir.const(0), tir.const(16), S, tir.For(j, tir.const(0), tir.const(4), S,
        tir.BufferStore(A, tir.const(1.0), (i * 4 + j,))))  # fmt: skip
    tir.assert_structural_equal(_body(before, A), expected)


def test_redundant_guards_removed_and_kept() -> None:
    n = tir.Var("n")
    A = tir.decl_buffer((n,), "float32", "A")
    i = tir.Var("i")
    store = tir.BufferStore(A, tir.const(1.0), (i,))
    before = tir.For(i, tir.const(0), n, S, tir.seq(
        tir.IfThenElse(i < n, store),  # always true in the loop
        tir.IfThenElse(i >= n, store),  # never true
        tir.IfThenElse(i < 5, tir.IfThenElse(i < 5, store)),  # repeated guard
    ))  # fmt: skip
    expected = tir.For(i, tir.const(0), n, S, tir.seq(store, tir.IfThenElse(i < 5, store)))
    tir.assert_structural_equal(_body(before, A), expected)


def test_trivial_loops_and_constant_folding() -> None:
    A = tir.decl_buffer((8,), "float32", "A")
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    before = tir.seq(
        tir.For(i, tir.const(2), tir.const(1), S, tir.BufferStore(A, tir.const(1.0), (i * 2,))),
        tir.For(j, tir.const(0), tir.const(0), S, tir.BufferStore(A, tir.const(2.0), (j,))),
        tir.For(k, tir.const(0), tir.const(3), S,
                tir.BufferStore(A, tir.const(3.0), (tir.min(k, 7) + tir.max(k - k, 0),))),
    )  # fmt: skip
    expected = tir.seq(
        tir.BufferStore(A, tir.const(1.0), (tir.const(4),)),
        tir.For(k, tir.const(0), tir.const(3), S, tir.BufferStore(A, tir.const(3.0), (k,))),
    )
    tir.assert_structural_equal(_body(before, A), expected)


def test_likely_of_decided_condition_folds() -> None:
    A = tir.decl_buffer((8,), "float32", "A")
    i = tir.Var("i")
    likely = tir.Call("bool", "tir.likely", (i < 8,))
    before = tir.For(i, tir.const(0), tir.const(8), S,
                     tir.IfThenElse(likely, tir.BufferStore(A, tir.const(1.0), (i,))))  # fmt: skip
    expected = tir.For(i, tir.const(0), tir.const(8), S, tir.BufferStore(A, tir.const(1.0), (i,)))
    tir.assert_structural_equal(_body(before, A), expected)
