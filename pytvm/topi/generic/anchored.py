"""Scheduling a group around one anchor stage: the anchor's block schedule carries the
elementwise stages after it, every other output gets the injective schedule.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ._traverse import as_outputs, create_schedule, traverse_inline
from .injective import schedule_injective_from_existing

__all__ = ["schedule_anchored"]


def _is_pad(op: ComputeOp) -> bool:
    return op.tag.endswith(",pad")


def schedule_anchored(
    outs: Tensor | Sequence[Tensor],
    anchor_tag: str | Collection[str],
    carrier: Callable[[ComputeOp, list[Tensor]], Tensor | None],
    schedule_block: Callable[[Any, ComputeOp, Tensor], None],
    *,
    keep_pads: bool = False,
) -> Any:
    """Schedule ``outs``: stages tagged ``anchor_tag`` (or any of several tags) are scheduled by
    ``schedule_block`` at the output ``carrier`` picks (None: the anchor is computed whole, before
    the outputs); injective stages are inlined and the other outputs scheduled as injective. With
    ``keep_pads`` padding stages (tags ending ``,pad``) are not inlined but scheduled as injective
    stages of their own.
    """
    tags = {anchor_tag} if isinstance(anchor_tag, str) else set(anchor_tag)
    keep = _is_pad if keep_pads else None
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    anchors: list[ComputeOp] = []
    others: list[ComputeOp] = []

    def visit(op: ComputeOp) -> None:
        if op.tag in tags:
            anchors.append(op)
        elif (keep is not None and keep(op)) or id(op) in output_ops:
            others.append(op)

    traverse_inline(s, outputs, visit, keep=keep)
    carriers = set()
    for anchor in anchors:
        out = carrier(anchor, outputs)
        if out is None:
            continue
        carriers.add(id(out.op))
        schedule_block(s, anchor, out)
    for op in others:
        if id(op) not in carriers:
            schedule_injective_from_existing(s, op.output(0))
    return s
