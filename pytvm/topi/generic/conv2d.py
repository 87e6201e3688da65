"""TVM's ``topi.generic.conv2d`` module path: the generic depthwise NHWC schedule."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import Tensor
from .default import default_schedule

__all__ = ["schedule_depthwise_conv2d_nhwc"]


def schedule_depthwise_conv2d_nhwc(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.depthwise_conv2d_nhwc``: its padding and the elementwise stages
    after it inlined, the output's loops fused.
    """
    return default_schedule(outs, True)
