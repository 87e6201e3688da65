"""Depthwise NCHW convolution vectorized across channels: ``depthwise_conv2d_nchw_channels``.

For small planes, where a row is shorter than a few vectors (or read every ``stride``-th
value), the lanes of a vector are channels rather than columns: blocks of ``cb`` channels
(the kernel's packed block, ``OIHW<cb>o``) are gathered into ``[H, W, cb]`` (the
``pack`` stage: channel ``c`` of the block at lane ``c % cb``), padded with zero pixels (the
``pad`` stage: the nearest pixel's bits under a mask of one condition a pixel, the same for
every lane, so exact zeros without a branch) and convolved pixel by pixel:
each output pixel of a block is ``KH x KW`` vector multiply-adds of whole vectors, with no
lane of a row wasted on padding columns or dropped by a stride. The output is read back into
NCHW by the last stage, which elementwise work after the convolution joins.

The kernel ``[ceil(C / cb), 1, KH, KW, cb]`` is zero past channel ``C``; the channels the
last block holds past ``C`` read channel ``C - 1`` and are never stored.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ffi.dtype import DataType
from ...te.operation import compute
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.call_builtin import call_intrin
from ...tir.expr import Cast, PrimExpr, Var, const
from ...tir.op import max as _max
from ...tir.op import min as _min
from ...tir.op import reinterpret
from .. import tag
from .._shape import const_shape, op_error
from .conv_window import conv_window

__all__ = ["depthwise_conv2d_nchw_channels"]

_NCHW = 4
_PACKED = 5


def depthwise_conv2d_nchw_channels(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Depthwise convolution (one filter a channel) of ``data [N, C, H, W]`` with a kernel
    packed in blocks of ``cb`` channels, ``[ceil(C / cb), 1, KH, KW, cb]``, giving
    ``[N, C, OH, OW]`` (see the module docstring).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 40, 7, 7), name="x")
    >>> w = te.placeholder((3, 1, 5, 5, 16), name="w")
    >>> [str(d) for d in topi.nn.depthwise_conv2d_nchw_channels(x, w, 2, 2, 1).shape]
    ['1', '40', '4', '4']
    """
    op = "depthwise_conv2d_nchw_channels"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    blocks, one, kh, kw, cb = const_shape(op, "filter", kernel, _PACKED)
    if one != 1 or blocks != -(-c // cb):
        raise op_error(
            op, "filter shape", [blocks, one, kh, kw, cb], f"[ceil({c} / cb), 1, KH, KW, cb]"
        )
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    top, left, bottom, right = win.padding
    oh, ow = win.output_size(h, w)

    def gather(b: Var, o: Var, y: Var, x: Var, lane: Var) -> PrimExpr:
        return data(b, _min(o * cb + lane, c - 1), y, x)

    pack = compute((n, blocks, h, w, cb), gather, name="pack_channels", tag=tag.DEPTHWISE_PACK)

    bits = f"int{DataType(data.dtype).bits}"

    def padded(b: Var, o: Var, y: Var, x: Var, lane: Var) -> PrimExpr:
        # The nearest pixel's bits, kept by an all-ones mask inside and cleared outside: an
        # exact zero, and one condition a pixel (a vector of lanes)
        r, col = y - top, x - left
        inside = (r >= 0) & (r < h) & (col >= 0) & (col < w)
        near = pack(b, o, _min(_max(r, 0), h - 1), _min(_max(col, 0), w - 1), lane)
        mask = const(0, bits) - Cast(bits, inside)
        kept = call_intrin(bits, "tir.bitwise_and", reinterpret(bits, near), mask)
        return reinterpret(data.dtype, kept)

    if top or left or bottom or right:
        pad = compute(
            (n, blocks, h + top + bottom, w + left + right, cb),
            padded,
            name="pad_channels",
            tag=tag.DEPTHWISE_PACK,
        )
    else:
        pad = pack
    dtype = win.dtype

    def tap_sum(b: Var, o: Var, y: Var, x: Var, lane: Var) -> PrimExpr:
        row, col = win.taps(y, x)
        a = pad(b, o, row, col, lane).astype(dtype)
        k = kernel(o, 0, win.ry.var, win.rx.var, lane).astype(dtype)
        return _sum(a * k, axis=[win.ry, win.rx])  # type: ignore[no-any-return]

    conv = compute(
        (n, blocks, oh, ow, cb),
        tap_sum,
        name="depthwise_conv2d_nchw",
        tag=tag.DEPTHWISE_CONV2D_NCHW_CHANNELS,
    )
    return compute(
        (n, c, oh, ow),
        lambda b, ch, y, x: conv(b, ch // cb, y, x, ch % cb),
        name="depthwise_conv2d_nchw_unpack",
        tag=tag.INJECTIVE,
    )
