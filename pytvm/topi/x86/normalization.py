"""CPU schedules of ``softmax``/``log_softmax`` and ``layer_norm``.

A softmax along the last axis is blocked by rows: its rows run in parallel and every per-row
stage (the maximum's vector-lane partials and their combination, the exponentials, the sum's
partials and combination) is computed inside the row's loop (``compute_at``), so a row is read
from memory once and its later passes find it in cache. Each pass over a row is vectorized, the
elements past its last whole vector by a shorter vector (loop partitioning).

For other normalizations the rows run in parallel; a row's last reduction (the sum of
exponentials, or the variance) is computed inside the row's loop, so the row is read again
while it is still in cache; a reduction that several stages read (the maximum, the mean) is
its own parallel stage. The innermost axis of the output is vectorized.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ..generic._tiling import extent, fuse_parallel, product, vectorize_inner
from ..generic._traverse import as_outputs, create_schedule, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..tag import LAYER_NORM_OUTPUT, LOG_SOFTMAX_OUTPUT, SOFTMAX_EXP, SOFTMAX_OUTPUT

__all__ = ["schedule_layer_norm", "schedule_log_softmax", "schedule_softmax"]

_NORM_TAGS = (SOFTMAX_OUTPUT, LOG_SOFTMAX_OUTPUT, LAYER_NORM_OUTPUT)


def _row_axes(op: ComputeOp) -> int:
    """How many leading axes of a normalization output index whole rows."""
    if "axis" in op.attrs:
        return int(op.attrs["axis"])
    reductions = [
        t.op for t in op.input_tensors if isinstance(t.op, ComputeOp) and t.op.reduce_axis
    ]
    return min((len(r.axis) for r in reductions), default=0)


def _row_stages(norm: ComputeOp, rows: int, output_ops: set[int]) -> list[ComputeOp]:
    """The stages feeding ``norm`` that are computed per row: reductions and staged
    exponentials whose leading ``rows`` axes are the rows (producers first).
    """
    row_extents = [extent(a) for a in norm.axis[:rows]]
    found: list[ComputeOp] = []
    seen: set[int] = set()

    def visit(op: object) -> None:
        if not isinstance(op, ComputeOp) or id(op) in seen:
            return
        seen.add(id(op))
        for t in op.input_tensors:
            visit(t.op)
        per_row = [extent(a) for a in op.axis[:rows]] == row_extents
        if (
            op is not norm
            and id(op) not in output_ops
            and per_row
            and (
                op.reduce_axis
                or op.tag == SOFTMAX_EXP
                or "row_total" in op.attrs
                or "row_lanes" in op.attrs
            )
        ):
            found.append(op)

    visit(norm)
    return found


def _schedule_row_stage(s: Any, op: ComputeOp, rows: int) -> None:
    """A per-row stage of a lane-split row reduction, computed whole (rows in parallel): lane
    partials accumulate as one vector, staged exponentials are vectorized along the row.
    """
    stage = s[op]
    axes = list(stage.op.axis)
    lanes = op.attrs.get("row_partial")
    if lanes:
        stage.reorder(*axes[:-1], *stage.op.reduce_axis, axes[-1])
        stage.vectorize(axes[-1])
    elif not op.reduce_axis:
        vectorize_inner(stage, axes[-1], op.output(0).dtype)
    fuse_parallel(stage, axes[:rows], product([extent(a) for a in op.axis]))


def _schedule_norm(
    s: Any, op: ComputeOp, readers: dict[int, set[int]], output_ops: set[int]
) -> list[ComputeOp]:
    """Schedule the normalization output ``op`` and the per-row stages it reads; returns the
    stages scheduled here.
    """
    stage = s[op]
    axes = list(stage.op.axis)
    rows = _row_axes(op)
    inner = axes[rows:]
    if len(inner) == 1:
        vectorize_inner(stage, inner[0], op.output(0).dtype)
    fused = fuse_parallel(stage, axes[:rows], product([extent(a) for a in op.axis]))
    if fused is None:
        return []
    staged = _row_stages(op, rows, output_ops)
    if any("row_partial" in r.attrs or r.tag == SOFTMAX_EXP for r in staged):
        # Rows reduced in vector lanes: each per-row stage is computed whole, rows in parallel.
        for row_stage in staged:
            _schedule_row_stage(s, row_stage, rows)
        return staged
    attached = []
    for t in op.input_tensors:
        red = t.op
        if (
            isinstance(red, ComputeOp)
            and red.reduce_axis
            and len(red.axis) == rows
            and readers.get(id(red)) == {id(op)}
        ):
            s[red].compute_at(stage, fused)
            attached.append(red)
    return attached


def _schedule_row_blocked(s: Any, op: ComputeOp, output_ops: set[int]) -> list[ComputeOp] | None:
    """Schedule a last-axis softmax (or log-softmax) ``op`` row by row: every per-row stage is
    computed inside the (parallel) row loop, each vectorized along the row. Returns the stages
    scheduled here; None when ``op`` does not normalize its last axis.
    """
    rows = _row_axes(op)
    axes = list(s[op].op.axis)
    if rows != len(axes) - 1:
        return None
    stage = s[op]
    vectorize_inner(stage, axes[-1], op.output(0).dtype)
    fused = fuse_parallel(stage, axes[:rows], product([extent(a) for a in op.axis]))
    staged = _row_stages(op, rows, output_ops)
    for row_op in staged:
        row_stage = s[row_op]
        if fused is not None:
            row_stage.compute_at(stage, fused)
            # A row's buffers are the thread's own: on its stack (the code generators keep
            # larger ones in workspaces), not a workspace allocation per row.
            row_stage.set_scope("local")
        row_axes = list(row_stage.op.axis)
        if "row_partial" in row_op.attrs:  # [row, chain, lane]: chains unrolled, lanes a vector
            chain, lane = row_axes[-2:]
            row_stage.reorder(*row_axes[:-2], *row_stage.op.reduce_axis, chain, lane)
            row_stage.unroll(chain)
            row_stage.vectorize(lane)
        elif "row_lanes" in row_op.attrs:
            row_stage.vectorize(row_axes[-1])
        elif row_op.tag == SOFTMAX_EXP:
            vectorize_inner(row_stage, row_axes[-1], row_op.output(0).dtype)
    return staged


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
        blocked = None
        if op.tag in (SOFTMAX_OUTPUT, LOG_SOFTMAX_OUTPUT):
            blocked = _schedule_row_blocked(s, op, output_ops)
        if blocked is None:
            blocked = _schedule_norm(s, op, readers, output_ops)
        attached.update(id(a) for a in blocked)
    for op in others:
        if id(op) in attached:
            continue
        if op.reduce_axis:
            fuse_parallel(s[op], list(s[op].op.axis), product([extent(a) for a in op.axis]))
        elif id(op) in output_ops:
            schedule_injective_from_existing(s, op.output(0))
        elif not op.input_tensors:
            # A constant (a graph's scalar operand): its value goes into the expressions, so a
            # division by it can become a multiplication.
            s[op].compute_inline()
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
