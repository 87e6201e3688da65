"""CPU schedules of ``softmax``/``log_softmax`` and ``layer_norm``.

The rows being normalized run in parallel; a row's last reduction (the sum of exponentials, or
the variance) is computed inside the row's loop (``compute_at``), so the row is read again
while it is still in cache; a reduction that several stages read (the maximum, the mean) is
its own parallel stage. The innermost axis of the output is vectorized when the target's
lanes divide it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ..generic._tiling import extent, fuse_parallel, product, vectorize_inner
from ..generic._traverse import as_outputs, create_schedule, traverse_inline
from ..generic.injective import schedule_injective_from_existing

__all__ = ["schedule_layer_norm", "schedule_log_softmax", "schedule_softmax"]

_NORM_TAGS = ("softmax_output", "log_softmax_output", "layer_norm_output")


def _row_axes(op: ComputeOp) -> int:
    """How many leading axes of a normalization output index whole rows."""
    if "axis" in op.attrs:
        return int(op.attrs["axis"])
    reductions = [
        t.op for t in op.input_tensors if isinstance(t.op, ComputeOp) and t.op.reduce_axis
    ]
    return min((len(r.axis) for r in reductions), default=0)


def _schedule(outs: Tensor | Sequence[Tensor]) -> Any:
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    norms: list[ComputeOp] = []
    others: list[ComputeOp] = []

    def visit(op: ComputeOp) -> None:
        (norms if op.tag in _NORM_TAGS else others).append(op)

    traverse_inline(s, outputs, visit)
    readers: dict[int, set[int]] = {}
    for op in [*norms, *others]:
        for t in op.input_tensors:
            readers.setdefault(id(t.op), set()).add(id(op))
    attached: set[int] = set()
    for op in norms:
        stage = s[op]
        axes = list(stage.op.axis)
        rows = _row_axes(op)
        inner = axes[rows:]
        if len(inner) == 1:
            vectorize_inner(stage, inner[0], op.output(0).dtype)
        fused = fuse_parallel(stage, axes[:rows], product([extent(a) for a in op.axis]))
        for t in op.input_tensors:
            red = t.op
            if (
                isinstance(red, ComputeOp)
                and red.reduce_axis
                and fused is not None
                and len(red.axis) == rows
                and readers.get(id(red)) == {id(op)}
            ):
                s[red].compute_at(stage, fused)
                attached.add(id(red))
    for op in others:
        if id(op) in attached:
            continue
        if op.reduce_axis:
            fuse_parallel(s[op], list(s[op].op.axis), product([extent(a) for a in op.axis]))
        elif id(op) in output_ops:
            schedule_injective_from_existing(s, op.output(0))
    return s


def schedule_softmax(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.softmax``."""
    return _schedule(outs)


def schedule_log_softmax(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.log_softmax``."""
    return _schedule(outs)


def schedule_layer_norm(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.layer_norm`` (normalized axes trailing)."""
    return _schedule(outs)
