"""CPU schedules of pooling (``pool2d``, ``adaptive_pool``, ``global_pool``).

A pooling whose windows are whole contiguous rows of its input (a global pooling, an adaptive
pooling to 1x1 in NCHW) is reduced in vector lanes with several accumulators, the channels in
parallel (:mod:`pytvm.topi.generic._lane_reduction`); an average's division is then a
vectorized stage of its own. Otherwise all output axes but the innermost run in parallel (in
any layout: rows of every batch and channel for NCHW) with the window reduction innermost, and
an average's sum is computed point by point inside the division stage (``compute_at``).
On a one-lane target (a microcontroller) every pooling takes the second way, and a pooling
followed by elementwise stages is computed point by point in the output they write, in
``local`` scope: no stage of the kernel needs workspace memory.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._target import vector_lanes
from ..generic._lane_reduction import schedule_lane_reduction
from ..generic._tiling import extent, fuse_parallel, product
from ..generic._traverse import as_outputs, create_schedule, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..generic.reduction import inlined_ops
from ..tag import ADAPTIVE_POOL_MAX, ADAPTIVE_POOL_SUM, POOL_MAX, POOL_SUM

__all__ = ["schedule_adaptive_pool", "schedule_pool"]

_SUM_TAGS = (POOL_SUM, ADAPTIVE_POOL_SUM)
_MAX_TAGS = (POOL_MAX, ADAPTIVE_POOL_MAX)


def schedule_pool(outs: Tensor | Sequence[Tensor], layout: str = "NCHW") -> Any:
    """Schedule of ``topi.nn.pool2d`` (and of elementwise stages applied to its output).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 32, 7, 7), name="x")
    >>> s = topi.x86.schedule_pool(topi.nn.global_pool(x, "avg"))
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    pending: list[ComputeOp] = []

    def visit(op: ComputeOp) -> None:
        pending.append(op)

    traverse_inline(s, outputs, visit)
    inlined = inlined_ops(outputs)
    in_lanes: set[int] = set()
    homes: set[int] = set()  # outputs a one-lane sum is computed in, point by point
    for op in pending:
        pooling = op.tag in _MAX_TAGS or op.tag in _SUM_TAGS
        one_lane = vector_lanes(op.output(0).dtype) == 1
        if pooling and not one_lane and schedule_lane_reduction(s, op, inlined) is not None:
            in_lanes.add(id(op))
            continue
        if op.tag in _SUM_TAGS or (one_lane and pooling and id(op) not in output_ops):
            avg = next((o for o in pending if "avg" in o.tag and _reads(o, op)), None)
            if avg is None and one_lane:  # an elementwise output (the division inlined)
                avg = _same_shape_output(op, outputs)
            if avg is not None:
                s[op].compute_at(s[avg], s[avg].op.axis[-1])
                if one_lane:  # one value at a time: a register, not workspace memory
                    s[op].set_scope("local")
                    homes.add(id(avg))
                continue
        if "avg" in op.tag and any(id(t.op) in in_lanes for t in op.input_tensors):
            if id(op) in output_ops:
                schedule_injective_from_existing(s, op.output(0))
        elif pooling or "avg" in op.tag or id(op) in homes:
            # Every axis but the innermost (any layout, 1-d to 3-d windows) in parallel.
            outer = list(s[op].op.axis)[:-1]
            fuse_parallel(s[op], outer, product([extent(a) for a in op.axis]))
        elif id(op) in output_ops:
            schedule_injective_from_existing(s, op.output(0))
    return s


def _same_shape_output(op: ComputeOp, outputs: Sequence[Tensor]) -> ComputeOp | None:
    """The single output, when it has ``op``'s shape (the stages between are inlined)."""
    if len(outputs) != 1 or not isinstance(outputs[0].op, ComputeOp):
        return None
    shape = [extent(a) for a in op.axis]
    if None in shape or [extent(a) for a in outputs[0].op.axis] != shape:
        return None
    return outputs[0].op


def _reads(consumer: ComputeOp, producer: ComputeOp) -> bool:
    return any(t.op is producer for t in consumer.input_tensors)


def schedule_adaptive_pool(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.adaptive_pool`` and ``topi.nn.global_pool``."""
    return schedule_pool(outs)
