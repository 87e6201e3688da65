"""Converters of ONNX Runtime's elementwise and matrix contrib operators (domain
``com.microsoft``) that its optimizer and exporters write into transformer models: ``Gelu``,
``FastGelu`` (the tanh approximation), ``BiasGelu``, ``QuickGelu`` (``x · sigmoid(alpha · x)``),
``BiasAdd`` (``x + bias + skip``), ``BiasSoftmax`` (``softmax(x + bias)`` over the axes from
``axis`` on) and ``FusedMatMul`` (``alpha · op(A) @ op(B)``, ``op`` transposing the last two axes
when ``transA``/``transB`` is set).
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["MICROSOFT_CONVERTERS", "MICROSOFT_DOMAIN"]

#: The domain of ONNX Runtime's contrib operators.
MICROSOFT_DOMAIN = "com.microsoft"


def _biased(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    return ctx.call("add", x, ctx.expr(1)) if ctx.has(1) else x


def _scalar(ctx: NodeContext, value: float) -> Expr:
    return ctx.const(np.asarray(value, dtype=ctx.dtype(0)))


def _gelu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.gelu", ctx.expr(0), approximate="none")


def _bias_gelu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.gelu", _biased(ctx), approximate="none")


def _fast_gelu(ctx: NodeContext) -> Expr:
    return ctx.call("nn.gelu", _biased(ctx), approximate="tanh")


def _quick_gelu(ctx: NodeContext) -> Expr:
    x = ctx.expr(0)
    alpha = float(ctx.attr("alpha", 1.702))
    return ctx.call(
        "multiply", x, ctx.call("sigmoid", ctx.call("multiply", x, _scalar(ctx, alpha)))
    )


def _bias_add(ctx: NodeContext) -> Expr:
    if ctx.ndim(0) != 3 or ctx.shape(1) != ctx.shape(0)[-1:]:  # noqa: PLR2004
        raise ctx.error(
            f"X {list(ctx.shape(0))} and bias {list(ctx.shape(1))}: expected [N, S, C] and [C]"
        )
    return ctx.call("add", ctx.call("add", ctx.expr(0), ctx.expr(1)), ctx.expr(2))


def _bias_softmax(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    ndim = len(shape)
    axis = int(ctx.attr("axis", 1))
    if not -ndim <= axis < ndim:
        raise ctx.error(f"axis {axis} is out of range for a {ndim}-d input")
    axis %= ndim
    bshape = ctx.shape(1)
    try:
        broadcast = np.broadcast_shapes(shape, bshape)
    except ValueError:
        broadcast = None
    if broadcast != tuple(shape):
        raise ctx.error(f"bias of shape {list(bshape)} does not broadcast to {list(shape)}")
    x = ctx.call("add", ctx.expr(0), ctx.expr(1))
    if axis == ndim - 1:
        return ctx.call("nn.softmax", x, axis=-1)
    flat = ctx.call("reshape", x, newshape=(math.prod(shape[:axis]), math.prod(shape[axis:])))
    return ctx.call("reshape", ctx.call("nn.softmax", flat, axis=1), newshape=shape)


def _fused_matmul(ctx: NodeContext) -> Expr:
    for name in ("transBatchA", "transBatchB"):
        if int(ctx.attr(name, 0)):
            raise ctx.error(f"attribute {name}={ctx.attr(name)} is not supported (only 0 is)")
    sa, sb = list(ctx.shape(0)), list(ctx.shape(1))
    if len(sa) < 2 or len(sb) < 2:  # noqa: PLR2004
        raise ctx.error(f"inputs of shapes {sa} and {sb}: both must be at least 2-d")
    a, b = ctx.expr(0), ctx.expr(1)
    if int(ctx.attr("transA", 0)):
        a = ctx.call("transpose", a, axes=(*range(len(sa) - 2), len(sa) - 1, len(sa) - 2))
        sa = [*sa[:-2], sa[-1], sa[-2]]
    trans_b = bool(int(ctx.attr("transB", 0)))
    k_b, n = (sb[-1], sb[-2]) if trans_b else (sb[-2], sb[-1])
    if sa[-1] != k_b:
        raise ctx.error(f"cannot multiply {list(ctx.shape(0))} and {list(ctx.shape(1))}")
    try:
        batch = tuple(int(d) for d in np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2])))
    except ValueError:
        raise ctx.error(f"batch shapes of {sa} and {sb} do not broadcast") from None
    nb, m, k = math.prod(batch), sa[-2], sa[-1]
    if len(sb) == 2 and len(sa) > 2:  # noqa: PLR2004 - one dense over every row
        w = b if trans_b else ctx.call("transpose", b, axes=(1, 0))
        rows = ctx.call("reshape", a, newshape=(math.prod(sa[:-1]), k))
        out = ctx.call("reshape", ctx.call("nn.dense", rows, w), newshape=(*sa[:-1], n))
    else:

        def batched(x: Expr, shape: list[int]) -> Expr:
            if tuple(shape[:-2]) != batch:
                x = ctx.call("broadcast_to", x, shape=(*batch, *shape[-2:]))
            return ctx.call("reshape", x, newshape=(nb, *shape[-2:]))

        rhs = batched(b, sb)
        if not trans_b:
            rhs = ctx.call("transpose", rhs, axes=(0, 2, 1))
        out = ctx.call("nn.batch_matmul", batched(a, sa), rhs, transpose_a=False, transpose_b=True)
        out = ctx.call("reshape", out, newshape=(*batch, m, n))
    alpha = float(ctx.attr("alpha", 1.0))
    return out if alpha == 1.0 else ctx.call("multiply", out, _scalar(ctx, alpha))


#: ``com.microsoft`` operators: ``{op_type: (first opset, converter)}`` (they are versioned
#: by the domain's own opset 1).
MICROSOFT_CONVERTERS: ConverterTable = {
    "Gelu": (1, _gelu),
    "BiasGelu": (1, _bias_gelu),
    "FastGelu": (1, _fast_gelu),
    "QuickGelu": (1, _quick_gelu),
    "BiasAdd": (1, _bias_add),
    "BiasSoftmax": (1, _bias_softmax),
    "FusedMatMul": (1, _fused_matmul),
}
