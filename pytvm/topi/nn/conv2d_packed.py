"""NCHW convolution with the kernel packed by output-channel blocks: ``conv2d_nchw_packed``.

The kernel is given as ``[F // fb, C, KH, KW, fb]`` (layout ``OIHW{fb}o``, made by
``topi.layout_transform`` or :func:`conv2d_kernel_pack`): ``fb`` output channels sit side by
side, so the product can run a vector over output channels with the input value broadcast. The
convolution accumulates into a channel-blocked stage ``[N, F // fb, OH, OW, fb]`` (tag
``conv2d_nchw_packed``) that an injective stage reads back into ``[N, F, OH, OW]``; data and
result stay NCHW.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import const_shape, op_error
from .conv_window import conv_window

__all__ = ["conv2d_kernel_pack", "conv2d_nchw_packed"]

_PACKED_NDIM = 5
_NCHW = 4


def conv2d_kernel_pack(kernel: Tensor, fb: int) -> Tensor:
    """``kernel [F, C, KH, KW]`` as ``[F // fb, C, KH, KW, fb]`` (``fb`` must divide ``F``)."""
    f, c, kh, kw = const_shape("conv2d_kernel_pack", "kernel", kernel, _NCHW)
    if fb < 1 or f % fb:
        raise op_error("conv2d_kernel_pack", "fb", fb, f"a positive divisor of F = {f}")

    def body(o: Var, i: Var, y: Var, x: Var, b: Var) -> PrimExpr:
        return kernel(o * fb + b, i, y, x)

    return compute((f // fb, c, kh, kw, fb), body, name="T_kernel_pack", tag=tag.INJECTIVE)


def conv2d_nchw_packed(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of ``data [N, C, H, W]`` with a packed ``kernel [F // fb, C, KH, KW, fb]``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 9, 9), name="x")
    >>> w = te.placeholder((2, 3, 3, 3, 8), name="w")
    >>> [str(d) for d in topi.nn.conv2d_nchw_packed(x, w, 2, 1, 1).shape]
    ['1', '16', '5', '5']
    """
    op = "conv2d_nchw_packed"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    fo, kc, kh, kw, fb = const_shape(op, "packed kernel", kernel, _PACKED_NDIM)
    if kc != c:
        raise op_error(op, "kernel input channels", kc, f"the input's channels {c}")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    oh, ow = win.output_size(h, w)
    src = win.padded(data)
    dtype, ry, rx = win.dtype, win.ry, win.rx
    rc = reduce_axis((0, c), name="rc")

    def body(b: Var, o: Var, y: Var, x: Var, i: Var) -> PrimExpr:
        a = src(b, rc.var, *win.taps(y, x))
        k = kernel(o, rc.var, ry.var, rx.var, i)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[rc, ry, rx])  # type: ignore[no-any-return]

    blocked = compute(
        (n, fo, oh, ow, fb), body, name="conv2d_nchw_packed", tag=tag.CONV2D_NCHW_PACKED
    )

    def unpack(b: Var, f: Var, y: Var, x: Var) -> PrimExpr:
        return blocked(b, f // fb, y, x, f % fb)

    return compute((n, fo * fb, oh, ow), unpack, name="conv2d_nchw_unpack", tag=tag.INJECTIVE)
