"""NCHW convolution of uint8 data and int8 weights accumulated in int32 through 8-bit dot
products: ``conv2d_nchw_int8`` (TVM's x86 int8 layout idea: output channels in vector-wide
blocks, input channels grouped in fours).

The kernel is given packed (:func:`conv2d_int8_kernel_pack`, at build time for a constant
weight): ``[ceil(F / fb), ceil(C / 4), KH, KW, fb]`` int32, each int32 holding the int8 weights
of four consecutive input channels (byte ``k`` is channel ``4i + k``; channels past ``C`` and
``F`` are zero), layout ``OIHW{fb}o4i``. The data is packed in the kernel the same way, as a
stage ``[N, ceil(C / 4), H + pads, W + pads]`` of uint32 (the four channels' bytes, zero-padded
spatially and past ``C``). Each step of the reduction (over channel quads and kernel taps) is one
``tir.x86.dot_u8s8_s32``: four u8 x s8 products per output channel lane, added in int32 — one
``vpdpbusd`` per vector of output channels on VNNI CPUs. The result is channel-blocked
``[N, ceil(F / fb), OH, OW, fb]`` (tag ``conv2d_nchw_packed,int8``), read back into
``[N, F, OH, OW]`` int32 by an injective stage.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.dot_product import dot_u8s8_s32
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import floordiv, floormod, if_then_else
from ...tir.op import max as _max
from ...tir.op import min as _min
from .. import tag
from .._shape import const_shape, op_error
from .conv_window import conv_window

__all__ = ["CONV2D_NCHW_INT8", "conv2d_int8_kernel_pack", "conv2d_nchw_int8"]

#: Tag of the channel-blocked product stage.
CONV2D_NCHW_INT8 = tag.CONV2D_NCHW_INT8
_QUAD = 4
_NCHW = 4
_PACKED_NDIM = 5


def conv2d_int8_kernel_pack(weight: np.ndarray, fb: int) -> np.ndarray:
    """An int8 ``weight [F, C, KH, KW]`` as the int32 ``[ceil(F / fb), ceil(C / 4), KH, KW,
    fb]`` of :func:`conv2d_nchw_int8` (four input channels' bytes per int32, zero-filled).

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm.topi.nn import conv2d_int8_kernel_pack
    >>> w = np.arange(2 * 5, dtype="int8").reshape(2, 5, 1, 1)
    >>> conv2d_int8_kernel_pack(w, 2).shape
    (1, 2, 1, 1, 2)
    >>> hex(int(conv2d_int8_kernel_pack(w, 2)[0, 0, 0, 0, 1]))  # channels 0-3 of filter 1
    '0x8070605'
    """
    if weight.dtype != np.int8 or weight.ndim != _NCHW:
        raise op_error(
            "conv2d_int8_kernel_pack", "weight", f"{weight.dtype} {weight.shape}", "int8 OIHW"
        )
    if fb < 1:
        raise op_error("conv2d_int8_kernel_pack", "fb", fb, "a positive block of channels")
    f, c, kh, kw = weight.shape
    fo, c4 = -(-f // fb), -(-c // _QUAD)
    full = np.zeros((fo * fb, c4 * _QUAD, kh, kw), dtype=np.int8)
    full[:f, :c] = weight
    blocks = full.reshape(fo, fb, c4, _QUAD, kh, kw).transpose(0, 2, 4, 5, 1, 3)
    return np.ascontiguousarray(blocks).view("<i4").reshape(fo, c4, kh, kw, fb).astype("int32")


def _pack_data(data: Tensor, pads: tuple[int, int, int, int]) -> Tensor:
    """``data [N, C, H, W]`` uint8 as ``[N, ceil(C / 4), H + pads, W + pads]`` uint32 quads."""
    n, c, h, w = (int(d) for d in const_shape("conv2d_nchw_int8", "input", data, _NCHW))
    top, left, bottom, right = pads

    def body(b: Var, q: Var, y: Var, x: Var) -> PrimExpr:
        row, col = y - top, x - left
        inside = []
        if top:
            inside.append(row >= 0)
        if bottom:
            inside.append(row < h)
        if left:
            inside.append(col >= 0)
        if right:
            inside.append(col < w)
        row_c = _min(_max(row, 0), h - 1) if top or bottom else row
        col_c = _min(_max(col, 0), w - 1) if left or right else col
        word: PrimExpr = const(0, "uint32")
        for k in range(_QUAD):
            ch = q * _QUAD + k
            if (c - 1) // _QUAD * _QUAD + k < c:  # every quad has channel k
                byte = data(b, ch, row_c, col_c).astype("uint32")
            else:
                byte = if_then_else(
                    ch < c, data(b, _min(ch, c - 1), row_c, col_c).astype("uint32"), 0
                )
            word = word + byte * const(1 << (8 * k), "uint32") if k else byte
        if not inside:
            return word
        cond = inside[0]
        for more in inside[1:]:
            cond = cond & more
        return if_then_else(cond, word, const(0, "uint32"))

    shape = (n, -(-c // _QUAD), h + top + bottom, w + left + right)
    return compute(shape, body, name="data_quads", tag=tag.INJECTIVE + ",pad")


def _dot4(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """The four byte products of ``a`` (u8) and ``b`` (s8) summed, in int32 arithmetic."""
    wide = a.astype("int64")
    total: PrimExpr = const(0, "int32")
    for k in range(_QUAD):
        ua = floormod(floordiv(wide, 1 << (8 * k)), 256).astype("int32")
        ub = floormod(floordiv(b, 1 << (8 * k)), 256)
        sb = ub - (ub >= 128).astype("int32") * 256  # noqa: PLR2004
        total = total + ua * sb
    return total


def conv2d_nchw_int8(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    channels: int | None = None,
    dot_instruction: bool = True,
) -> Tensor:
    """int32 convolution of uint8 ``data [N, C, H, W]`` (zero-padded) with a packed int8
    ``kernel`` (:func:`conv2d_int8_kernel_pack`); the result has the first ``channels`` of the
    ``ceil(F / fb) * fb`` output channels (default: all). ``dot_instruction``: each step is
    ``tir.x86.dot_u8s8_s32`` (for targets with VNNI); else the same sum in plain arithmetic.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 6, 9, 9), "uint8", name="x")
    >>> w = te.placeholder((2, 2, 3, 3, 16), "int32", name="w")
    >>> y = topi.nn.conv2d_nchw_int8(x, w, 1, 1, 1, channels=20)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '20', '9', '9'], 'int32')
    """
    op = "conv2d_nchw_int8"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    fo, c4, kh, kw, fb = const_shape(op, "packed kernel", kernel, _PACKED_NDIM)
    if data.dtype != "uint8" or kernel.dtype != "int32":
        raise op_error(
            op, "dtypes", (data.dtype, kernel.dtype), "uint8 data and an int32 packed kernel"
        )
    if c4 != -(-c // _QUAD):
        raise op_error(op, "kernel channel quads", c4, f"ceil({c} / 4) for {c} input channels")
    f = fo * fb if channels is None else int(channels)
    if not (fo - 1) * fb < f <= fo * fb:
        raise op_error(op, "channels", channels, f"{(fo - 1) * fb + 1} to {fo * fb}")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, "int32")
    oh, ow = win.output_size(h, w)
    quads = _pack_data(data, win.padding)
    ry, rx = win.ry, win.rx
    rq = reduce_axis((0, c4), name="rq")

    def body(b: Var, o: Var, y: Var, x: Var, i: Var) -> PrimExpr:
        a = quads(b, rq.var, *win.taps(y, x))
        k = kernel(o, rq.var, ry.var, rx.var, i)
        value = dot_u8s8_s32(const(0, "int32"), a, k) if dot_instruction else _dot4(a, k)
        return _sum(value, axis=[rq, ry, rx])  # type: ignore[no-any-return]

    blocked = compute((n, fo, oh, ow, fb), body, name="conv2d_nchw_int8", tag=CONV2D_NCHW_INT8)

    def unpack(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        return blocked(b, ch // fb, y, x, ch % fb)

    return compute((n, f, oh, ow), unpack, name="conv2d_nchw_int8_unpack", tag=tag.INJECTIVE)
