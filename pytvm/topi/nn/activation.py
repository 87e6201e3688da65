"""Elementwise activations: ``relu``, ``leaky_relu``, ``prelu``, ``gelu``, ``hard_swish``,
``hard_sigmoid`` (``clip`` is re-exported from :mod:`pytvm.topi.elemwise`).
"""

from __future__ import annotations

import math

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import erf, max, min, tanh
from .. import tag
from .._shape import const_int, normalize_axis, op_error

__all__ = ["gelu", "hard_sigmoid", "hard_swish", "leaky_relu", "prelu", "relu"]

_GELU_MODES = ("none", "tanh")


def _elemwise(name: str, x: Tensor, fn: object) -> Tensor:
    return compute(x.shape, lambda *i: fn(x(*i)), name=f"T_{name}", tag=f"{tag.ELEMWISE},{name}")  # type: ignore[operator]


def relu(x: Tensor) -> Tensor:
    """``max(x, 0)``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((4,), name="A")
    >>> str(topi.nn.relu(A).op.body[0])
    'max(A[i0], 0.0f32)'
    """
    return _elemwise("relu", x, lambda v: max(v, const(0, v.dtype)))


def leaky_relu(x: Tensor, alpha: float) -> Tensor:
    """``x`` where positive, else ``alpha * x``."""

    def fn(v: PrimExpr) -> PrimExpr:
        return max(v, const(0, v.dtype)) + const(alpha, v.dtype) * min(v, const(0, v.dtype))

    return _elemwise("leaky_relu", x, fn)


def prelu(x: Tensor, slope: Tensor, axis: int = 1) -> Tensor:
    """Leaky relu with a learned slope per element of ``axis``."""
    ax = normalize_axis("prelu", axis, x.ndim)
    if slope.ndim != 1 or const_int(slope.shape[0]) != const_int(x.shape[ax]):
        raise op_error("prelu", "slope shape", [str(d) for d in slope.shape], f"[{x.shape[ax]}]")

    def body(*i: Var) -> PrimExpr:
        v = x(*i)
        return max(v, const(0, v.dtype)) + slope(i[ax]) * min(v, const(0, v.dtype))

    return compute(x.shape, body, name="T_prelu", tag=tag.BROADCAST + ",prelu")


def gelu(x: Tensor, approximate: str = "none") -> Tensor:
    """Gaussian error linear unit: ``x * Phi(x)`` (``"none"``: with erf; ``"tanh"``: the
    tanh approximation ``0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))``).
    """
    if approximate not in _GELU_MODES:
        raise op_error("gelu", "approximate", approximate, f"one of {_GELU_MODES}")

    def exact(v: PrimExpr) -> PrimExpr:
        t = v.dtype
        return const(0.5, t) * v * (const(1.0, t) + erf(v * const(1 / math.sqrt(2.0), t)))

    def approx(v: PrimExpr) -> PrimExpr:
        t = v.dtype
        inner = const(math.sqrt(2 / math.pi), t) * (v + const(0.044715, t) * v * v * v)
        return const(0.5, t) * v * (const(1.0, t) + tanh(inner))

    return _elemwise("gelu", x, exact if approximate == "none" else approx)


def hard_sigmoid(x: Tensor, alpha: float = 0.2, beta: float = 0.5) -> Tensor:
    """``max(0, min(1, alpha * x + beta))`` (ONNX ``HardSigmoid``)."""

    def fn(v: PrimExpr) -> PrimExpr:
        t = v.dtype
        return max(const(0, t), min(const(1, t), const(alpha, t) * v + const(beta, t)))

    return _elemwise("hard_sigmoid", x, fn)


def hard_swish(x: Tensor) -> Tensor:
    """``x * max(0, min(1, x / 6 + 1/2))`` (ONNX ``HardSwish``)."""

    def fn(v: PrimExpr) -> PrimExpr:
        t = v.dtype
        gate = max(const(0, t), min(const(1, t), v * const(1 / 6, t) + const(0.5, t)))
        return v * gate

    return _elemwise("hard_swish", x, fn)
