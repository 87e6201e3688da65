"""Lowering extern operations: their statement, with the declared buffers bound to real ones.

``te.extern`` hands ``fcompute`` buffers of its own; lowering replaces each of them (and its data
pointer) by the buffer the tensor really lives in: a function argument, or an allocation.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..tir import stmt as S
from ..tir.expr import Buffer, PrimExpr, Var
from ..tir.functor import IRMutator
from .extern import ExternOp
from .placement import Placed

__all__ = ["bind_extern_body", "extern_placement"]


def extern_placement(op: ExternOp) -> Placed:
    """Buffers of ``op``'s outputs, each of its full shape (not an argument of the function)."""
    buffers = [
        Buffer(Var(t.name, "handle"), t.dtype, t.shape, t.name)
        for t in (op.output(k) for k in range(op.num_outputs))
    ]
    return Placed(buffers, [])


def bind_extern_body(op: ExternOp, inputs: Sequence[Buffer], outputs: Sequence[Buffer]) -> S.Stmt:
    """``op``'s statement reading ``inputs`` and writing ``outputs`` instead of its own buffers."""
    bmap: dict[Buffer, Buffer] = {}
    for old, new in zip(
        (*op.input_placeholders, *op.output_placeholders), (*inputs, *outputs), strict=True
    ):
        bmap[old] = new
    body: S.Stmt = _Rebind(bmap).visit(op.body)
    return body


class _Rebind(IRMutator):
    def __init__(self, bmap: dict[Buffer, Buffer]) -> None:
        self.bmap = bmap
        self.vmap: dict[Var, PrimExpr] = {old.data: new.data for old, new in bmap.items()}

    def visit_Buffer(self, node: Buffer) -> Buffer:
        return self.bmap.get(node, node)

    def visit_Var(self, node: Var) -> PrimExpr:
        return self.vmap.get(node, node)
