"""Schedules of a Cortex-M (``c -mcpu=cortex-m4``): int8 kernels through the DSP extension."""

from __future__ import annotations

from .conv2d_int8 import (
    CONV2D_NCHW_INT8_DSP,
    DSP_CHANNEL_BLOCK,
    conv2d_nchw_int8_dsp,
    schedule_conv2d_nchw_int8_dsp,
)
from .dsp import C_HELPERS, dot4_u8s8, smlad, smuad, sxtb16, sxtb16_ror8, uxtb16, uxtb16_ror8

__all__ = [
    "CONV2D_NCHW_INT8_DSP",
    "C_HELPERS",
    "DSP_CHANNEL_BLOCK",
    "conv2d_nchw_int8_dsp",
    "dot4_u8s8",
    "schedule_conv2d_nchw_int8_dsp",
    "smlad",
    "smuad",
    "sxtb16",
    "sxtb16_ror8",
    "uxtb16",
    "uxtb16_ror8",
]
