"""Integer convolutions of 8-bit codes less their zero point by an int8 kernel, computed
exactly in float32 lanes by a float convolution's compute: the operand stages and the int32
result shared by :mod:`.pointwise_int8` and :func:`conv2d_nchw_phases_int8`.

The products ``(x - zero_point) * w`` and their sums over ``terms`` products are integers below
``terms * max|x - zero_point| * 128``; while that stays below ``2**24`` float32 holds them
exactly (:func:`~pytvm.topi.nn.depthwise_int8_accumulator`), so a float kernel whose lanes
are output pixels (no transposition out of channel lanes, as the 8-bit dot-product kernel
needs) computes the int32 convolution; past it the same compute runs in int32.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import const
from .. import tag
from .._shape import const_shape, op_error
from .conv2d_phases import conv2d_nchw_phases
from .depthwise_int8 import depthwise_int8_accumulator

__all__ = ["conv2d_nchw_phases_int8", "exact_int8_operands", "int32_result"]

_NCHW = 4


def exact_int8_operands(
    op: str, data: Tensor, kernel: Tensor, zero_point: int, terms: int
) -> tuple[Tensor, Tensor, str]:
    """``(data - zero_point, kernel, dtype)`` as stages of the accumulators' dtype for sums of
    ``terms`` products (the taps converted once per call, a stage of their own).
    """
    if data.dtype not in ("uint8", "int8") or kernel.dtype != "int8":
        raise op_error(
            op, "operands", (data.dtype, kernel.dtype), "uint8 or int8 data, int8 kernel"
        )
    acc = depthwise_int8_accumulator(data.dtype, zero_point, terms)
    shifted = compute(
        data.shape,
        lambda *i: data(*i).astype(acc) - const(zero_point, acc),
        name="qnn_shifted",
        tag=tag.ELEMWISE,
    )
    taps = compute(kernel.shape, lambda *i: kernel(*i).astype(acc), name="qnn_taps")
    return shifted, taps, acc


def int32_result(out: Tensor) -> Tensor:
    """``out`` (exact integers) as int32."""
    if out.dtype == "int32":
        return out
    return compute(out.shape, lambda *i: out(*i).astype("int32"), name="qnn_acc", tag=tag.ELEMWISE)


def conv2d_nchw_phases_int8(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    zero_point: int = 0,
) -> Tensor:
    """``sum((data - zero_point) * kernel)`` in int32 for one group (8-bit ``data [N, C, H,
    W]`` padded with its zero point, int8 ``kernel [F, C, KH, KW]``) through
    :func:`~pytvm.topi.nn.conv2d_nchw_phases` (a convolution strided along the width).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 16, 16), "uint8", name="x")
    >>> w = te.placeholder((8, 3, 3, 3), "int8", name="w")
    >>> y = topi.nn.conv2d_nchw_phases_int8(x, w, 2, 1, 1, 128)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '8', '8', '8'], 'int32')
    """
    op = "conv2d_nchw_phases_int8"
    _, c, kh, kw = const_shape(op, "filter", kernel, _NCHW)
    shifted, taps, acc = exact_int8_operands(op, data, kernel, zero_point, c * kh * kw)
    return int32_result(conv2d_nchw_phases(shifted, taps, stride, padding, dilation, acc))
