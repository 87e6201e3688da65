"""Converters of ONNX's losses: ``NegativeLogLikelihoodLoss`` and ``SoftmaxCrossEntropyLoss``
(reductions ``none``/``sum``/``mean``, ``ignore_index``, class weights) as ``nn.nll_loss``.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["LOSS_CONVERTERS"]

_REDUCTIONS = ("none", "sum", "mean")
_FLOATS = ("float16", "float32", "float64")


def _nll(ctx: NodeContext, log_probs: Expr) -> Expr:
    """``nn.nll_loss`` of ``log_probs [N, C, d...]`` (input 0's shape) and targets (input 1)."""
    reduction = ctx.attr("reduction", "mean")
    if isinstance(reduction, bytes):
        reduction = reduction.decode()
    if reduction not in _REDUCTIONS:
        raise ctx.error(f"reduction {reduction!r} is not one of {', '.join(_REDUCTIONS)}")
    shape, dtype = ctx.shape(0), ctx.dtype(0)
    if dtype not in _FLOATS:
        raise ctx.error(f"the input has element type {dtype}; expected one of {_FLOATS}")
    if len(shape) < 2:  # noqa: PLR2004
        raise ctx.error(f"the input has shape {list(shape)}; expected [N, C, d1, ...]")
    want = (shape[0], *shape[2:])
    if tuple(ctx.shape(1)) != want:
        raise ctx.error(
            f"the targets have shape {list(ctx.shape(1))}; expected {list(want)} for an input "
            f"of shape {list(shape)}"
        )
    if ctx.dtype(1) not in ("int32", "int64"):
        raise ctx.error(f"the targets have element type {ctx.dtype(1)}; expected int32 or int64")
    if ctx.has(2):
        if tuple(ctx.shape(2)) != (shape[1],):
            raise ctx.error(f"the weights have shape {list(ctx.shape(2))}; expected [{shape[1]}]")
        weights = ctx.expr(2)
    else:
        weights = ctx.const(np.ones(shape[1], dtype=dtype))
    ignore = ctx.attr("ignore_index")
    return ctx.call(
        "nn.nll_loss",
        log_probs,
        ctx.expr(1),
        weights,
        reduction=reduction,
        ignore_index=-100 if ignore is None else int(ignore),
    )


def _negative_log_likelihood(ctx: NodeContext) -> Expr:
    return _nll(ctx, ctx.expr(0))


def _softmax_cross_entropy(ctx: NodeContext) -> list[Expr]:
    log_probs = ctx.call("nn.log_softmax", ctx.expr(0), axis=1)
    loss = _nll(ctx, log_probs)
    return [loss, log_probs] if ctx.output_used(1) else [loss]


LOSS_CONVERTERS: ConverterTable = {
    "NegativeLogLikelihoodLoss": (12, _negative_log_likelihood),
    "SoftmaxCrossEntropyLoss": (12, _softmax_cross_entropy),
}
