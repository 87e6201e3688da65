"""Converters of ONNX Runtime's contrib operators (domain ``com.microsoft``) that exporters
emit for transformer models: ``Gelu``, ``FastGelu`` (the tanh approximation) and ``BiasGelu``.

Each adds its optional bias, then calls the graph's ``nn.gelu``.
"""

from __future__ import annotations

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["MICROSOFT_CONVERTERS", "MICROSOFT_DOMAIN"]

#: The domain of ONNX Runtime's contrib operators.
MICROSOFT_DOMAIN = "com.microsoft"


def _biased(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    return ctx.call("add", x, ctx.expr(1)) if ctx.has(1) else x


def _gelu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.gelu", ctx.expr(0), approximate="none")


def _bias_gelu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.gelu", _biased(ctx), approximate="none")


def _fast_gelu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.gelu", _biased(ctx), approximate="tanh")


#: ``com.microsoft`` operators: ``{op_type: (first opset, converter)}`` (they are versioned
#: by the domain's own opset 1).
MICROSOFT_CONVERTERS: ConverterTable = {
    "Gelu": (1, _gelu),
    "BiasGelu": (1, _bias_gelu),
    "FastGelu": (1, _fast_gelu),
}
