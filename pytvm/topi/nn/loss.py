"""``nll_loss``: the negative log-likelihood loss of log-probabilities and class targets."""

from __future__ import annotations

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_int, op_error
from ..broadcast import divide
from ..reduction import sum as _sum

__all__ = ["nll_loss"]

REDUCTIONS = ("mean", "sum", "none")


def nll_loss(
    predictions: Tensor, targets: Tensor, weights: Tensor, reduction: str, ignore_index: int
) -> Tensor:
    """``-predictions[n, targets[n, ...], ...] * weights[targets[n, ...]]`` per target, 0 where
    the target is ``ignore_index``; ``reduction`` ``"none"`` keeps them, ``"sum"`` adds them
    and ``"mean"`` divides that sum by the sum of the weights used. ``predictions`` is
    ``[N, C, d1, ...]`` with ``targets`` ``[N, d1, ...]``, or ``[C]`` with a scalar target.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> p = te.placeholder((10, 5), name="p")
    >>> t = te.placeholder((10,), "int32", "t")
    >>> w = te.placeholder((5,), name="w")
    >>> [str(d) for d in topi.nn.nll_loss(p, t, w, "none", -100).shape]
    ['10']
    """
    op = "nll_loss"
    if reduction not in REDUCTIONS:
        raise op_error(op, "reduction", reduction, f"one of {REDUCTIONS}")
    batched = predictions.ndim > 1
    want_rank = predictions.ndim - 1 if batched else 0
    if targets.ndim != want_rank:
        raise op_error(op, "targets rank", targets.ndim, f"{want_rank} for the predictions")
    classes = predictions.shape[1] if batched else predictions.shape[0]
    if weights.ndim != 1 or const_int(weights.shape[0]) != const_int(classes):
        raise op_error(op, "weights shape", [str(d) for d in weights.shape], f"[{classes}]")
    dtype = predictions.dtype
    zero = const(0, dtype)

    def loss(*i: Var) -> PrimExpr:
        c = targets(*i)
        at = [i[0], c, *i[1:]] if batched else [c]
        return if_then_else(c != ignore_index, -predictions(*at) * weights(c), zero)

    def weight(*i: Var) -> PrimExpr:
        c = targets(*i)
        return if_then_else(c != ignore_index, weights(c), zero)

    losses = compute(targets.shape, loss, name="nll_loss", tag=tag.BROADCAST)
    if reduction == "none" or (reduction == "sum" and not batched):
        return losses
    total = _sum(losses) if batched else losses
    if reduction == "sum":
        return total
    used = compute(targets.shape, weight, name="nll_loss_weights", tag=tag.BROADCAST)
    return divide(total, _sum(used) if batched else used)  # type: ignore[no-any-return]
