"""NCHW convolution with the kernel packed by output-channel blocks: ``conv2d_nchw_packed``.

The kernel is given as ``[ceil(F / fb), C, KH, KW, fb]`` (layout ``OIHW{fb}o``, made by
``topi.layout_transform`` or :func:`conv2d_kernel_pack`): ``fb`` output channels sit side by
side, so the product can run a vector over output channels with the input value broadcast. When
``fb`` does not divide ``F`` the last block is padded with zero channels. The convolution
accumulates whole blocks into a channel-blocked stage ``[N, ceil(F / fb), OH, OW, fb]`` (tag
``conv2d_nchw_packed``) that an injective stage reads back into ``[N, F, OH, OW]``, keeping only
the ``F`` real channels (``channels``; all of them by default); data and result stay NCHW.
A grouped convolution (``groups`` > 1, kernel ``[F // fb, C // groups, KH, KW, fb]``) takes
blocks that divide each group's output channels, so a block reads one group's input channels.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import Cast, PrimExpr, Var
from ...tir.op import min as _min
from .. import tag
from .._shape import const_shape, op_error
from .conv_window import conv_window

__all__ = ["conv2d_kernel_pack", "conv2d_nchw_packed"]

_PACKED_NDIM = 5
_NCHW = 4


def conv2d_kernel_pack(kernel: Tensor, fb: int) -> Tensor:
    """``kernel [F, C, KH, KW]`` as ``[ceil(F / fb), C, KH, KW, fb]``, the channels past ``F``
    zero.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> w = te.placeholder((20, 3, 3, 3), name="w")
    >>> [str(d) for d in topi.nn.conv2d_kernel_pack(w, 8).shape]
    ['3', '3', '3', '3', '8']
    """
    f, c, kh, kw = const_shape("conv2d_kernel_pack", "kernel", kernel, _NCHW)
    if fb < 1:
        raise op_error("conv2d_kernel_pack", "fb", fb, "a positive block of output channels")

    def body(o: Var, i: Var, y: Var, x: Var, b: Var) -> PrimExpr:
        ch = o * fb + b
        if f % fb == 0:
            return kernel(ch, i, y, x)
        return kernel(_min(ch, f - 1), i, y, x) * Cast(kernel.dtype, ch < f)

    return compute((-(-f // fb), c, kh, kw, fb), body, name="T_kernel_pack", tag=tag.INJECTIVE)


def conv2d_nchw_packed(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    out_dtype: str | None = None,
    channels: int | None = None,
    groups: int = 1,
) -> Tensor:
    """Convolution of ``data [N, C, H, W]`` with a packed ``kernel [Fo, C // groups, KH, KW,
    fb]``; the result has the first ``channels`` of the ``Fo * fb`` output channels (default:
    all; the rest are the zero channels padding the last block, with one group only).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 9, 9), name="x")
    >>> w = te.placeholder((2, 3, 3, 3, 8), name="w")
    >>> [str(d) for d in topi.nn.conv2d_nchw_packed(x, w, 2, 1, 1).shape]
    ['1', '16', '5', '5']
    >>> [str(d) for d in topi.nn.conv2d_nchw_packed(x, w, 1, 1, 1, channels=10).shape]
    ['1', '10', '9', '9']
    >>> x8 = te.placeholder((1, 8, 9, 9), name="x8")
    >>> g = te.placeholder((4, 2, 3, 3, 4), name="g")  # 4 groups: 2 input, 4 output channels
    >>> [str(d) for d in topi.nn.conv2d_nchw_packed(x8, g, 1, 1, 1, groups=4).shape]
    ['1', '16', '9', '9']
    """
    op = "conv2d_nchw_packed"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    fo, kc, kh, kw, fb = const_shape(op, "packed kernel", kernel, _PACKED_NDIM)
    if groups < 1 or c % groups or (fo * fb) % groups or (fo * fb // groups) % fb:
        raise op_error(
            op,
            "groups",
            groups,
            f"a divisor of the input channels {c} and of the output channels {fo * fb}, each "
            f"group's output channels a whole number of blocks of {fb}",
        )
    if kc * groups != c:
        raise op_error(op, "kernel input channels", kc, f"the input's channels {c} / {groups}")
    f = fo * fb if channels is None else int(channels)
    if not (fo - 1) * fb < f <= fo * fb or (groups > 1 and f != fo * fb):
        want = f"{(fo - 1) * fb + 1} to {fo * fb} ({fo} blocks of {fb})"
        raise op_error(op, "channels", channels, want if groups == 1 else f"{fo * fb}")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    oh, ow = win.output_size(h, w)
    src = win.padded(data)
    dtype, ry, rx = win.dtype, win.ry, win.rx
    rc = reduce_axis((0, kc), name="rc")

    blocks_per_group = fo // groups

    def body(b: Var, o: Var, y: Var, x: Var, i: Var) -> PrimExpr:
        ic = rc.var if groups == 1 else o // blocks_per_group * kc + rc.var
        a = src(b, ic, *win.taps(y, x))
        k = kernel(o, rc.var, ry.var, rx.var, i)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[rc, ry, rx])  # type: ignore[no-any-return]

    blocked = compute(
        (n, fo, oh, ow, fb), body, name="conv2d_nchw_packed", tag=tag.CONV2D_NCHW_PACKED
    )

    def unpack(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        return blocked(b, ch // fb, y, x, ch % fb)

    return compute((n, f, oh, ow), unpack, name="conv2d_nchw_unpack", tag=tag.INJECTIVE)
