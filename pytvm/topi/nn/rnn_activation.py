"""The activation functions of ONNX's recurrent layers (``LSTM``, ``GRU``, ``RNN``) as loop-IR
expressions, with how each reads ``activation_alpha``/``activation_beta``.

An activation is ``(name, alpha, beta)``; names are ONNX's, compared case-insensitively.
``Tanh`` and ``Sigmoid`` of float32 are vectorizable arithmetic (:mod:`..fast_math`), so a
recurrent step's gate loop stays a vector loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...tir import op as tirop
from ...tir.expr import PrimExpr, const
from .._shape import op_error
from ..fast_math import exp_expr, tanh_expr

__all__ = ["ACTIVATION_PARAMETERS", "Activation", "activation_expr", "activations_of"]

#: An activation: its lower-case ONNX name, alpha and beta.
Activation = tuple[str, float, float]

#: Per activation, whether it reads alpha and beta, and their defaults when the attribute
#: lists run out (ONNX Runtime's table; the defaults of the operators of the same name).
ACTIVATION_PARAMETERS: dict[str, tuple[bool, bool, float, float]] = {
    "relu": (False, False, 0.0, 0.0),
    "tanh": (False, False, 0.0, 0.0),
    "sigmoid": (False, False, 0.0, 0.0),
    "affine": (True, True, 1.0, 0.0),
    "leakyrelu": (True, False, 0.01, 0.0),
    "thresholdedrelu": (True, False, 1.0, 0.0),
    "scaledtanh": (True, True, 1.0, 1.0),
    "hardsigmoid": (True, True, 0.2, 0.5),
    "elu": (True, False, 1.0, 0.0),
    "softsign": (False, False, 0.0, 0.0),
    "softplus": (False, False, 0.0, 0.0),
}


def activations_of(
    names: Sequence[str], alphas: Sequence[float], betas: Sequence[float], op: str = "rnn"
) -> tuple[Activation, ...]:
    """``names`` with their alpha and beta: each activation that reads alpha (beta) takes the
    next value of ``alphas`` (``betas``), or its default when the list has run out.
    """
    out: list[Activation] = []
    next_alpha, next_beta = iter(alphas), iter(betas)
    for name in names:
        key = str(name).lower()
        if key not in ACTIVATION_PARAMETERS:
            raise op_error(op, "activation", name, f"one of {sorted(ACTIVATION_PARAMETERS)}")
        uses_alpha, uses_beta, alpha, beta = ACTIVATION_PARAMETERS[key]
        if uses_alpha:
            alpha = float(next(next_alpha, alpha))
        if uses_beta:
            beta = float(next(next_beta, beta))
        out.append((key, alpha, beta))
    return tuple(out)


def _sigmoid(x: PrimExpr) -> PrimExpr:
    one = const(1.0, x.dtype)
    return one / (one + exp_expr(-x))


def _elu(x: PrimExpr, alpha: PrimExpr) -> PrimExpr:
    zero = const(0.0, x.dtype)
    return tirop.if_then_else(x >= zero, x, alpha * (exp_expr(tirop.min(x, zero)) - 1.0))


def _softplus(x: PrimExpr) -> PrimExpr:
    # log(1 + exp(x)) = max(x, 0) + log(1 + exp(-|x|)): no overflow for large x
    zero = const(0.0, x.dtype)
    return tirop.max(x, zero) + tirop.log(const(1.0, x.dtype) + exp_expr(-tirop.abs(x)))


def activation_expr(act: Activation) -> Callable[[PrimExpr], PrimExpr]:
    """The loop-IR function of activation ``act``."""
    name, alpha_value, beta_value = act

    def apply(x: PrimExpr) -> PrimExpr:  # noqa: PLR0911 - one return per activation
        alpha, beta = const(alpha_value, x.dtype), const(beta_value, x.dtype)
        zero, one = const(0.0, x.dtype), const(1.0, x.dtype)
        if name == "relu":
            return tirop.max(x, zero)
        if name == "tanh":
            return tanh_expr(x)
        if name == "sigmoid":
            return _sigmoid(x)
        if name == "affine":
            return alpha * x + beta
        if name == "leakyrelu":
            return tirop.if_then_else(x >= zero, x, alpha * x)
        if name == "thresholdedrelu":
            return tirop.if_then_else(x > alpha, x, zero)
        if name == "scaledtanh":
            return alpha * tanh_expr(beta * x)
        if name == "hardsigmoid":
            return tirop.max(zero, tirop.min(one, alpha * x + beta))
        if name == "elu":
            return _elu(x, alpha)
        if name == "softsign":
            return x / (one + tirop.abs(x))
        assert name == "softplus", name
        return _softplus(x)

    return apply
