"""2-d convolutions in NCHW: ``conv2d_nchw``, ``group_conv2d_nchw``, ``depthwise_conv2d_nchw``.

Stride, dilation and padding are read as :mod:`.conv_window` describes. A padded input is its
own stage named ``pad_temp`` (a schedule inlines it or computes it where it is read).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import const_shape, op_error
from .conv_nd import conv, conv2d_hwcn, conv2d_nhwc
from .conv_window import conv_window
from .utils import get_pad_tuple

__all__ = [
    "conv2d",
    "conv2d_nchw",
    "depthwise_conv2d_nchw",
    "group_conv2d_nchw",
]

_NCHW = 4


def explicit_padding(
    padding: Any, kernel: tuple[int, int], dilation: int | Sequence[int]
) -> int | Sequence[int]:
    """``padding`` as ints: ``"SAME"``/``"VALID"`` become ``(top, left, bottom, right)`` over
    the dilated kernel, as TVM computes them.
    """
    if not isinstance(padding, str):
        return padding  # type: ignore[no-any-return]
    dh, dw = (dilation, dilation) if isinstance(dilation, int) else tuple(dilation)
    dilated = ((kernel[0] - 1) * int(dh) + 1, (kernel[1] - 1) * int(dw) + 1)
    return tuple(int(p) for p in get_pad_tuple(padding, dilated))


def _conv(
    op: str,
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int,
    out_dtype: str | None,
    kind: str,
) -> Tensor:
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    f, kc, kh, kw = const_shape(op, "filter", kernel, _NCHW)
    padding = explicit_padding(padding, (kh, kw), dilation)
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    if groups < 1 or c % groups or f % groups:
        raise op_error(op, "groups", groups, f"a divisor of input channels {c} and filters {f}")
    if kc * groups != c:
        raise op_error(op, "filter channels", kc, f"input channels / groups = {c // groups}")
    oh, ow = win.output_size(h, w)
    src = win.padded(data)
    dtype, ry, rx = win.dtype, win.ry, win.rx
    rc = reduce_axis((0, kc), name="rc")
    per_group = f // groups

    def body(b: Var, ff: Var, y: Var, x: Var) -> PrimExpr:
        chan = rc.var if groups == 1 else ff // per_group * kc + rc.var
        a = src(b, chan, *win.taps(y, x))
        k = kernel(ff, rc.var, ry.var, rx.var)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[rc, ry, rx])  # type: ignore[no-any-return]

    name = "conv2d_nchw" if groups == 1 else "group_conv2d_nchw"
    return compute((n, f, oh, ow), body, name=name, tag=kind)


def conv2d_nchw(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of ``Input [N, C, H, W]`` with ``Filter [F, C, KH, KW]``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 9, 9), name="x")
    >>> w = te.placeholder((8, 3, 3, 3), name="w")
    >>> [str(d) for d in topi.nn.conv2d_nchw(x, w, 2, 1, 1).shape]
    ['1', '8', '5', '5']
    """
    return _conv(
        "conv2d_nchw", Input, Filter, stride, padding, dilation, 1, out_dtype, tag.CONV2D_NCHW
    )


def group_conv2d_nchw(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int,
    out_dtype: str | None = None,
) -> Tensor:
    """Grouped convolution: ``Filter [F, C // groups, KH, KW]``, filters split into groups."""
    return _conv(
        "group_conv2d_nchw",
        Input,
        Filter,
        stride,
        padding,
        dilation,
        groups,
        out_dtype,
        tag.GROUP_CONV2D_NCHW,
    )


def depthwise_conv2d_nchw(
    Input: Tensor,
    Filter: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Depthwise convolution: ``Filter [C, M, KH, KW]`` gives ``C * M`` output channels."""
    op = "depthwise_conv2d_nchw"
    n, c, h, w = const_shape(op, "input", Input, _NCHW)
    fc, mult, kh, kw = const_shape(op, "filter", Filter, _NCHW)
    if fc != c:
        raise op_error(op, "filter channels", fc, f"input channels {c}")
    padding = explicit_padding(padding, (kh, kw), dilation)
    win = conv_window(op, Input, (kh, kw), stride, padding, dilation, out_dtype)
    oh, ow = win.output_size(h, w)
    src = win.padded(Input)
    dtype, ry, rx = win.dtype, win.ry, win.rx

    def body(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        ic = ch if mult == 1 else ch // mult
        a = src(b, ic, *win.taps(y, x))
        k = Filter(ic, 0 if mult == 1 else ch % mult, ry.var, rx.var)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[ry, rx])  # type: ignore[no-any-return]

    return compute(
        (n, c * mult, oh, ow), body, name="depthwise_conv2d_nchw", tag=tag.DEPTHWISE_CONV2D_NCHW
    )


def conv2d(
    input: Tensor,
    filter: Tensor,
    strides: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    data_layout: str = "NCHW",
    kernel_layout: str = "",
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution in ``data_layout``: ``NCHW`` (``OIHW`` kernel), ``NHWC`` or ``HWCN``
    (``HWIO`` kernels); other layout pairs go through :func:`conv`.
    """
    if data_layout == "NCHW" and kernel_layout in ("", "OIHW"):
        return conv2d_nchw(input, filter, strides, padding, dilation, out_dtype)
    if data_layout == "NHWC" and kernel_layout in ("", "HWIO"):
        return conv2d_nhwc(input, filter, strides, padding, dilation, out_dtype)
    if data_layout == "HWCN" and kernel_layout in ("", "HWIO"):
        return conv2d_hwcn(input, filter, strides, padding, dilation, out_dtype)
    return conv(input, filter, strides, padding, dilation, 1, data_layout, kernel_layout, out_dtype)
