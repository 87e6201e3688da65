"""Converters of ONNX's pooling: ``MaxPool``, ``AveragePool`` (explicit or automatic padding,
``ceil_mode``, ``count_include_pad``, dilations), ``GlobalAveragePool``, ``GlobalMaxPool``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...graph import Expr
from .node import NodeContext
from .ops_nn import check_spatial, spatial_attrs, window_pads

__all__ = ["POOL_CONVERTERS"]


def _pool(kind: str) -> Any:
    def convert(ctx: NodeContext) -> Expr:
        if ctx.output_used(1):
            raise ctx.error("the Indices output of MaxPool is not supported")
        nsp = check_spatial(ctx, ctx.ndim(0))
        kernel, strides, dilations = spatial_attrs(ctx, nsp, ctx.require("kernel_shape"))
        pads = window_pads(ctx, ctx.shape(0)[2:], kernel, strides, dilations)
        x = ctx.expr(0)
        if nsp == 1:
            x = ctx.call("expand_dims", x, axis=2, num_newaxis=1)
            kernel, strides, dilations = [1, *kernel], [1, *strides], [1, *dilations]
            pads = [0, pads[0], 0, pads[1]]
        attrs: dict[str, Any] = {
            "pool_size": tuple(kernel),
            "strides": tuple(strides),
            "dilation": tuple(dilations),
            "padding": tuple(pads),
            "ceil_mode": bool(ctx.attr("ceil_mode", 0)),
        }
        if kind == "avg":
            attrs["count_include_pad"] = bool(ctx.attr("count_include_pad", 0))
        out = ctx.call(f"nn.{kind}_pool2d", x, **attrs)
        return ctx.call("squeeze", out, axis=(2,)) if nsp == 1 else out

    return convert


def _global(kind: str) -> Any:
    def convert(ctx: NodeContext) -> Expr:
        ndim = ctx.ndim(0)
        if ndim == 4:  # noqa: PLR2004
            return ctx.call(f"nn.global_{kind}_pool2d", ctx.expr(0))
        op = "mean" if kind == "avg" else "max"
        return ctx.call(op, ctx.expr(0), axis=tuple(range(2, ndim)), keepdims=True)

    return convert


_Table = dict[str, tuple[int, Callable[[NodeContext], Any]]]

#: ``{op_type: (first opset, converter)}``.
POOL_CONVERTERS: _Table = {
    "MaxPool": (1, _pool("max")),
    "AveragePool": (1, _pool("avg")),
    "GlobalAveragePool": (1, _global("avg")),
    "GlobalMaxPool": (1, _global("max")),
}
