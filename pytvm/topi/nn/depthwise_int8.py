"""Depthwise NCHW convolution of 8-bit codes less their zero point with an int8 kernel,
accumulated exactly: ``depthwise_conv2d_nchw_int8``.

8-bit dot products (``vpdpbusd``) sum four input channels, which a depthwise convolution does not
have, so the products run in the lanes of the padded row planes of
:func:`~pytvm.topi.nn.depthwise_conv2d_nchw_rows` (one channel at a time), or, for a kernel
packed in channel blocks (``[ceil(C / cb), 1, KH, KW, cb]``), in the channel lanes of
:func:`~pytvm.topi.nn.depthwise_conv2d_nchw_channels`. Their operands are
``x - zero_point`` (at most 255 in magnitude) and an int8 tap (at most 128), so every partial sum
of ``KH * KW`` taps is an integer below ``KH * KW * 255 * 128``: while that stays below
``2**24`` the sums are exact in float32, whose multiply-add is one instruction in full-width
vectors (int32 has none), so the accumulators are float32 and the result converts to int32
without rounding; past it (kernels of more than 514 taps) they are int32.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import const
from .. import tag
from .._shape import const_shape, op_error
from .depthwise import depthwise_conv2d_nchw_rows
from .depthwise_channels import depthwise_conv2d_nchw_channels

__all__ = ["depthwise_conv2d_nchw_int8", "depthwise_int8_accumulator"]

_NCHW = 4
#: Integers up to this magnitude are exact in float32.
_FLOAT32_EXACT = 1 << 24
_INT8_MAX_MAGNITUDE = 128


def depthwise_int8_accumulator(data_dtype: str, zero_point: int, taps: int) -> str:
    """The dtype whose sums of ``taps`` products of ``data - zero_point`` (8-bit data) and an
    int8 tap are exact and fastest: float32 while they stay below ``2**24``, else int32.

    Examples
    --------
    >>> depthwise_int8_accumulator("uint8", 128, 9), depthwise_int8_accumulator("uint8", 0, 600)
    ('float32', 'int32')
    """
    lo, hi = (0, 255) if data_dtype == "uint8" else (-128, 127)
    largest = max(abs(hi - zero_point), abs(lo - zero_point))
    exact = taps * largest * _INT8_MAX_MAGNITUDE < _FLOAT32_EXACT
    return "float32" if exact else "int32"


def depthwise_conv2d_nchw_int8(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    zero_point: int = 0,
) -> Tensor:
    """``sum((data - zero_point) * kernel)`` in int32 over each channel's window: 8-bit
    ``data [N, C, H, W]`` padded with its zero point, int8 ``kernel [C, M, KH, KW]`` (``C * M``
    output channels; padded row planes) or ``[ceil(C / cb), 1, KH, KW, cb]`` (one filter a
    channel, in channel blocks); see the module for the accumulators.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 8, 14, 14), "uint8", name="x")
    >>> w = te.placeholder((8, 1, 3, 3), "int8", name="w")
    >>> y = topi.nn.depthwise_conv2d_nchw_int8(x, w, 2, 1, 1, 128)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '8', '7', '7'], 'int32')
    """
    op = "depthwise_conv2d_nchw_int8"
    if data.dtype not in ("uint8", "int8") or kernel.dtype != "int8":
        raise op_error(
            op, "operands", (data.dtype, kernel.dtype), "uint8 or int8 data, int8 kernel"
        )
    if kernel.ndim == _NCHW + 1:
        _, _, kh, kw, _ = const_shape(op, "filter", kernel, _NCHW + 1)
    else:
        _, _, kh, kw = const_shape(op, "filter", kernel, _NCHW)
    acc = depthwise_int8_accumulator(data.dtype, zero_point, kh * kw)
    shifted = compute(
        data.shape,
        lambda *i: data(*i).astype(acc) - const(zero_point, acc),
        name="qnn_shifted",
        tag=tag.ELEMWISE,
    )
    taps = compute(
        kernel.shape, lambda *i: kernel(*i).astype(acc), name="qnn_taps", tag=tag.ELEMWISE
    )
    if kernel.ndim == _NCHW + 1:
        out = depthwise_conv2d_nchw_channels(shifted, taps, stride, padding, dilation, acc)
    else:
        out = depthwise_conv2d_nchw_rows(shifted, taps, stride, padding, dilation, acc)
    if acc == "int32":
        return out
    return compute(out.shape, lambda *i: out(*i).astype("int32"), name="qnn_acc", tag=tag.ELEMWISE)
