"""CPU schedule of ``topi.nn.batch_norm`` (TVM's ``topi.x86.schedule_batch_norm``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import Tensor
from ..generic.reduction import schedule_reduce

__all__ = ["schedule_batch_norm"]


def schedule_batch_norm(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.batch_norm``'s outputs: the normalized data and the moving
    statistics. Its elementwise stages are inlined into the outputs, which run in parallel
    (all axes but the innermost, vectorized); statistics computed by reductions run in
    parallel over their data axes.
    """
    return schedule_reduce(outs)
