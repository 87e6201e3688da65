"""Depthwise NCHW convolution over padded row planes: ``depthwise_conv2d_nchw_rows``.

The padded input of one channel is a plane of rows with a fixed pitch ``Wq``: each row holds
its ``W`` values, then ``Z`` zeros (``Z`` at least the left and right padding); padding rows
are zero rows, and a zero row opens and closes the plane. A padding column on the left of a row
is then the previous row's trailing zeros, so every tap reads a contiguous run of the plane and
the product vectorizes along it. The product is computed over whole padded rows, one run of
``OH x Wq`` values per plane (row ``y`` at ``y * Wq``); with stride 1 a tap's run crosses rows
too. A stride along the row is taken by keeping every ``stride``-th column; with rows read
apart, the pitch is a whole number of vectors. The plane is written in blocks of ``V`` columns
(a power of two dividing ``W``; with stride 1, a whole odd row up to a vector long): a block is
a copy of input columns times one 0/1 factor, so no vector lane needs a condition of its own.

A padding zero is an input value times 0, so an infinity or NaN in the last ``V`` columns of a
row (or in the first or last row) turns the neighbouring border outputs into NaN.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import Cast, PrimExpr, Var
from ...tir.op import floordiv, floormod
from ...tir.op import max as _max
from ...tir.op import min as _min
from .. import tag
from .._shape import const_shape, op_error
from .._target import vector_lanes
from ..generic._tiling import pow2_divisor
from .conv_window import conv_window

__all__ = ["depthwise_conv2d_nchw_rows", "padded_row_pitch"]

_NCHW = 4


def padded_row_pitch(width: int, left: int, right: int, stride: int, dtype: str) -> tuple[int, int]:
    """``(V, Wq)``: the column block (a power of two dividing ``width``, at most the target's
    vector lanes; with stride 1 an odd ``width`` up to a vector long is one block) and the row
    pitch of the padded plane (``width`` plus at least ``left`` and ``right`` zeros, in whole
    blocks; whole vectors when rows are read ``stride`` apart).
    """
    lanes = vector_lanes(dtype)
    v = pow2_divisor(width, lanes)
    if v == 1 and stride == 1 and width <= lanes:
        v = width  # an odd row up to a vector long: copied as one vector (its pitch doubles)
    zeros = max(left, right, 1)
    if stride > 1:  # whole vectors per row: a vector never spans two rows read apart
        zeros += -(width + zeros) % lanes
    return v, width + -(-zeros // v) * v


def depthwise_conv2d_nchw_rows(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Depthwise convolution of ``data [N, C, H, W]`` with ``kernel [C, M, KH, KW]``
    (``C * M`` output channels), computed over padded row planes (see the module docstring).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 8, 14, 14), name="x")
    >>> w = te.placeholder((8, 1, 3, 3), name="w")
    >>> [str(d) for d in topi.nn.depthwise_conv2d_nchw_rows(x, w, 2, 1, 1).shape]
    ['1', '8', '7', '7']
    """
    op = "depthwise_conv2d_nchw_rows"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    kc, mult, kh, kw = const_shape(op, "filter", kernel, _NCHW)
    if kc != c:
        raise op_error(op, "filter channels", kc, f"input channels {c}")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    (sh, sw), (dh, dw) = win.stride, win.dilation
    top, left, bottom, right = win.padding
    if left > w or right > w:
        raise op_error(op, "padding", padding, f"left and right padding up to the width {w}")
    oh, ow = win.output_size(h, w)
    v, pitch = padded_row_pitch(w, left, right, sh, data.dtype)
    blocks, data_blocks = pitch // v, w // v
    # A leading zero row (the first row's left padding) and a trailing one (stride 1 computes
    # whole rows: the last row's columns past OW read into it).
    rows = h + top + bottom + 2

    def plane(b: Var, ch: Var, rb: Var, lane: Var) -> PrimExpr:
        r = floordiv(rb, blocks) - 1 - top
        jb = floormod(rb, blocks)
        inside = (r >= 0) & (r < h) & (jb < data_blocks)
        src = data(b, ch, _min(_max(r, 0), h - 1), _min(jb, data_blocks - 1) * v + lane)
        return src * Cast(data.dtype, inside)

    padded = compute(
        (n, c, rows * blocks, v),
        plane,
        name="pad_rows",
        tag=tag.DEPTHWISE_PAD_ROWS,
        attrs={"blocks": blocks},
    )
    dtype, ry, rx = win.dtype, win.ry, win.rx

    def tap_sum(b: Var, ch: Var, y: PrimExpr, x: PrimExpr) -> PrimExpr:
        ic = ch if mult == 1 else ch // mult
        row = y * sh + ry.var * dh + 1
        col = x + rx.var * dw - left
        a = padded(b, ic, row * blocks + floordiv(col, v), floormod(col, v))
        k = kernel(ic, 0 if mult == 1 else ch % mult, ry.var, rx.var)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[ry, rx])  # type: ignore[no-any-return]

    # The product over whole padded rows, one run per plane (row y at y * Wq): with stride 1
    # each tap reads a run of the plane; the columns a row does not keep are dropped.
    conv = compute(
        (n, c * mult, oh * pitch),
        lambda b, ch, q: tap_sum(b, ch, floordiv(q, pitch), floormod(q, pitch)),
        name="depthwise_conv2d_nchw",
        tag=tag.DEPTHWISE_CONV2D_NCHW_ROWS,
        attrs={"stride": (sh, sw), "pitch": pitch},
    )

    def crop(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        return conv(b, ch, y * pitch + x * sw)

    return compute(
        (n, c * mult, oh, ow), crop, name="depthwise_conv2d_nchw_crop", tag=tag.INJECTIVE
    )
