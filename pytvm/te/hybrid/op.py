"""``HybridOp``: the operation a hybrid script builds (TVM's ``te.HybridOp``).

Its ``body`` is a loop-IR statement over tensors: it reads ``inputs`` and writes ``outputs``
(the tensors ``output_tensor`` declared) with ``ProducerStore``, and scratch tensors live in
``ProducerRealize`` scopes. It is an extern operation whose statement is written over tensors
rather than buffers: ``input_placeholders`` and ``output_placeholders`` are the buffers those
tensors become when :mod:`pytvm.te.lower_hybrid` turns the body into buffer form, and lowering
then binds them like any extern's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ...ffi.errors import TVMValueError
from ...tir import stmt as S
from ...tir.buffer import decl_buffer
from ...tir.expr import IterVar, IterVarType, Range
from ...tir.functor import IRVisitor
from ..extern import ExternOp
from ..tensor import Tensor

__all__ = ["HybridOp", "make_hybrid_op"]

_ITER_TYPES = {
    S.ForKind.SERIAL: IterVarType.DATA_PAR,
    S.ForKind.PARALLEL: IterVarType.PARALLELIZED,
    S.ForKind.VECTORIZED: IterVarType.VECTORIZED,
    S.ForKind.UNROLLED: IterVarType.UNROLLED,
}


@dataclass(frozen=True, slots=True, eq=False)
class HybridOp(ExternOp):
    """Outputs written by a hybrid script's ``body`` (a statement over tensors)."""

    outputs: tuple[Tensor, ...] = ()
    axis: tuple[IterVar, ...] = ()

    def __post_init__(self) -> None:
        ExternOp.__post_init__(self)
        if len(self.outputs) != len(self.output_placeholders):
            raise TVMValueError(
                f"hybrid {self.name!r}: {len(self.outputs)} output tensors but "
                f"{len(self.output_placeholders)} output buffers"
            )


def make_hybrid_op(
    name: str,
    tag: str,
    attrs: Mapping[str, Any] | None,
    inputs: Sequence[Tensor],
    outputs: Sequence[Tensor],
    body: S.Stmt,
) -> HybridOp:
    """The hybrid operation of ``body`` (TVM's ``te.HybridOp`` constructor); its axes are the
    loops of ``body`` (see :func:`loop_axes`).
    """
    ins = tuple(inputs)
    outs = tuple(outputs)
    in_bufs = tuple(decl_buffer(t.shape, t.dtype, t.op.name) for t in ins)
    out_bufs = tuple(decl_buffer(t.shape, t.dtype, t.op.name) for t in outs)
    return HybridOp(
        name, tag, dict(attrs or {}), ins, in_bufs, out_bufs, body, outs, loop_axes(body)
    )


def loop_axes(body: S.Stmt) -> tuple[IterVar, ...]:
    """One axis per ``For`` of ``body`` (its variable, range and kind) in reverse post-order, as
    TVM gathers them: a loop comes before the loops inside it, and later sibling nests first.
    """
    found: list[IterVar] = []

    class _Loops(IRVisitor):
        def visit_For(self, node: S.For) -> None:
            self.generic_visit(node)
            dom = Range(node.min, node.extent)
            found.append(IterVar(dom, node.loop_var, _ITER_TYPES[node.kind]))

    _Loops().visit(body)
    return tuple(reversed(found))
