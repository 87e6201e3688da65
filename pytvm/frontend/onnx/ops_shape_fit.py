"""Converters that fit or summarise a tensor's extents: ``CenterCropPad`` (a centred crop of
the axes longer than the wanted shape, a centred zero pad of the shorter ones) and
``GlobalLpPool`` (the Lp norm over every spatial axis).
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_tensor import normalize_axes

__all__ = ["SHAPE_FIT_CONVERTERS"]


def _center_crop_pad(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    ndim = len(shape)
    wanted = ctx.ints(1, "shape")
    axes = ctx.attr("axes")
    axes = list(range(ndim)) if axes is None else normalize_axes(ctx, [int(a) for a in axes], ndim)
    if len(wanted) != len(axes):
        raise ctx.error(f"shape {wanted} should have one extent per axis in {axes}")
    if any(n < 0 for n in wanted):
        raise ctx.error(f"shape {wanted} has a negative extent")
    begin, end = [0] * ndim, list(shape)
    width = [(0, 0)] * ndim
    for a, n in zip(axes, wanted, strict=True):
        if shape[a] > n:  # crop: the first (shape - n) // 2 elements go
            begin[a] = (shape[a] - n) // 2
            end[a] = begin[a] + n
        elif shape[a] < n:  # pad: (n - shape) // 2 zeros before, the rest after
            before = (n - shape[a]) // 2
            width[a] = (before, n - shape[a] - before)
    x = ctx.expr(0)
    if begin != [0] * ndim or end != list(shape):
        x = ctx.call("strided_slice", x, begin=tuple(begin), end=tuple(end), strides=(1,) * ndim)
    if any(w != (0, 0) for w in width):
        x = ctx.call("nn.pad", x, pad_width=tuple(width), pad_value=0.0)
    return x


def _global_lp_pool(ctx: NodeContext) -> Expr:
    p = float(ctx.attr("p", 2))
    ndim, dtype = ctx.ndim(0), ctx.dtype(0)
    if ndim < 3:  # noqa: PLR2004
        raise ctx.error(f"the input is {ndim}-d; expected [N, C, d1, ...]")
    if p <= 0:
        raise ctx.error(f"p is {p}; expected a positive number")
    x = ctx.expr(0)
    spatial = tuple(range(2, ndim))
    if p == 2.0:  # noqa: PLR2004
        total = ctx.call("sum", ctx.call("multiply", x, x), axis=spatial, keepdims=True)
        return ctx.call("sqrt", total)
    exponent = ctx.const(np.asarray(p, dtype=dtype))
    powered = ctx.call("power", ctx.call("abs", x), exponent)
    total = ctx.call("sum", powered, axis=spatial, keepdims=True)
    return ctx.call("power", total, ctx.const(np.asarray(1.0 / p, dtype=dtype)))


SHAPE_FIT_CONVERTERS: ConverterTable = {
    "CenterCropPad": (18, _center_crop_pad),
    "GlobalLpPool": (1, _global_lp_pool),
}
