"""Converters of ONNX's reductions: ``ReduceSum``/``Mean``/``Max``/``Min``/``Prod``/``L1``/
``L2``/``LogSum``/``LogSumExp``/``SumSquare`` and ``ArgMax``/``ArgMin``.

``axes`` is an attribute until it became an input (opset 13 for ``ReduceSum``, 18 for the
others); with no axes every axis is reduced, unless ``noop_with_empty_axes`` says the node
is the identity.
"""

from __future__ import annotations

from typing import Any

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_tensor import axes_of, normalize_axes

__all__ = ["REDUCE_CONVERTERS"]


def _axes(ctx: NodeContext, input_from: int) -> tuple[int, ...] | None:
    """The reduced axes (sorted), None for every axis, ``()`` for none (the identity)."""
    axes = axes_of(ctx, input_from, 1)
    if not axes:
        return () if ctx.attr("noop_with_empty_axes", 0) else None
    return tuple(sorted(normalize_axes(ctx, axes, ctx.ndim(0))))


def _reduction(op: str, input_from: int, pre: str = "", post: str = "") -> Any:
    def convert(ctx: NodeContext) -> Expr:
        x = ctx.expr(0)
        axes = _axes(ctx, input_from)
        if axes == ():
            return x
        if pre == "square":
            x = ctx.call("multiply", x, x)
        elif pre:
            x = ctx.call(pre, x)
        keep = bool(ctx.attr("keepdims", 1))
        out = ctx.call(op, x, axis=axes, keepdims=keep)
        return ctx.call(post, out) if post else out

    return convert


def _log_sum_exp(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    axes = _axes(ctx, 18)
    if axes == ():
        return x
    keep = bool(ctx.attr("keepdims", 1))
    peak = ctx.call("max", x, axis=axes, keepdims=True)
    total = ctx.call(
        "sum", ctx.call("exp", ctx.call("subtract", x, peak)), axis=axes, keepdims=True
    )
    out = ctx.call("add", ctx.call("log", total), peak)
    if keep:
        return out
    drop = tuple(range(ctx.ndim(0))) if axes is None else axes
    return ctx.call("squeeze", out, axis=drop)


def _arg(op: str) -> Any:
    def convert(ctx: NodeContext) -> Expr:
        axis = normalize_axes(ctx, [int(ctx.attr("axis", 0))], ctx.ndim(0))[0]
        out = ctx.call(
            op,
            ctx.expr(0),
            axis=(axis,),
            keepdims=bool(ctx.attr("keepdims", 1)),
            select_last_index=bool(ctx.attr("select_last_index", 0)),
        )
        return ctx.call("cast", out, dtype="int64")

    return convert


REDUCE_CONVERTERS: ConverterTable = {
    "ReduceSum": (1, _reduction("sum", 13)),
    "ReduceMean": (1, _reduction("mean", 18)),
    "ReduceMax": (1, _reduction("max", 18)),
    "ReduceMin": (1, _reduction("min", 18)),
    "ReduceProd": (1, _reduction("prod", 18)),
    "ReduceL1": (1, _reduction("sum", 18, pre="abs")),
    "ReduceL2": (1, _reduction("sum", 18, pre="square", post="sqrt")),
    "ReduceSumSquare": (1, _reduction("sum", 18, pre="square")),
    "ReduceLogSum": (1, _reduction("sum", 18, post="log")),
    "ReduceLogSumExp": (1, _log_sum_exp),
    "ArgMax": (1, _arg("argmax")),
    "ArgMin": (1, _arg("argmin")),
}
