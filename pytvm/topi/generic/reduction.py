"""Default CPU schedule of reductions (``sum``, ``max``, ``argmax``, ``mean`` ...)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ..tag import COMM_REDUCE, COMM_REDUCE_IDX
from ._tiling import extent, fuse_parallel, product
from ._traverse import as_outputs, create_schedule, traverse_inline
from .injective import schedule_injective_from_existing

__all__ = ["schedule_reduce"]


def schedule_reduce(outs: Tensor | Sequence[Tensor]) -> Any:
    """A schedule of reductions: the data-parallel axes of each reduction stage fused and run
    in parallel, its reduction axes inside; injective inputs inlined; injective outputs
    reading a reduction (``mean``'s division) scheduled as injective stages.
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}

    def visit(op: ComputeOp) -> None:
        base = op.tag.split(",", maxsplit=1)[0]
        if base in (COMM_REDUCE, COMM_REDUCE_IDX) or op.reduce_axis:
            stage = s[op]
            fuse_parallel(stage, list(op.axis), product([extent(a) for a in op.axis]))
        elif id(op) in output_ops:
            schedule_injective_from_existing(s, op.output(0))

    traverse_inline(s, outputs, visit)
    return s
