"""Elementwise math on one tensor: ``exp``, ``sqrt``, ``negative``, ``clip``, ``cast``, ..."""

from __future__ import annotations

from collections.abc import Callable

from ..ffi.errors import TVMTypeError
from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import op as tirop
from ..tir.expr import Cast, ExprLike, PrimExpr, const, convert, is_float
from . import tag
from ._shape import op_error
from .fast_math import erf_expr

__all__ = [
    "abs",
    "cast",
    "ceil",
    "clip",
    "erf",
    "exp",
    "floor",
    "identity",
    "log",
    "negative",
    "reinterpret",
    "round",
    "rsqrt",
    "sigmoid",
    "sqrt",
    "tanh",
]


def _unary(name: str, fn: Callable[[PrimExpr], PrimExpr], x: Tensor) -> Tensor:
    if not isinstance(x, Tensor):
        raise TVMTypeError(f"topi.{name}: expected a te.Tensor, got {type(x).__name__}")
    return compute(x.shape, lambda *i: fn(x(*i)), name=f"T_{name}", tag=tag.ELEMWISE)


def _float_only(name: str, fn: Callable[[PrimExpr], PrimExpr], x: Tensor) -> Tensor:
    """``fn`` elementwise on a float tensor; on another dtype, TVM's intrinsic call
    ``tir.<name>`` of that dtype, as TVM builds it (a code generator without it refuses it
    when the kernel is built, so an unused stage costs nothing).
    """
    if isinstance(x, Tensor) and not is_float(x.dtype):
        return _unary(name, lambda v: tirop.call_intrin(v.dtype, f"tir.{name}", v), x)
    return _unary(name, fn, x)


def identity(x: Tensor) -> Tensor:
    """A copy of ``x``."""
    return _unary("identity", lambda v: v, x)


def negative(x: Tensor) -> Tensor:
    """``-x``."""
    return _unary("negative", lambda v: -v, x)


def exp(x: Tensor) -> Tensor:
    """``e ** x``."""
    return _float_only("exp", tirop.exp, x)


def log(x: Tensor) -> Tensor:
    """Natural logarithm."""
    return _float_only("log", tirop.log, x)


def sqrt(x: Tensor) -> Tensor:
    """Square root."""
    return _float_only("sqrt", tirop.sqrt, x)


def rsqrt(x: Tensor) -> Tensor:
    """``1 / sqrt(x)``."""
    return _float_only("rsqrt", tirop.rsqrt, x)


def tanh(x: Tensor) -> Tensor:
    """Hyperbolic tangent."""
    return _float_only("tanh", tirop.tanh, x)


def sigmoid(x: Tensor) -> Tensor:
    """``1 / (1 + exp(-x))``."""
    return _float_only("sigmoid", tirop.sigmoid, x)


def erf(x: Tensor) -> Tensor:
    """The Gauss error function (float32 on the LLVM backend: a rational approximation that
    vectorizes, within 4e-7 of the true value; see :mod:`pytvm.topi.fast_math`).
    """
    return _float_only("erf", erf_expr, x)


def abs(x: Tensor) -> Tensor:
    """Absolute value (integers and floats)."""
    return _unary("abs", tirop.abs, x)


def _rounding(name: str, fn: Callable[[PrimExpr], PrimExpr], x: Tensor) -> Tensor:
    # Integers are already whole: the operation is the identity, as in TVM.
    return _unary(name, fn if is_float(x.dtype) else (lambda v: v), x)


def floor(x: Tensor) -> Tensor:
    """Round toward negative infinity."""
    return _rounding("floor", tirop.floor, x)


def ceil(x: Tensor) -> Tensor:
    """Round toward positive infinity."""
    return _rounding("ceil", tirop.ceil, x)


def round(x: Tensor) -> Tensor:
    """Round to the nearest integer, halves to even (ONNX and numpy's rule)."""
    return _rounding("round", tirop.round, x)


def clip(x: Tensor, a_min: ExprLike, a_max: ExprLike) -> Tensor:
    """``x`` limited to ``[a_min, a_max]``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((4,), name="A")
    >>> str(topi.clip(A, 0.0, 6.0).op.body[0])
    'max(min(A[i0], 6.0f32), 0.0f32)'
    """
    lo, hi = _as_number(a_min), _as_number(a_max)
    if lo is not None and hi is not None and lo > hi:
        raise op_error("clip", "a_min/a_max", (a_min, a_max), "a_min <= a_max")

    def bound(b: ExprLike, dtype: str) -> PrimExpr:
        if isinstance(b, (int, float)):
            return const(b, dtype)
        value = const_value(b)
        if value is not None:  # an IntImm/FloatImm of another type: TVM casts it
            return const(value, dtype)
        return convert(b).astype(dtype)

    def fn(v: PrimExpr) -> PrimExpr:
        return tirop.max(tirop.min(v, bound(a_max, v.dtype)), bound(a_min, v.dtype))

    return _unary("clip", fn, x)


def _as_number(v: ExprLike) -> float | None:
    return float(v) if isinstance(v, (int, float)) else None


def const_value(v: ExprLike) -> int | float | None:
    """The Python value of a constant expression (IntImm/FloatImm), else None."""
    value = getattr(v, "value", None)
    return value if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def cast(x: Tensor, dtype: str) -> Tensor:
    """``x`` converted to ``dtype`` (floats to integers round toward zero)."""
    target = str(const(0, dtype).dtype)
    return _unary("cast", lambda v: v if v.dtype == target else Cast(target, v), x)


def reinterpret(x: Tensor, dtype: str) -> Tensor:
    """The bits of each element read as ``dtype`` (of the same width)."""
    return _unary("reinterpret", lambda v: tirop.reinterpret(dtype, v), x)
