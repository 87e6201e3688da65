"""Walking the stages a schedule covers: inline the injective ones, visit the rest."""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ...te.tensor import ComputeOp, Operation, Tensor
from ...tir.expr import Reduce
from ..tag import check, is_injective

__all__ = [
    "as_outputs",
    "create_schedule",
    "is_inlinable",
    "reads_output_of",
    "traverse_inline",
]


def as_outputs(outs: Tensor | Sequence[Tensor]) -> list[Tensor]:
    """``outs`` as a list of tensors."""
    return [outs] if isinstance(outs, Tensor) else list(outs)


def create_schedule(outs: Sequence[Tensor]) -> Any:
    """A fresh schedule of the operations of ``outs``."""
    from ...te import create_schedule as _create  # type: ignore[attr-defined,unused-ignore]

    return _create([t.op for t in outs])


def is_inlinable(op: Operation) -> bool:
    """Whether ``op`` can be computed inside its consumers (an injective, non-reduction compute)."""
    return (
        isinstance(op, ComputeOp)
        and is_injective(op.tag)
        and not any(isinstance(b, Reduce) for b in op.body)
    )


def traverse_inline(
    s: Any,
    outs: Sequence[Tensor],
    callback: Callable[[ComputeOp], None] | None = None,
    keep: Callable[[ComputeOp], bool] | None = None,
) -> None:
    """Inline every injective stage that is not an output (nor kept by ``keep``); call
    ``callback`` on every other compute stage reached from ``outs``, producers first.

    Raises for a stage whose tag :mod:`pytvm.topi.tag` does not know.
    """
    output_ops = {id(t.op) for t in outs}
    seen: set[int] = set()

    def visit(op: Operation) -> None:
        if id(op) in seen or not isinstance(op, ComputeOp):
            return
        seen.add(id(op))
        check(op.tag, op.name)
        for t in op.input_tensors:
            visit(t.op)
        if is_inlinable(op) and id(op) not in output_ops and not (keep and keep(op)):
            s[op].compute_inline()
        elif callback is not None:
            callback(op)

    for t in outs:
        visit(t.op)


def reads_output_of(op: Any, anchor: ComputeOp, ndim: int, stages: Collection[str]) -> bool:
    """Whether stage ``op`` is ``anchor`` or, as an ``ndim``-d stage, reads it through inlined
    stages (not looking past the stages named in ``stages``: packed operands of the anchor).
    """
    if op is anchor:
        return True
    if not isinstance(op, ComputeOp) or len(op.axis) != ndim:
        return False
    seen: set[int] = set()
    todo = list(op.input_tensors)
    while todo:
        t = todo.pop()
        if t.op is anchor:
            return True
        if id(t.op) in seen or not isinstance(t.op, ComputeOp):
            continue
        seen.add(id(t.op))
        if t.op.name not in stages:
            todo.extend(t.op.input_tensors)
    return False
