from __future__ import annotations

from pytvm import tir
from pytvm.tir.transform import RemoveNoOp

S = tir.ForKind.SERIAL
A = tir.decl_buffer((16,), "float32", "A")


def _run(body: tir.Stmt) -> tir.Stmt:
    func = tir.PrimFunc((A.data,), body, {A.data: A}, {"global_symbol": "f"})
    return RemoveNoOp(tir.IRModule.from_expr(func))["f"].body


def test_no_op_statements_are_dropped() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    T = tir.decl_buffer((4,), "float32", "T")
    keep = tir.BufferStore(A, tir.const(1.0), (i,))
    before = tir.Allocate(T, tir.seq(
        tir.Evaluate(tir.const(0)),
        tir.For(i, tir.const(0), tir.const(4), S, tir.seq(
            tir.BufferStore(A, A.vload((i,)), (i,)),  # self-assignment
            tir.IfThenElse(i < 2, tir.Evaluate(tir.const(0))),
            keep,
        )),
        tir.For(j, tir.const(0), tir.const(0), S, tir.BufferStore(A, tir.const(2.0), (j,))),
    ))  # fmt: skip
    expected = tir.For(i, tir.const(0), tir.const(4), S, keep)  # T is never used
    tir.assert_structural_equal(_run(before), expected)


def test_everything_removed_leaves_evaluate_zero() -> None:
    i = tir.Var("i")
    before = tir.For(i, tir.const(0), tir.const(4), S, tir.Evaluate(tir.const(0)))
    tir.assert_structural_equal(_run(before), tir.Evaluate(tir.const(0)))
