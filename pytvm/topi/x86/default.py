"""Picking the schedule of a computation from its stages' tags (for fused operator groups).

A graph compiler fuses an anchor operator (a convolution, a matrix product, a pooling, a
normalization or a reduction) with the injective operators around it; the anchor's schedule
then schedules the whole group. Without an anchor the group is injective. The convolutions and
matrix products are the strategy table's rows (:mod:`.strategy`); a stage whose tag
:mod:`pytvm.topi.tag` does not know is an error, not an injective stage.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Operation, Tensor
from .. import tag
from ..generic._traverse import as_outputs
from ..generic.injective import schedule_injective
from ..generic.reduction import schedule_reduce
from ..nn.conv2d_transpose import SUBPIXEL_SHUFFLE_TAG
from .normalization import schedule_layer_norm, schedule_softmax
from .pooling import schedule_pool
from .strategy import STRATEGY, Schedule
from .subpixel_shuffle import schedule_subpixel_shuffle

__all__ = ["anchor_tag", "schedule_default"]


def _strategy_anchors() -> tuple[tuple[str, Schedule], ...]:
    """The strategy table's tags in table order, each with its first row's schedule."""
    anchors: dict[str, Schedule] = {}
    for row in STRATEGY:
        anchors.setdefault(row.tag, row.schedule)
    return tuple(anchors.items())


#: Anchor tags in order of precedence, with the schedule each selects: the strategy table's
#: convolutions and matrix products, then pooling, normalization and reductions.
_ANCHORS: tuple[tuple[str, Schedule], ...] = (
    *_strategy_anchors(),
    (tag.POOL_MAX, schedule_pool),
    (tag.POOL_SUM, schedule_pool),
    (tag.ADAPTIVE_POOL_MAX, schedule_pool),
    (tag.ADAPTIVE_POOL_SUM, schedule_pool),
    (tag.SOFTMAX_OUTPUT, schedule_softmax),
    (tag.LOG_SOFTMAX_OUTPUT, schedule_softmax),
    (tag.LAYER_NORM_OUTPUT, schedule_layer_norm),
    (tag.COMM_REDUCE, schedule_reduce),
    (tag.COMM_REDUCE_IDX, schedule_reduce),
    (SUBPIXEL_SHUFFLE_TAG, schedule_subpixel_shuffle),
)


def _tags(outs: Sequence[Tensor]) -> set[str]:
    found: set[str] = set()
    seen: set[int] = set()

    def visit(op: Operation) -> None:
        if id(op) in seen or not isinstance(op, ComputeOp):
            return
        seen.add(id(op))
        found.add(tag.check(op.tag, op.name))
        for t in op.input_tensors:
            visit(t.op)

    for t in outs:
        visit(t.op)
    return found


def anchor_tag(outs: Tensor | Sequence[Tensor]) -> str | None:
    """The tag of the stage that decides the schedule of ``outs`` (None: all injective).

    Raises for a stage whose tag :mod:`pytvm.topi.tag` does not know.
    """
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
    anchor = anchor_tag(outputs)
    schedule = next((f for t, f in _ANCHORS if t == anchor), schedule_injective)
    return schedule(outputs)
