"""Picking the schedule of a computation from its stages' tags (for fused operator groups).

A graph compiler fuses an anchor operator (a convolution, a matrix product, a pooling, a
normalization or a reduction) with the injective operators around it; the anchor's schedule
then schedules the whole group. Without an anchor the group is injective.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...te.tensor import ComputeOp, Operation, Tensor
from ..generic._traverse import as_outputs
from ..generic.injective import schedule_injective
from ..generic.reduction import schedule_reduce
from ..nn.conv2d_packed import CONV2D_NCHW_PACKED
from ..nn.conv2d_pointwise import CONV2D_NCHW_POINTWISE
from ..nn.depthwise import DEPTHWISE_ROWS
from ..tag import (
    COMM_REDUCE,
    COMM_REDUCE_IDX,
    CONV2D_NCHW,
    DEPTHWISE_CONV2D_NCHW,
    GROUP_CONV2D_NCHW,
)
from .conv2d import schedule_conv2d_nchw, schedule_depthwise_conv2d_nchw
from .conv2d_packed import schedule_conv2d_nchw_packed
from .conv2d_pointwise import schedule_conv2d_nchw_pointwise
from .dense import schedule_batch_matmul, schedule_dense, schedule_dense_pack
from .depthwise import schedule_depthwise_conv2d_nchw_rows
from .normalization import schedule_layer_norm, schedule_softmax
from .pooling import schedule_pool

__all__ = ["anchor_tag", "schedule_default"]

Schedule = Callable[[Sequence[Tensor]], Any]

#: Anchor tags in order of precedence, with the schedule each selects.
_ANCHORS: tuple[tuple[str, Schedule], ...] = (
    (CONV2D_NCHW_PACKED, schedule_conv2d_nchw_packed),
    (CONV2D_NCHW_POINTWISE, schedule_conv2d_nchw_pointwise),
    (DEPTHWISE_ROWS, schedule_depthwise_conv2d_nchw_rows),
    (CONV2D_NCHW, schedule_conv2d_nchw),
    (GROUP_CONV2D_NCHW, schedule_conv2d_nchw),
    (DEPTHWISE_CONV2D_NCHW, schedule_depthwise_conv2d_nchw),
    ("dense_pack", schedule_dense_pack),
    ("dense", schedule_dense),
    ("matmul", schedule_dense),
    ("batch_matmul", schedule_batch_matmul),
    ("batch_matmul_nn", schedule_batch_matmul),
    ("pool_max", schedule_pool),
    ("pool_sum", schedule_pool),
    ("adaptive_pool_max", schedule_pool),
    ("adaptive_pool_sum", schedule_pool),
    ("softmax_output", schedule_softmax),
    ("log_softmax_output", schedule_softmax),
    ("layer_norm_output", schedule_layer_norm),
    (COMM_REDUCE, schedule_reduce),
    (COMM_REDUCE_IDX, schedule_reduce),
)


def _tags(outs: Sequence[Tensor]) -> set[str]:
    found: set[str] = set()
    seen: set[int] = set()

    def visit(op: Operation) -> None:
        if id(op) in seen or not isinstance(op, ComputeOp):
            return
        seen.add(id(op))
        found.add(op.tag)
        for t in op.input_tensors:
            visit(t.op)

    for t in outs:
        visit(t.op)
    return found


def anchor_tag(outs: Tensor | Sequence[Tensor]) -> str | None:
    """The tag of the stage that decides the schedule of ``outs`` (None: all injective)."""
    tags = _tags(as_outputs(outs))
    return next((t for t, _ in _ANCHORS if t in tags), None)


def schedule_default(outs: Tensor | Sequence[Tensor]) -> Any:
    """The default CPU schedule of ``outs``, chosen by its anchor stage.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 8, 8), name="x")
    >>> w = te.placeholder((4, 3, 3, 3), name="w")
    >>> y = topi.nn.relu(topi.nn.conv2d_nchw(x, w, 1, 1, 1))
    >>> topi.x86.default.anchor_tag(y)
    'conv2d_nchw'
    """
    outputs = as_outputs(outs)
    tag = anchor_tag(outputs)
    schedule = next((f for t, f in _ANCHORS if t == tag), schedule_injective)
    return schedule(outputs)
