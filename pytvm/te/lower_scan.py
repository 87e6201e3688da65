"""Lowering scans: one buffer per state, shared by the scan, its init, its update and its state.

A scan's output ``k`` lives in one buffer of the full state shape. ``init[k]`` writes its rows
there at the root (before the scan loop), ``update[k]`` writes row ``t`` inside the loop over the
scan axis, and every read of ``state_placeholder[k]`` reads that buffer (row ``t - 1`` is
already written). The stages of the scan's body are computed at the scan axis (a schedule
group), so each step computes the rows of them that step reads.
"""

from __future__ import annotations

from ..ffi.errors import TVMValueError
from ..tir.expr import Buffer, PrimExpr, Var, const
from .placement import Placed
from .scan import ScanOp
from .schedule.schedule import Schedule
from .tensor import Operation, Tensor

__all__ = ["alias_scan_buffers"]


def alias_scan_buffers(
    sch: Schedule, placed_ops: dict[Operation, Placed], aliased: set[Operation]
) -> None:
    """Give each scan's outputs their buffers (``placed_ops``, where the function's arguments
    already are) and make its inits, updates and states use them.

    The inits and updates go into ``aliased``: they get no allocation of their own.
    """
    for stage in sch.compute_stages:
        op = stage.op
        if not isinstance(op, ScanOp):
            continue
        placed = placed_ops.get(op)
        if placed is None:
            buffers = [
                Buffer(Var(t.name, "handle"), t.dtype, t.shape, t.name)
                for t in (op.output(k) for k in range(op.num_outputs))
            ]
            zeros: list[PrimExpr] = [const(0)] * len(op.output_shape(0))
            placed = Placed(buffers, zeros, list(op.output_shape(0)))
            placed_ops[op] = placed
        for k in range(op.num_outputs):
            for tensor in (op.init[k], op.update[k], op.state_placeholder[k]):
                _alias(placed_ops, aliased, tensor, placed.buffers[k])
            for tensor in (op.init[k], op.update[k]):
                reader = sch.stage_of(tensor)
                if reader is not None and reader.attach == "inline":
                    raise TVMValueError(
                        f"scan {op.name}: {tensor.name} is its init or update, so it must be "
                        "computed, not inlined"
                    )
                aliased.add(tensor.op)


def _alias(
    placed_ops: dict[Operation, Placed], aliased: set[Operation], tensor: Tensor, buf: Buffer
) -> None:
    key: Operation = tensor.op
    existing = placed_ops.get(key)
    if existing is None or key not in aliased:
        zeros: list[PrimExpr] = [const(0)] * len(tensor.shape)
        existing = Placed([], zeros, list(tensor.shape))
        placed_ops[key] = existing
    while len(existing.buffers) <= tensor.value_index:
        existing.buffers.append(buf)
    existing.buffers[tensor.value_index] = buf
