"""Converters of ONNX's pooling: ``MaxPool``, ``AveragePool`` (explicit or automatic padding,
``ceil_mode``, ``count_include_pad``, dilations), ``LpPool``, ``GlobalAveragePool``,
``GlobalMaxPool``.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_nn import check_spatial, spatial_attrs, window_pads
from .ops_volume import pool3d

__all__ = ["POOL_CONVERTERS"]


def _window(ctx: NodeContext) -> tuple[list[int], list[int], list[int], list[int]]:
    """``(kernel, strides, dilations, pads)`` of the node's pooling window."""
    nsp = check_spatial(ctx, ctx.ndim(0))
    kernel, strides, dilations = spatial_attrs(ctx, nsp, ctx.require("kernel_shape"))
    pads = window_pads(ctx, ctx.shape(0)[2:], kernel, strides, dilations)
    return kernel, strides, dilations, pads


def _planar(
    ctx: NodeContext,
    x: Expr,
    kernel: list[int],
    strides: list[int],
    dilations: list[int],
    pads: list[int],
) -> tuple[Expr, dict[str, Any]]:
    """``x`` and the 2-d window attributes: a 1-d input gets a height of 1."""
    if len(kernel) == 1:
        x = ctx.call("expand_dims", x, axis=2, num_newaxis=1)
        kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
        pads = [0, pads[0], 0, pads[1]]
    window = {
        "pool_size": tuple(kernel),
        "strides": tuple(strides),
        "dilation": tuple(dilations),
        "padding": tuple(pads),
        "ceil_mode": bool(ctx.attr("ceil_mode", 0)),
    }
    return x, window


def pool(ctx: NodeContext, kind: str, x: Expr, count_include_pad: bool = False) -> Expr:
    """``x`` pooled (``"max"`` or ``"avg"``) over the node's window (1-d as 2-d of height 1,
    3-d as 2-d then 1-d: ``ops_volume``).
    """
    kernel, strides, dilations, pads = _window(ctx)
    nsp = len(kernel)
    extra: dict[str, Any] = {"ceil_mode": bool(ctx.attr("ceil_mode", 0))}
    if kind == "avg":
        extra["count_include_pad"] = count_include_pad
    if nsp == 3:  # noqa: PLR2004
        return pool3d(ctx, kind, x, (kernel, strides, dilations, pads), extra)
    x, window = _planar(ctx, x, kernel, strides, dilations, pads)
    out = ctx.call(f"nn.{kind}_pool2d", x, **{**window, **extra})
    return ctx.call("squeeze", out, axis=(2,)) if nsp == 1 else out


def _pool(kind: str) -> Any:
    def convert(ctx: NodeContext) -> Expr | list[Expr]:
        if kind == "max" and ctx.output_used(1):
            return _max_pool_with_indices(ctx)
        return pool(ctx, kind, ctx.expr(0), bool(ctx.attr("count_include_pad", 0)))

    return convert


def _max_pool_with_indices(ctx: NodeContext) -> list[Expr]:
    """``MaxPool`` with its ``Indices`` output (1-d or 2-d: a 1-d input's indices are those of
    its 2-d form of height 1).
    """
    kernel, strides, dilations, pads = _window(ctx)
    nsp = len(kernel)
    if nsp == 3:  # noqa: PLR2004
        raise ctx.error("the Indices output of a 3-d MaxPool is not supported (1-d and 2-d are)")
    x, window = _planar(ctx, ctx.expr(0), kernel, strides, dilations, pads)
    order = int(ctx.attr("storage_order", 0))
    both = ctx.call("nn.max_pool2d_with_argmax", x, **window, storage_order=order)
    values, indices = ctx.item(both, 0), ctx.item(both, 1)
    if nsp == 1:
        values = ctx.call("squeeze", values, axis=(2,))
        indices = ctx.call("squeeze", indices, axis=(2,))
    return [values, indices]


def _valid_counts(size: int, out: int, k: int, s: int, d: int, before: int) -> Any:
    """How many taps of each of ``out`` windows fall inside an axis of ``size``."""
    starts = np.arange(out) * s - before
    taps = starts[:, None] + np.arange(k)[None, :] * d
    return ((taps >= 0) & (taps < size)).sum(axis=1)


def _lp_pool(ctx: NodeContext) -> Expr:
    """``(sum over the window of |x|**p) ** (1/p)``: an average over the input elements of each
    window times their count.
    """
    p = float(ctx.attr("p", 2))
    dtype = ctx.dtype(0)
    x = ctx.expr(0)
    square = p == 2.0  # noqa: PLR2004
    if square:
        powered = ctx.call("multiply", x, x)
    else:
        powered = ctx.call("power", ctx.call("abs", x), ctx.const(np.asarray(p, dtype=dtype)))
    sizes = ctx.shape(0)[2:]
    nsp = len(sizes)
    kernel, strides, dilations, pads = _window(ctx)
    avg = pool(ctx, "avg", powered)
    out_sizes = avg.checked_type.shape[2:]  # type: ignore[union-attr]
    ctx.check_constant(out_sizes, "int64", "the count of taps in each window")
    for o, k in zip(out_sizes, kernel, strict=True):
        ctx.check_constant([o, k], "int64", "the taps of the windows along one axis")
    counts = [
        _valid_counts(n, o, k, s, d, b)
        for n, o, k, s, d, b in zip(
            sizes, out_sizes, kernel, strides, dilations, pads[:nsp], strict=True
        )
    ]
    count = functools.reduce(np.multiply.outer, counts)
    total = ctx.call("multiply", avg, ctx.const(count.astype(dtype)))
    if square:
        return ctx.call("sqrt", total)
    return ctx.call("power", total, ctx.const(np.asarray(1.0 / p, dtype=dtype)))


def _global(kind: str) -> Any:
    def convert(ctx: NodeContext) -> Expr:
        ndim = ctx.ndim(0)
        if ndim == 4:  # noqa: PLR2004
            return ctx.call(f"nn.global_{kind}_pool2d", ctx.expr(0))
        op = "mean" if kind == "avg" else "max"
        return ctx.call(op, ctx.expr(0), axis=tuple(range(2, ndim)), keepdims=True)

    return convert


POOL_CONVERTERS: ConverterTable = {
    "MaxPool": (1, _pool("max")),
    "AveragePool": (1, _pool("avg")),
    "GlobalAveragePool": (1, _global("avg")),
    "GlobalMaxPool": (1, _global("max")),
    "LpPool": (1, _lp_pool),
}
