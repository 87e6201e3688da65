"""Schedules of a Cortex-M (``c -mcpu=cortex-m4``): int8 kernels through the DSP extension, and
the int8 depthwise convolution in int32 of any one-lane target.
"""

from __future__ import annotations

from .conv2d_int8 import (
    CONV2D_NCHW_INT8_DSP,
    DSP_CHANNEL_BLOCK,
    conv2d_nchw_int8_dsp,
    schedule_conv2d_nchw_int8_dsp,
)
from .depthwise_int8 import (
    CONV2D_NCHW_INT8_ONE_LANE,
    DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE,
    conv2d_nchw_int8_one_lane,
    depthwise_conv2d_nchw_int8_one_lane,
    schedule_depthwise_conv2d_nchw_int8_one_lane,
)
from .dsp import C_HELPERS, dot4_u8s8, smlad, smuad, sxtb16, sxtb16_ror8, uxtb16, uxtb16_ror8

__all__ = [
    "CONV2D_NCHW_INT8_DSP",
    "CONV2D_NCHW_INT8_ONE_LANE",
    "C_HELPERS",
    "DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE",
    "DSP_CHANNEL_BLOCK",
    "conv2d_nchw_int8_dsp",
    "conv2d_nchw_int8_one_lane",
    "depthwise_conv2d_nchw_int8_one_lane",
    "dot4_u8s8",
    "schedule_conv2d_nchw_int8_dsp",
    "schedule_depthwise_conv2d_nchw_int8_one_lane",
    "smlad",
    "smuad",
    "sxtb16",
    "sxtb16_ror8",
    "uxtb16",
    "uxtb16_ror8",
]
