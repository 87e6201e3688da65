"""TVM's ``topi.x86.depthwise_conv2d`` module path: the depthwise entry point and the default
knobs of a depthwise workload (the same blocking as :mod:`.conv2d_avx_common`).
"""

from __future__ import annotations

from .conv2d_avx_common import fallback_schedule
from .conv2d_templates import depthwise_conv2d_nchw, schedule_depthwise_conv2d_nchw

__all__ = ["depthwise_conv2d_nchw", "fallback_schedule", "schedule_depthwise_conv2d_nchw"]

#: TVM's name of :func:`fallback_schedule`.
_fallback_schedule = fallback_schedule
