"""More elementwise math: ``sign``, ``logical_not``, ``logical_xor``, trigonometric and
hyperbolic functions (built from the intrinsics every code generator provides).
"""

from __future__ import annotations

from collections.abc import Callable

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import op as tirop
from ..tir.expr import Not, PrimExpr, Select, const
from . import tag
from .broadcast import not_equal
from .elemwise import _float_only, _unary

__all__ = [
    "acosh",
    "asinh",
    "atanh",
    "cos",
    "cosh",
    "isfinite",
    "isinf",
    "isnan",
    "logical_not",
    "logical_xor",
    "sign",
    "sin",
    "sinh",
    "tan",
    "trunc",
]


def _intrin(name: str) -> Callable[[PrimExpr], PrimExpr]:
    return lambda v: tirop.call_intrin(v.dtype, name, v)


def _one(v: PrimExpr) -> PrimExpr:
    return const(1, v.dtype)


def sign(x: Tensor) -> Tensor:
    """-1, 0 or 1 by the sign of each element (integers and floats).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> topi.sign(te.placeholder((3,), name="A")).op.tag
    'elemwise'
    """

    def fn(v: PrimExpr) -> PrimExpr:
        zero = const(0, v.dtype)
        return Select(v > zero, const(1, v.dtype), Select(v < zero, const(-1, v.dtype), zero))

    return _unary("sign", fn, x)


def logical_not(x: Tensor) -> Tensor:
    """Logical negation of a boolean tensor (a non-boolean one is compared with zero)."""

    def fn(v: PrimExpr) -> PrimExpr:
        return Not(v) if v.dtype == "bool" else v == const(0, v.dtype)

    return compute(x.shape, lambda *i: fn(x(*i)), name="T_logical_not", tag=tag.ELEMWISE)


def logical_xor(lhs: Tensor, rhs: Tensor) -> Tensor:
    """Exclusive or of booleans, with broadcasting."""
    return not_equal(lhs, rhs)  # type: ignore[no-any-return]


def sin(x: Tensor) -> Tensor:
    """Sine."""
    return _float_only("sin", _intrin("sin"), x)


def cos(x: Tensor) -> Tensor:
    """Cosine."""
    return _float_only("cos", _intrin("cos"), x)


def tan(x: Tensor) -> Tensor:
    """Tangent (TVM's intrinsic ``tir.tan``)."""
    return _float_only("tan", _intrin("tan"), x)


def asin(x: Tensor) -> Tensor:
    """Inverse sine (TVM's intrinsic ``tir.asin``)."""
    return _float_only("asin", _intrin("asin"), x)


def acos(x: Tensor) -> Tensor:
    """Inverse cosine (TVM's intrinsic ``tir.acos``)."""
    return _float_only("acos", _intrin("acos"), x)


def atan(x: Tensor) -> Tensor:
    """Inverse tangent (TVM's intrinsic ``tir.atan``)."""
    return _float_only("atan", _intrin("atan"), x)


def sinh(x: Tensor) -> Tensor:
    """Hyperbolic sine."""

    def fn(v: PrimExpr) -> PrimExpr:
        return (tirop.exp(v) - tirop.exp(-v)) * const(0.5, v.dtype)

    return _float_only("sinh", fn, x)


def cosh(x: Tensor) -> Tensor:
    """Hyperbolic cosine."""

    def fn(v: PrimExpr) -> PrimExpr:
        return (tirop.exp(v) + tirop.exp(-v)) * const(0.5, v.dtype)

    return _float_only("cosh", fn, x)


def asinh(x: Tensor) -> Tensor:
    """Inverse hyperbolic sine: ``log(x + sqrt(x*x + 1))``."""
    return _float_only("asinh", lambda v: tirop.log(v + tirop.sqrt(v * v + _one(v))), x)


def acosh(x: Tensor) -> Tensor:
    """Inverse hyperbolic cosine: ``log(x + sqrt(x*x - 1))``."""
    return _float_only("acosh", lambda v: tirop.log(v + tirop.sqrt(v * v - _one(v))), x)


def atanh(x: Tensor) -> Tensor:
    """Inverse hyperbolic tangent: ``log((1 + x) / (1 - x)) / 2``."""

    def fn(v: PrimExpr) -> PrimExpr:
        return tirop.log((_one(v) + v) / (_one(v) - v)) * const(0.5, v.dtype)

    return _float_only("atanh", fn, x)


def trunc(x: Tensor) -> Tensor:
    """Round toward zero (integers are unchanged)."""
    if not str(x.dtype).startswith("float"):
        return _unary("trunc", lambda v: v, x)
    return _unary("trunc", _intrin("tir.trunc"), x)


def _bool_check(name: str, fn: Callable[[PrimExpr], PrimExpr], x: Tensor, ints: bool) -> Tensor:
    """A boolean per element: ``fn`` of a float, the constant ``ints`` for other dtypes."""
    if not str(x.dtype).startswith("float"):
        return compute(x.shape, lambda *i: const(ints, "bool"), name=f"T_{name}", tag=tag.ELEMWISE)
    return compute(x.shape, lambda *i: fn(x(*i)), name=f"T_{name}", tag=tag.ELEMWISE)


def _flag(name: str) -> Callable[[PrimExpr], PrimExpr]:
    """TVM's boolean intrinsic ``name`` of a float."""
    return lambda v: tirop.call_intrin("bool", name, v)


def isnan(x: Tensor) -> Tensor:
    """Whether each element is NaN (TVM's ``tir.isnan``; never for integers).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> topi.isnan(te.placeholder((3,), name="A")).dtype
    'bool'
    """
    return _bool_check("isnan", _flag("tir.isnan"), x, False)


def isinf(x: Tensor) -> Tensor:
    """Whether each element is positive or negative infinity (never for integers)."""
    return _bool_check("isinf", _flag("tir.isinf"), x, False)


def isfinite(x: Tensor) -> Tensor:
    """Whether each element is neither infinite nor NaN (always for integers)."""
    return _bool_check("isfinite", _flag("tir.isfinite"), x, True)
