"""Converters of ONNX's normalizations built from reductions: ``GroupNormalization``,
``MeanVarianceNormalization``, ``LpNormalization``.
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_tensor import normalize_axes

__all__ = ["NORMALIZATION_CONVERTERS"]


def _scalar(ctx: NodeContext, value: float) -> Expr:
    return ctx.const(np.asarray(value, dtype=ctx.dtype(0)))


def _standardize(ctx: NodeContext, x: Expr, axes: tuple[int, ...], eps: float) -> Expr:
    """``(x - mean) / sqrt(var + eps)`` over ``axes``."""
    centred = ctx.call("subtract", x, ctx.call("mean", x, axis=axes, keepdims=True))
    var = ctx.call("mean", ctx.call("multiply", centred, centred), axis=axes, keepdims=True)
    return ctx.call("multiply", centred, ctx.call("rsqrt", ctx.call("add", var, _scalar(ctx, eps))))


def _group_norm(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    if len(shape) < 2:  # noqa: PLR2004
        raise ctx.error(f"the input must be [N, C, ...], got shape {list(shape)}")
    n, c = shape[0], shape[1]
    groups = int(ctx.require("num_groups"))
    if groups < 1 or c % groups:
        raise ctx.error(f"num_groups {groups} does not divide the {c} channels")
    flat = ctx.call(
        "reshape", ctx.expr(0), newshape=(n, groups, (c // groups) * math.prod(shape[2:]))
    )
    norm = _standardize(ctx, flat, (2,), float(ctx.attr("epsilon", 1e-5)))
    norm = ctx.call("reshape", norm, newshape=shape)

    def per_channel(i: int) -> Expr:
        v = ctx.expr(i)
        if ctx.shape(i) == (groups,) and groups != c:  # opset 18: one value per group
            v = ctx.call("reshape", v, newshape=(groups, 1))
            v = ctx.call("broadcast_to", v, shape=(groups, c // groups))
        return ctx.call("reshape", v, newshape=(c, *([1] * (len(shape) - 2))))

    return ctx.call("add", ctx.call("multiply", norm, per_channel(1)), per_channel(2))


def _mean_variance_norm(ctx: NodeContext) -> Expr:
    axes = tuple(
        sorted(normalize_axes(ctx, [int(a) for a in ctx.attr("axes", [0, 2, 3])], ctx.ndim(0)))
    )
    return _standardize(ctx, ctx.expr(0), axes, 1e-9)


def _lp_norm(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    axis = normalize_axes(ctx, [int(ctx.attr("axis", -1))], ctx.ndim(0))[0]
    p = int(ctx.attr("p", 2))
    if p == 1:
        norm = ctx.call("sum", ctx.call("abs", x), axis=(axis,), keepdims=True)
    elif p == 2:  # noqa: PLR2004
        norm = ctx.call(
            "sqrt", ctx.call("sum", ctx.call("multiply", x, x), axis=(axis,), keepdims=True)
        )
    else:
        raise ctx.error(f"p={p} is not 1 or 2")
    zero = ctx.call("equal", norm, _scalar(ctx, 0))  # an all-zero slice stays zero
    return ctx.call("divide", x, ctx.call("where", zero, _scalar(ctx, 1), norm))


NORMALIZATION_CONVERTERS: ConverterTable = {
    "GroupNormalization": (18, _group_norm),
    "MeanVarianceNormalization": (9, _mean_variance_norm),
    "LpNormalization": (1, _lp_norm),
}
