"""Default CPU schedule of reductions (``sum``, ``max``, ``argmax``, ``mean`` ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ..tag import COMM_REDUCE, COMM_REDUCE_IDX
from ._lane_reduction import schedule_lane_reduction
from ._tiling import extent, fuse_parallel, product
from ._traverse import as_outputs, create_schedule, is_inlinable, traverse_inline
from .injective import schedule_injective_from_existing

__all__ = ["schedule_reduce"]


def schedule_reduce(outs: Tensor | Sequence[Tensor]) -> Any:
    """A schedule of reductions: the data-parallel axes of each reduction stage fused and run
    in parallel, its reduction axes inside; injective inputs inlined; injective outputs
    reading a reduction (``mean``'s division) scheduled as injective stages.

    A reduction over contiguous trailing axes of its inputs (``mean`` over H and W, a sum over
    the last axis) adds whole vectors into several accumulators
    (:func:`~pytvm.topi.generic._lane_reduction.schedule_lane_reduction`).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 64, 14, 14), name="x")
    >>> s = topi.generic.schedule_reduce(topi.mean(x, axis=[2, 3], keepdims=True))
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    reductions: list[ComputeOp] = []

    def visit(op: ComputeOp) -> None:
        base = op.tag.split(",", maxsplit=1)[0]
        if base in (COMM_REDUCE, COMM_REDUCE_IDX) or op.reduce_axis:
            reductions.append(op)
        elif id(op) in output_ops:
            schedule_injective_from_existing(s, op.output(0))

    traverse_inline(s, outputs, visit)
    inlined = inlined_ops(outputs)
    for op in reductions:
        if schedule_lane_reduction(s, op, inlined) is None:
            fuse_parallel(s[op], list(op.axis), product([extent(a) for a in op.axis]))
    return s


def inlined_ops(outs: Sequence[Tensor]) -> set[int]:
    """Ids of the operations :func:`traverse_inline` inlines into the stages of ``outs``."""
    output_ops = {id(t.op) for t in outs}
    found: set[int] = set()
    seen: set[int] = set()

    def visit(op: Any) -> None:
        if id(op) in seen or not isinstance(op, ComputeOp):
            return
        seen.add(id(op))
        if is_inlinable(op) and id(op) not in output_ops:
            found.add(id(op))
        for t in op.input_tensors:
            visit(t.op)

    for t in outs:
        visit(t.op)
    return found
