from __future__ import annotations

import pytest

from pytvm import tir
from pytvm.ffi.errors import TVMValueError
from pytvm.ir.transform import PassContext
from pytvm.tir.transform import UnrollLoop

S, U = tir.ForKind.SERIAL, tir.ForKind.UNROLLED
A = tir.decl_buffer((16,), "float32", "A")


def _run(body: tir.Stmt, *scalars: tir.Var) -> tir.Stmt:
    func = tir.PrimFunc((A.data, *scalars), body, {A.data: A}, {"global_symbol": "f"})
    return UnrollLoop(tir.IRModule.from_expr(func))["f"].body


def test_unrolled_loop_is_expanded() -> None:
    i = tir.Var("i")
    before = tir.For(i, tir.const(1), tir.const(3), U, tir.BufferStore(A, tir.const(1.0), (i * 2,)))
    expected = tir.seq(
        *(
            tir.BufferStore(A, tir.const(1.0), (tir.Mul(tir.const(k), tir.const(2)),))
            for k in (1, 2, 3)
        )
    )  # substituted; the next simplify folds it
    tir.assert_structural_equal(_run(before), expected)


def test_symbolic_unrolled_loop_becomes_serial() -> None:
    i, n = tir.Var("i"), tir.Var("n")
    before = tir.For(i, tir.const(0), n, U, tir.BufferStore(A, tir.const(1.0), (i,)))
    after = _run(before, n)
    assert isinstance(after, tir.For) and after.kind is S


def test_auto_unroll_small_serial_loops() -> None:
    i, j = tir.Var("i"), tir.Var("j")
    inner = tir.For(j, tir.const(0), tir.const(2), S, tir.BufferStore(A, tir.const(1.0), (i + j,)))
    before = tir.For(i, tir.const(0), tir.const(8), S, inner)
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 4}, "tir.verify": True}):
        after = _run(before)
    assert isinstance(after, tir.For) and after.extent.value == 8  # type: ignore[attr-defined]  # 16 steps
    assert isinstance(after.body, tir.SeqStmt) and len(after.body.seq) == 2
    with PassContext(config={"tir.UnrollLoop": {"auto_max_step": 4, "explicit_unroll": False}}):
        marked = _run(before)
    assert isinstance(marked, tir.For) and isinstance(marked.body, tir.For)
    assert marked.body.kind is U and marked.kind is S


def test_auto_max_extent_and_depth() -> None:
    i, j, k = tir.Var("i"), tir.Var("j"), tir.Var("k")
    store = tir.BufferStore(A, tir.const(1.0), (i + j + k,))
    nest = tir.For(i, tir.const(0), tir.const(2), S, tir.For(j, tir.const(0), tir.const(2), S,
                   tir.For(k, tir.const(0), tir.const(2), S, store)))  # fmt: skip
    with PassContext(config={"tir.UnrollLoop": {"auto_max_extent": 2}, "tir.verify": True}):
        flat = _run(nest)
    assert isinstance(flat, tir.SeqStmt) and len(flat.seq) == 8  # every level unrolled
    options = {"auto_max_extent": 2, "auto_max_depth": 2}
    with PassContext(config={"tir.UnrollLoop": options, "tir.verify": True}):
        limited = _run(nest)
    assert isinstance(limited, tir.For) and isinstance(limited.body, tir.SeqStmt)
    assert len(limited.body.seq) == 4  # two levels unrolled, the outer loop kept


def test_unknown_unroll_option_is_named() -> None:
    i = tir.Var("i")
    loop = tir.For(i, tir.const(0), tir.const(2), U, tir.BufferStore(A, tir.const(1.0), (i,)))
    with (
        PassContext(config={"tir.UnrollLoop": {"auto_max_stp": 4}}),
        pytest.raises(TVMValueError, match="auto_max_stp"),
    ):
        _run(loop)
