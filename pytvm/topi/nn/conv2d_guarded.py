"""``conv2d_nchw_guarded``: a 2-d NCHW convolution (direct, grouped or depthwise) that reads
its padding through bounds guards instead of a padded copy of the input.

Each tap reads ``if_then_else(likely(0 <= iy) && likely(iy < H) && likely(0 <= ix) &&
likely(ix < W), data[b, c, iy, ix], 0)``: no ``pad_temp`` stage, so no scratch memory as big
as the input. The loop-partition pass cuts the output loops at the guards (the interior runs
without checks, only the border rows and columns keep them), which is what a microcontroller
wants: its RAM, not its instructions, is what runs out. ``Filter [F, C // groups, KH, KW]``;
a depthwise convolution is ``groups == C`` (``F = C * multiplier``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import Call, PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_shape, op_error
from .conv_window import conv_window
from .convolution import explicit_padding

__all__ = ["CONV2D_NCHW_GUARDED", "conv2d_nchw_guarded"]

#: The tag of the product stage (:data:`pytvm.topi.tag.CONV2D_NCHW_GUARDED`).
CONV2D_NCHW_GUARDED = tag.CONV2D_NCHW_GUARDED

_NCHW = 4


def _likely(cond: PrimExpr) -> PrimExpr:
    return Call("bool", "tir.likely", (cond,))


def conv2d_nchw_guarded(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    groups: int = 1,
    out_dtype: str | None = None,
) -> Tensor:
    """Convolution of ``data [N, C, H, W]`` with ``kernel [F, C // groups, KH, KW]``, the
    padding read through ``likely`` bounds guards (see the module).

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.nn.conv2d_guarded import conv2d_nchw_guarded
    >>> x = te.placeholder((1, 8, 9, 9), name="x")
    >>> w = te.placeholder((8, 1, 3, 3), name="w")
    >>> y = conv2d_nchw_guarded(x, w, 1, 1, 1, groups=8)
    >>> [str(d) for d in y.shape], y.op.attrs["groups"]
    (['1', '8', '9', '9'], 8)
    """
    op = "conv2d_nchw_guarded"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    f, kc, kh, kw = const_shape(op, "filter", kernel, _NCHW)
    if groups < 1 or c % groups or f % groups:
        raise op_error(op, "groups", groups, f"a divisor of input channels {c} and filters {f}")
    if kc * groups != c:
        raise op_error(op, "filter channels", kc, f"input channels / groups = {c // groups}")
    padding = explicit_padding(padding, (kh, kw), dilation)
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, out_dtype)
    oh, ow = win.output_size(h, w)
    top, left, _, _ = win.padding
    dtype, ry, rx = win.dtype, win.ry, win.rx
    rc = reduce_axis((0, kc), name="rc")
    per_group = f // groups
    zero = const(0, data.dtype)

    def read(b: Var, chan: PrimExpr, y: Var, x: Var) -> PrimExpr:
        py, px = win.taps(y, x)
        iy, ix = py - top if top else py, px - left if left else px
        conds: list[PrimExpr] = []
        if top:
            conds.append(_likely(iy >= 0))
        if (oh - 1) * win.stride[0] + (kh - 1) * win.dilation[0] - top >= h:
            conds.append(_likely(iy < h))
        if left:
            conds.append(_likely(ix >= 0))
        if (ow - 1) * win.stride[1] + (kw - 1) * win.dilation[1] - left >= w:
            conds.append(_likely(ix < w))
        value = data(b, chan, iy, ix)
        return if_then_else(_all(*conds), value, zero) if conds else value

    def body(b: Var, ff: Var, y: Var, x: Var) -> PrimExpr:
        chan = rc.var if groups == 1 else ff // per_group * kc + rc.var
        a = read(b, chan, y, x)
        k = kernel(ff, rc.var, ry.var, rx.var)
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[rc, ry, rx])  # type: ignore[no-any-return]

    return compute(
        (n, f, oh, ow),
        body,
        name="conv2d_nchw_guarded",
        tag=CONV2D_NCHW_GUARDED,
        attrs={"groups": groups},
    )
