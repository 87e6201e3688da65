"""Transposed 2-d convolution in NCHW (``conv2d_transpose_nchw``), grouped and dilated, and the
pixel shuffle that ends its sub-pixel decomposition (``subpixel_shuffle_nchw``).

Each output element gathers the input elements whose strided, dilated window covers it:
``out[n, o, y, x] = sum data[n, c, iy, ix] * kernel[c, o % (F/groups), ky, kx]`` over the
channels ``c`` of ``o``'s group and the taps with ``iy * s + ky * d == y + pad_top`` (the same
on the width), so no dilated or padded copy of the input is made.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_shape, op_error, pair
from .conv_window import conv_window

__all__ = ["SUBPIXEL_SHUFFLE_TAG", "conv2d_transpose_nchw", "subpixel_shuffle_nchw"]

#: The tag of :func:`subpixel_shuffle_nchw`'s stage (an injective one).
SUBPIXEL_SHUFFLE_TAG = f"{tag.INJECTIVE},subpixel_shuffle"

_NCHW = 4


def conv2d_transpose_nchw(
    Input: Tensor,
    Filter: Tensor,
    strides: int | Sequence[int],
    padding: int | Sequence[int],
    out_dtype: str | None = None,
    output_padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> Tensor:
    """The transposed convolution of ``Input [N, C, H, W]`` with ``Filter [C, F/groups, KH, KW]``.

    The output is ``[N, F, (H-1)*sh - top - bottom + dh*(KH-1) + 1 + output_padding_h, ...]``
    (ONNX ``ConvTranspose``, PyTorch ``conv_transpose2d``); ``padding`` is an int, a pair or
    ``(top, left, bottom, right)``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 4, 5, 5), name="x")
    >>> w = te.placeholder((4, 3, 3, 3), name="w")
    >>> y = topi.nn.conv2d_transpose_nchw(x, w, 2, 1, output_padding=1)
    >>> [str(d) for d in y.shape]
    ['1', '3', '10', '10']
    """
    op = "conv2d_transpose"
    n, c, h, w = const_shape(op, "input", Input, _NCHW)
    kc, fg, kh, kw = const_shape(op, "filter", Filter, _NCHW)
    win = conv_window(op, Input, (kh, kw), strides, padding, dilation, out_dtype, "strides")
    (sh, sw), (dh, dw) = win.stride, win.dilation
    top, left, bottom, right = win.padding
    oph, opw = pair(op, "output_padding", output_padding, positive=False)
    if groups < 1 or c % groups:
        raise op_error(op, "groups", groups, f"a divisor of the input channels {c}")
    if kc != c:
        raise op_error(op, "filter input channels", kc, f"the input channels {c}")
    if oph >= max(sh, dh) or opw >= max(sw, dw):
        raise op_error(op, "output_padding", output_padding, "values below the stride or dilation")
    oh = (h - 1) * sh - top - bottom + dh * (kh - 1) + 1 + oph
    ow = (w - 1) * sw - left - right + dw * (kw - 1) + 1 + opw
    if oh < 1 or ow < 1:
        raise op_error(op, "padding", padding, f"an output of at least 1x1 (got {oh}x{ow})")
    cg = c // groups
    dtype, ry, rx = win.dtype, win.ry, win.rx
    rc = reduce_axis((0, cg), name="rc")

    def body(b: Var, o: Var, y: Var, x: Var) -> PrimExpr:
        chan = rc.var if groups == 1 else o // fg * cg + rc.var
        ty = y + top - ry.var * dh
        tx = x + left - rx.var * dw
        iy, ix = ty // sh, tx // sw
        conds = [ty >= 0, tx >= 0, iy < h, ix < w]
        if sh > 1:
            conds.append(ty % sh == 0)
        if sw > 1:
            conds.append(tx % sw == 0)
        a = Input(b, chan, iy, ix).astype(dtype)
        k = Filter(chan, o % fg if groups > 1 else o, ry.var, rx.var).astype(dtype)
        v = if_then_else(_all(*conds), a * k, const(0, dtype))
        return _sum(v, axis=[rc, ry, rx])  # type: ignore[no-any-return]

    return compute(
        (n, fg * groups, oh, ow), body, name="conv2d_transpose_nchw", tag=tag.CONV2D_TRANSPOSE_NCHW
    )


def subpixel_shuffle_nchw(
    data: Tensor,
    factors: Sequence[int],
    begin: Sequence[int] = (0, 0),
    out_size: Sequence[int] | None = None,
) -> Tensor:
    """The phases of ``data [N, F*fh*fw, QH, QW]`` (channel ``(f, rh, rw)``, ``f`` outermost)
    interleaved into ``[N, F, oh, ow]``, starting at row and column ``begin``.

    ``out[n, f, y, x] = data[n, (f*fh + (y+bh) % fh)*fw + (x+bw) % fw, (y+bh) // fh,
    (x+bw) // fw]``: PyTorch's ``pixel_shuffle`` (depth-to-space in ``CRD`` order) with a block
    of ``fh x fw`` and a crop; ``out_size`` defaults to all of it, ``(QH*fh - bh, QW*fw - bw)``.
    A transposed convolution computed as one convolution over its stride phases
    (``graph.transform.legalize_conv_transpose``) ends with it.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> z = te.placeholder((1, 12, 5, 5), name="z")
    >>> y = topi.nn.subpixel_shuffle_nchw(z, (2, 2), (1, 1), (8, 8))
    >>> [str(d) for d in y.shape]
    ['1', '3', '8', '8']
    """
    op = "subpixel_shuffle"
    n, c, qh, qw = const_shape(op, "data", data, _NCHW)
    fh, fw = pair(op, "factors", factors)
    bh, bw = pair(op, "begin", begin, positive=False)
    if c % (fh * fw):
        raise op_error(op, "factors", factors, f"a block fh*fw dividing the {c} channels")
    oh, ow = (qh * fh - bh, qw * fw - bw) if out_size is None else pair(op, "out_size", out_size)
    if not (0 <= bh and 0 <= bw and bh + oh <= qh * fh and bw + ow <= qw * fw):
        raise op_error(
            op, "begin/out_size", (begin, out_size), f"a window inside {qh * fh}x{qw * fw}"
        )

    def body(b: Var, f: Var, y: Var, x: Var) -> PrimExpr:
        ty, tx = y + bh, x + bw
        return data(b, (f * fh + ty % fh) * fw + tx % fw, ty // fh, tx // fw)

    return compute(
        (n, c // (fh * fw), oh, ow),
        body,
        name="subpixel_shuffle",
        tag=SUBPIXEL_SHUFFLE_TAG,
        attrs={"factors": (fh, fw), "begin": (bh, bw)},
    )
