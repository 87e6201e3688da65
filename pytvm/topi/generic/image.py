"""TVM's ``topi.generic.image`` schedules: each computes its operator as written."""

from __future__ import annotations

from .default import as_written

__all__ = [
    "schedule_dilation2d_nchw",
    "schedule_dilation2d_nhwc",
]

schedule_dilation2d_nchw = as_written("schedule_dilation2d_nchw", "topi.image.dilation2d_nchw")
schedule_dilation2d_nhwc = as_written("schedule_dilation2d_nhwc", "topi.image.dilation2d_nhwc")
