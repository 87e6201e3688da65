"""Pointwise (1x1, stride 1, unpadded) NCHW convolution of 8-bit codes less their zero point
with an int8 kernel, accumulated exactly in the pixel lanes: ``conv2d_nchw_pointwise_int8``.

The 8-bit dot-product kernel (:func:`~pytvm.topi.nn.conv2d_nchw_int8`) holds output channels
in its vector lanes, so each output vector is transposed into rows on the way out; with few
input channels that transposition outweighs the products. Here the lanes are pixels, as in
:func:`~pytvm.topi.nn.conv2d_nchw_pointwise` (a run of pixels is contiguous in the input and
the output), and the products ``(x - zero_point) * w`` are summed in float32, exact while
``C * max|x - zero_point| * 128 < 2**24``, else in int32 (:mod:`.conv2d_int8_lanes`).
"""

from __future__ import annotations

from ...te.tensor import Tensor
from .._shape import const_shape
from .conv2d_int8_lanes import exact_int8_operands, int32_result
from .conv2d_pointwise import conv2d_nchw_pointwise

__all__ = ["conv2d_nchw_pointwise_int8"]

_NCHW = 4


def conv2d_nchw_pointwise_int8(data: Tensor, kernel: Tensor, zero_point: int = 0) -> Tensor:
    """``sum_c (data[n, c, p] - zero_point) * kernel[f, c]`` in int32: 8-bit ``data [N, C, H,
    W]``, an int8 1x1 ``kernel [F, C, 1, 1]`` (stride 1, no padding).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 8, 4, 4), "uint8", name="x")
    >>> w = te.placeholder((16, 8, 1, 1), "int8", name="w")
    >>> y = topi.nn.conv2d_nchw_pointwise_int8(x, w, 128)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '16', '4', '4'], 'int32')
    """
    op = "conv2d_nchw_pointwise_int8"
    _, c, _, _ = const_shape(op, "filter", kernel, _NCHW)
    shifted, taps, acc = exact_int8_operands(op, data, kernel, zero_point, c)
    return int32_result(conv2d_nchw_pointwise(shifted, taps, acc))
