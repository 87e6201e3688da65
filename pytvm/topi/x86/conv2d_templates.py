"""TVM's x86 convolution entry points (``topi.x86.conv2d_nchw``, ``conv2d_nhwc``,
``depthwise_conv2d_nchw`` and their schedules) over pytvm's kernels.

The compute picks the implementation pytvm's strategy table (:mod:`.strategy`) would pick for a
non-constant kernel: the pointwise convolution when it applies, else the direct one (over the
input's column phases for a stem strided along the width); depthwise
convolutions run over padded row planes when the padding allows it. The schedules find the
anchor stage by its tag (:func:`.default.schedule_default`), so they schedule whichever
implementation the compute picked, with the elementwise stages after it.
``conv2d_nhwc`` computes in NCHW between two layout transforms.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ffi.errors import TVMValueError
from ...te.tensor import Tensor
from .. import nn
from .._shape import const_int
from ..generic.reduction import schedule_reduce
from ..nn.utils import get_pad_tuple
from ..transform import transpose
from .default import anchor_tag, schedule_default
from .strategy import OpWorkload, select

__all__ = [
    "conv2d_nchw",
    "conv2d_nhwc",
    "depthwise_conv2d_nchw",
    "schedule_conv2d_nchw",
    "schedule_conv2d_nhwc",
    "schedule_depthwise_conv2d_nchw",
]


def _pads(
    padding: int | str | Sequence[int], kernel: Tensor, dilation: int | Sequence[int]
) -> tuple[int, ...]:
    """``(top, left, bottom, right)`` of ``padding`` for the dilated window of ``kernel``
    (``"SAME"`` pads the dilated kernel's size less one, as TVM).
    """
    kh, kw = const_int(kernel.shape[2]), const_int(kernel.shape[3])
    if kh is None or kw is None:
        raise TVMValueError(f"convolution kernel shape {kernel.shape}: expected constant KH, KW")
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else tuple(dilation)
    return tuple(int(p) for p in get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1)))


def conv2d_nchw(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: int | str | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of ``data [N, C, H, W]`` with ``kernel [F, C, KH, KW]``."""
    attrs = {
        "strides": strides,
        "padding": _pads(padding, kernel, dilation),
        "dilation": dilation,
        "groups": 1,
        "out_dtype": out_dtype,
        "data_layout": "NCHW",
        "kernel_layout": "OIHW",
    }
    wl = OpWorkload.of("nn.conv2d", data, kernel, attrs)
    return select("nn.conv2d", wl).compute(data, kernel, wl)


def schedule_conv2d_nchw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`conv2d_nchw` and the elementwise stages after it."""
    return schedule_default(outs)


def depthwise_conv2d_nchw(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: int | str | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Depthwise convolution of ``data [N, C, H, W]`` with ``kernel [C, M, KH, KW]``."""
    pads = _pads(padding, kernel, dilation)
    width = const_int(data.shape[3])
    if width is not None and max(pads[1], pads[3]) <= width:
        return nn.depthwise_conv2d_nchw_rows(data, kernel, strides, pads, dilation, out_dtype)
    return nn.depthwise_conv2d_nchw(data, kernel, strides, pads, dilation, out_dtype)


def schedule_depthwise_conv2d_nchw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`depthwise_conv2d_nchw` and the elementwise stages after it."""
    return schedule_default(outs)


def conv2d_nhwc(
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: int | str | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of ``data [N, H, W, C]`` with ``kernel [KH, KW, C, F]`` (HWIO), giving
    ``[N, OH, OW, F]``.
    """
    nchw = transpose(data, (0, 3, 1, 2))
    oihw = transpose(kernel, (3, 2, 0, 1))
    out = conv2d_nchw(nchw, oihw, strides, padding, dilation, out_dtype)
    return transpose(out, (0, 2, 3, 1))


def schedule_conv2d_nhwc(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of an NHWC convolution: :func:`conv2d_nhwc`'s NCHW kernel by its anchor, any
    other convolution stage (``topi.nn.conv2d_nhwc``) as a reduction (all data-parallel axes
    in parallel, the window innermost).
    """
    if anchor_tag(outs) is not None:
        return schedule_default(outs)
    return schedule_reduce(outs)
