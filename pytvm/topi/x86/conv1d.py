"""TVM's x86 schedules of 1-d convolutions (``topi.x86.conv1d``) and of the transposed 2-d
convolution (``topi.x86.conv2d_transpose_nchw``).

These convolutions are scheduled as reductions: all data-parallel axes of the convolution
stage run in parallel with its window innermost, padding is computed inside the window, and
elementwise outputs after it get the injective schedule.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import Tensor
from .. import nn
from ..generic.reduction import schedule_reduce

__all__ = [
    "conv2d_transpose_nchw",
    "schedule_conv1d_ncw",
    "schedule_conv1d_nwc",
    "schedule_conv2d_transpose_nchw",
    "schedule_group_conv1d_ncw",
    "schedule_group_conv1d_nwc",
]


def schedule_conv1d_ncw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv1d_ncw`` and the elementwise stages after it."""
    return schedule_reduce(outs)


def schedule_conv1d_nwc(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv1d_nwc`` and the elementwise stages after it."""
    return schedule_reduce(outs)


def schedule_group_conv1d_ncw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.group_conv1d_ncw`` and the elementwise stages after it."""
    return schedule_reduce(outs)


def schedule_group_conv1d_nwc(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.group_conv1d_nwc`` and the elementwise stages after it."""
    return schedule_reduce(outs)


def conv2d_transpose_nchw(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: int | Sequence[int],
    out_dtype: str | None = None,
    output_padding: int | Sequence[int] = 0,
) -> Tensor:
    """Transposed convolution of ``data [N, C, H, W]`` with ``kernel [C, F, KH, KW]``."""
    return nn.conv2d_transpose_nchw(data, kernel, strides, padding, out_dtype, output_padding)


def schedule_conv2d_transpose_nchw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`conv2d_transpose_nchw` and the elementwise stages after it."""
    return schedule_reduce(outs)
