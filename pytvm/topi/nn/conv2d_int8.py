"""NCHW convolution of 8-bit data and int8 weights accumulated in int32 through 8-bit dot
products: ``conv2d_nchw_int8`` (TVM's x86 int8 layout idea: output channels in vector-wide
blocks, input channels grouped in fours), computing ``sum((x - zero_point) * w)`` with the data
padded by its zero point (``qnn.conv2d``'s semantics with a weight zero point of 0).

The kernel is packed (:func:`conv2d_int8_kernel_pack`, at build time for a constant weight;
:func:`conv2d_int8_kernel_pack_te` in the kernel otherwise): ``[ceil(F / fb), ceil(C / 4), KH,
KW, fb]`` int32, each int32 holding the int8 weights of four consecutive input channels (byte
``k`` is channel ``4i + k``; channels past ``C`` and ``F`` are zero), layout ``OIHW{fb}o4i``.
The data is packed in the kernel the same way, as a stage ``[N, ceil(C / 4), H + pads, W +
pads]`` of uint32 (the four channels' bytes, int8 data shifted by +128 into uint8, padded
spatially with the zero point's byte and past ``C`` with zeros). Each step of the reduction
(over channel quads and kernel taps) is one ``tir.x86.dot_u8s8_s32``: four u8 x s8 products per
output channel lane, added in int32 — one ``vpdpbusd`` per vector of output channels on VNNI
CPUs. The zero point's share, ``zero_point * sum(w[f])``, is subtracted as the channel-blocked
result ``[N, ceil(F / fb), OH, OW, fb]`` (tag ``conv2d_nchw_packed,int8``) is read back into
``[N, F, OH, OW]`` int32 by an injective stage; the weight sums are a small stage of their own
(the same dot product with bytes of ones).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import numpy as np

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.dot_product import dot_u8s8_s32
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import floormod, if_then_else, reinterpret, truncdiv, truncmod
from ...tir.op import max as _max
from ...tir.op import min as _min
from .. import tag
from .._shape import const_shape, op_error
from .._target import vector_lanes
from .conv_window import conv_window

__all__ = [
    "CONV2D_NCHW_INT8",
    "DATA_QUADS",
    "KERNEL_WORDS",
    "WEIGHT_SUMS",
    "conv2d_int8_kernel_pack",
    "conv2d_int8_kernel_pack_te",
    "conv2d_nchw_int8",
]

#: Tag of the channel-blocked product stage.
CONV2D_NCHW_INT8 = tag.CONV2D_NCHW_INT8
#: Name of the stage of data quads (four channels' bytes per uint32 word).
DATA_QUADS = "data_quads"
#: Name of the stage packing a weight that is not a constant.
KERNEL_WORDS = "kernel_words"
#: Name of the stage of per-output-channel weight sums (for the zero point's share).
WEIGHT_SUMS = "weight_sums"
#: Four bytes of 1: the dot product with it sums a word's four signed bytes.
_ONES = 0x01010101
_SHIFT = 128  # int8 data + 128 is uint8
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


def conv2d_int8_kernel_pack_te(weight: Tensor, fb: int) -> Tensor:
    """:func:`conv2d_int8_kernel_pack` as a stage: an int8 ``weight [F, C, KH, KW]`` tensor
    packed into ``[ceil(F / fb), ceil(C / 4), KH, KW, fb]`` int32 words (for a weight that is
    not a constant).
    """
    op = "conv2d_int8_kernel_pack_te"
    f, c, kh, kw = (int(d) for d in const_shape(op, "weight", weight, _NCHW))
    if weight.dtype != "int8" or fb < 1:
        raise op_error(op, "weight, fb", (weight.dtype, fb), "an int8 weight, a positive fb")

    def body(o: Var, q: Var, y: Var, x: Var, i: Var) -> PrimExpr:
        ch = o * fb + i
        word: PrimExpr = const(0, "uint32")
        for k in range(_QUAD):
            cin = q * _QUAD + k
            inside = (ch < f) & (cin < c)
            value = weight(_min(ch, f - 1), _min(cin, c - 1), y, x).astype("int32")
            byte = floormod(if_then_else(inside, value, 0), 256).astype("uint32")
            word = word + byte * const(1 << (8 * k), "uint32") if k else byte
        return word.astype("int32")

    shape = (-(-f // fb), -(-c // _QUAD), kh, kw, fb)
    return compute(shape, body, name=KERNEL_WORDS, tag=tag.INJECTIVE)


Dot4 = Callable[[PrimExpr, PrimExpr], PrimExpr]


def _weight_sums(kernel: Tensor, dot: Dot4, name: str = WEIGHT_SUMS) -> Tensor:
    """``[ceil(F / fb), fb]`` int32: the sum of each output channel's int8 weights (``dot`` of
    bytes of one with each weight word).
    """
    fo, c4, kh, kw, fb = const_shape(name, "packed kernel", kernel, _PACKED_NDIM)
    rq, ry, rx = reduce_axis((0, c4), "wq"), reduce_axis((0, kh), "wy"), reduce_axis((0, kw), "wx")
    ones = const(_ONES, "uint32")

    def body(o: Var, i: Var) -> PrimExpr:
        k = kernel(o, rq.var, ry.var, rx.var, i)
        return _sum(dot(ones, k), axis=[rq, ry, rx])  # type: ignore[no-any-return]

    return compute((fo, fb), body, name=name, tag=tag.COMM_REDUCE)


def _pack_data(data: Tensor, pads: tuple[int, int, int, int], zero: int) -> Tensor:
    """``data [N, C, H, W]`` 8-bit as ``[N, ceil(C / 4), H + pads, W + pads]`` uint32 quads
    (int8 shifted into uint8), padded spatially with the byte ``zero`` (uint8 space).
    """
    n, c, h, w = (int(d) for d in const_shape("conv2d_nchw_int8", "input", data, _NCHW))
    top, left, bottom, right = pads
    signed = data.dtype == "int8"

    def byte_of(b: PrimExpr, ch: PrimExpr, y: PrimExpr, x: PrimExpr) -> PrimExpr:
        v = data(b, ch, y, x)
        if signed:
            return (v.astype("int32") + _SHIFT).astype("uint32")
        return v.astype("uint32")

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
                byte = byte_of(b, ch, row_c, col_c)
            else:
                byte = if_then_else(ch < c, byte_of(b, _min(ch, c - 1), row_c, col_c), 0)
            word = word + byte * const(1 << (8 * k), "uint32") if k else byte
        if not inside:
            return word
        cond = inside[0]
        for more in inside[1:]:
            cond = cond & more
        # the zero point in every byte (the bytes past C meet zero weights)
        pad_word = const(zero * _ONES, "uint32")
        return if_then_else(cond, word, pad_word)

    shape = (n, -(-c // _QUAD), h + top + bottom, w + left + right)
    return compute(shape, body, name=DATA_QUADS, tag=tag.INJECTIVE + ",pad")


def _dot4(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """The four byte products of ``a`` (u8) and ``b`` (s8) summed, in int32 arithmetic (bytes
    taken by unsigned division and remainder by powers of two: shifts and masks).
    """
    bits = reinterpret("uint32", b)
    total: PrimExpr = const(0, "int32")
    for k in range(_QUAD):
        shift, byte = const(1 << (8 * k), "uint32"), const(256, "uint32")
        ua = truncmod(truncdiv(a, shift), byte).astype("int32")
        ub = truncmod(truncdiv(bits, shift), byte).astype("int32")
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
    zero_point: int = 0,
) -> Tensor:
    """int32 convolution ``sum((x - zero_point) * w)`` of uint8 or int8 ``data [N, C, H, W]``
    (padded with ``zero_point``) and a packed int8 ``kernel`` (:func:`conv2d_int8_kernel_pack`,
    or a plain int8 ``[F, C, KH, KW]`` weight, packed by a stage in blocks of an int32 vector);
    the result has the first ``channels`` of the ``ceil(F / fb) * fb`` output channels (default:
    all). ``dot_instruction``: each step is ``tir.x86.dot_u8s8_s32`` (for targets with VNNI);
    else the same sum in plain arithmetic.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 6, 9, 9), "uint8", name="x")
    >>> w = te.placeholder((2, 2, 3, 3, 16), "int32", name="w")
    >>> y = topi.nn.conv2d_nchw_int8(x, w, 1, 1, 1, channels=20, zero_point=128)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '20', '9', '9'], 'int32')
    """
    if kernel.dtype == "int8" and len(kernel.shape) == _NCHW:
        plain = const_shape("conv2d_nchw_int8", "weight", kernel, _NCHW)
        channels = plain[0] if channels is None else channels
        kernel = conv2d_int8_kernel_pack_te(kernel, max(1, vector_lanes("int32")))

    def dot(a: PrimExpr, k: PrimExpr) -> PrimExpr:
        return dot_u8s8_s32(const(0, "int32"), a, k) if dot_instruction else _dot4(a, k)

    return conv2d_nchw_int8_blocked(
        "conv2d_nchw_int8",
        data,
        kernel,
        (stride, padding, dilation),
        channels,
        zero_point,
        dot,
        CONV2D_NCHW_INT8,
    )


def conv2d_nchw_int8_blocked(
    op: str,
    data: Tensor,
    kernel: Tensor,
    window: tuple[int | Sequence[int], int | Sequence[int], int | Sequence[int]],
    channels: int | None,
    zero_point: int,
    dot: Dot4,
    anchor_tag: str,
    sums_name: str = WEIGHT_SUMS,
) -> Tensor:
    """The channel-blocked int8 convolution of :func:`conv2d_nchw_int8` with ``dot`` as its
    reduction step (the four byte products of a uint8 data word and an int8 weight word,
    summed): stages of data quads, the ``anchor_tag`` product named ``op`` over ``[N,
    ceil(F / fb), OH, OW, fb]``, the weight sums ``sums_name`` for a zero point, and the
    ``[N, F, OH, OW]`` result. ``kernel`` is packed ``OIHW<fb>o4i`` (a plain ``[F, C, KH, KW]``
    int8 weight gives ``channels``); ``window`` is ``(stride, padding, dilation)``.
    """
    stride, padding, dilation = window
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    if kernel.dtype == "int8" and len(kernel.shape) == _NCHW:
        raise op_error(op, "kernel", kernel.shape, "a packed OIHW<fb>o4i int32 kernel")
    fo, c4, kh, kw, fb = const_shape(op, "packed kernel", kernel, _PACKED_NDIM)
    if data.dtype not in ("uint8", "int8") or kernel.dtype != "int32":
        raise op_error(
            op, "dtypes", (data.dtype, kernel.dtype), "8-bit data and an int32 packed kernel"
        )
    info = np.iinfo(np.dtype(data.dtype))
    if not info.min <= zero_point <= info.max:
        raise op_error(op, "zero_point", zero_point, f"a {data.dtype} value")
    if c4 != -(-c // _QUAD):
        raise op_error(op, "kernel channel quads", c4, f"ceil({c} / 4) for {c} input channels")
    f = fo * fb if channels is None else int(channels)
    if not (fo - 1) * fb < f <= fo * fb:
        raise op_error(op, "channels", channels, f"{(fo - 1) * fb + 1} to {fo * fb}")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, "int32")
    oh, ow = win.output_size(h, w)
    zero = int(zero_point) + (_SHIFT if data.dtype == "int8" else 0)  # in uint8 space
    quads = _pack_data(data, win.padding, zero)
    ry, rx = win.ry, win.rx
    rq = reduce_axis((0, c4), name="rq")

    def body(b: Var, o: Var, y: Var, x: Var, i: Var) -> PrimExpr:
        a = quads(b, rq.var, *win.taps(y, x))
        k = kernel(o, rq.var, ry.var, rx.var, i)
        return _sum(dot(a, k), axis=[rq, ry, rx])  # type: ignore[no-any-return]

    blocked = compute((n, fo, oh, ow, fb), body, name=op, tag=anchor_tag)
    sums = _weight_sums(kernel, dot, sums_name) if zero else None

    def unpack(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        value = blocked(b, ch // fb, y, x, ch % fb)
        if sums is None:
            return value
        return value - sums(ch // fb, ch % fb) * const(zero, "int32")

    return compute((n, f, oh, ow), unpack, name=f"{op}_unpack", tag=tag.INJECTIVE)
