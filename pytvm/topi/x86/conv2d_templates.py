"""TVM's x86 convolution entry points (``topi.x86.conv2d_nchw``, ``conv2d_nhwc``,
``depthwise_conv2d_nchw`` and their schedules) over pytvm's kernels.

The compute picks the implementation pytvm's strategy table (:mod:`.strategy`) would pick for a
non-constant kernel: the pointwise convolution when it applies, else the direct one; depthwise
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
from ..transform import transpose
from .default import schedule_default
from .strategy import Workload, select

__all__ = [
    "conv2d_nchw",
    "conv2d_nhwc",
    "depthwise_conv2d_nchw",
    "pad_tuple",
    "schedule_conv2d_nchw",
    "schedule_conv2d_nhwc",
    "schedule_depthwise_conv2d_nchw",
]

_PADS = 4


def pad_tuple(padding: int | str | Sequence[int], kernel: Sequence[int]) -> tuple[int, ...]:
    """``(top, left, bottom, right)`` of a convolution's ``padding``: an int, one value per
    axis, four values, ``"VALID"`` or ``"SAME"`` (``kernel - 1`` in all, the odd one after).

    Examples
    --------
    >>> pad_tuple("SAME", (3, 3))
    (1, 1, 1, 1)
    >>> pad_tuple((1, 2), (3, 3))
    (1, 2, 1, 2)
    """
    if isinstance(padding, str):
        if padding == "VALID":
            return (0, 0, 0, 0)
        if padding == "SAME":
            ph, pw = kernel[0] - 1, kernel[1] - 1
            top, left = (ph + 1) // 2, (pw + 1) // 2
            return (top, left, ph - top, pw - left)
        raise TVMValueError(f"padding {padding!r}; expected 'SAME', 'VALID' or ints")
    vals = [padding] if isinstance(padding, int) else [int(p) for p in padding]
    if len(vals) == 1:
        vals = vals * _PADS
    elif len(vals) == 2:  # noqa: PLR2004
        vals = vals * 2
    if len(vals) != _PADS:
        raise TVMValueError(f"padding {padding!r}; expected 1, 2 or 4 ints, 'SAME' or 'VALID'")
    return tuple(vals)


def _kernel_hw(kernel: Tensor) -> tuple[int, int]:
    kh, kw = const_int(kernel.shape[2]), const_int(kernel.shape[3])
    if kh is None or kw is None:
        raise TVMValueError(f"convolution kernel shape {kernel.shape}: expected constant KH, KW")
    return kh, kw


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
        "padding": pad_tuple(padding, _kernel_hw(kernel)),
        "dilation": dilation,
        "groups": 1,
        "out_dtype": out_dtype,
        "data_layout": "NCHW",
        "kernel_layout": "OIHW",
    }
    wl = Workload.of("nn.conv2d", data, kernel, attrs)
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
    pads = pad_tuple(padding, _kernel_hw(kernel))
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
    """Schedule of :func:`conv2d_nhwc`."""
    return schedule_default(outs)
