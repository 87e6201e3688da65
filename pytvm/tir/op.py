"""Building expressions: intrinsics (exp, sqrt, ...), min/max, index division, selects, casts.

Intrinsics are ``Call`` nodes named ``tir.<name>``; code generators map them to the target's
functions (``expf`` for float32 in C).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import reduce

from ..ffi.dtype import DataType
from ..ffi.errors import TVMTypeError
from .call_builtin import call_intrin
from .expr import (
    And,
    Call,
    ExprLike,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Or,
    PrimExpr,
    Select,
    binary,
    const,
    convert,
    is_float,
    match_types,
    with_lanes,
)
from .expr import (
    Div as _Div,
)
from .expr import (
    Mod as _Mod,
)

__all__ = [
    "FLOAT_INTRINSICS",
    "abs",
    "all",
    "any",
    "call_intrin",
    "ceil",
    "div",
    "erf",
    "exp",
    "floor",
    "floordiv",
    "floormod",
    "fmod",
    "if_then_else",
    "indexdiv",
    "indexmod",
    "log",
    "max",
    "max_value",
    "min",
    "min_value",
    "pow",
    "reinterpret",
    "round",
    "rsqrt",
    "sigmoid",
    "sqrt",
    "tanh",
    "truncdiv",
    "truncmod",
    "vscale",
]

#: Float intrinsics every code generator must provide (one argument unless noted).
FLOAT_INTRINSICS = (
    "exp", "log", "sqrt", "rsqrt", "tanh", "erf", "sigmoid", "floor", "ceil", "round", "fabs",
    "pow", "fmod", "exp2", "log2", "log10", "sin", "cos", "trunc",
)  # fmt: skip


def _float_unary(name: str, x: ExprLike) -> PrimExpr:
    value = convert(x)
    if not is_float(value.dtype):
        raise TVMTypeError(f"{name}({value}): expected a float expression, got {value.dtype}")
    return Call(value.dtype, f"tir.{name}", (value,))


def exp(x: ExprLike) -> PrimExpr:
    """``e ** x``."""
    return _float_unary("exp", x)


def log(x: ExprLike) -> PrimExpr:
    """Natural logarithm."""
    return _float_unary("log", x)


def sqrt(x: ExprLike) -> PrimExpr:
    """Square root."""
    return _float_unary("sqrt", x)


def rsqrt(x: ExprLike) -> PrimExpr:
    """``1 / sqrt(x)``."""
    return _float_unary("rsqrt", x)


def tanh(x: ExprLike) -> PrimExpr:
    """Hyperbolic tangent."""
    return _float_unary("tanh", x)


def erf(x: ExprLike) -> PrimExpr:
    """The error function."""
    return _float_unary("erf", x)


def sigmoid(x: ExprLike) -> PrimExpr:
    """``1 / (1 + exp(-x))``."""
    return _float_unary("sigmoid", x)


def floor(x: ExprLike) -> PrimExpr:
    """Round toward negative infinity."""
    return _float_unary("floor", x)


def ceil(x: ExprLike) -> PrimExpr:
    """Round toward positive infinity."""
    return _float_unary("ceil", x)


def round(x: ExprLike) -> PrimExpr:
    """Round half to even (``nearbyint``), as TVM does."""
    return _float_unary("round", x)


def abs(x: ExprLike) -> PrimExpr:
    """Absolute value (integers and floats)."""
    value = convert(x)
    if is_float(value.dtype):
        return Call(value.dtype, "tir.fabs", (value,))
    return Select(value < 0, -value, value)


def reinterpret(dtype: str, value: ExprLike) -> PrimExpr:
    """The bits of ``value`` read as ``dtype`` (same width; vectors keep their lanes), as
    ``tvm.tir.reinterpret``: ``reinterpret("float32", (n + 127) << 23)`` is ``2.0 ** n``.
    """
    v = convert(value)
    src, dst = DataType(v.dtype), DataType(dtype)
    if src.bits != dst.bits or dst.lanes not in (1, src.lanes):
        raise TVMTypeError(
            f"reinterpret: {v.dtype} and {dtype} differ in width; reinterpret keeps the bits"
        )
    return Call(with_lanes(dtype, src.lanes), "tir.reinterpret", (v,))


def vscale() -> PrimExpr:
    """The hardware's scalable-vector multiplier (``tir.vscale``, an ``int32`` known only at run
    time, as for Arm SVE); ``4 * vscale()`` is the lane count of a scalable vector of 4 lanes
    per unit. pytvm's CPU code generators have no scalable vectors, so only analyses see it.
    """
    return Call("int32", "tir.vscale", ())


def pow(x: ExprLike, y: ExprLike) -> PrimExpr:
    """``x ** y`` for floats."""
    return _float_binary("pow", x, y)


def fmod(x: ExprLike, y: ExprLike) -> PrimExpr:
    """Remainder of float division with the sign of ``x`` (C's ``fmod``)."""
    return _float_binary("fmod", x, y)


def _float_binary(name: str, x: ExprLike, y: ExprLike) -> PrimExpr:
    a, b = match_types(x, y)
    if not is_float(a.dtype):
        raise TVMTypeError(f"{name}({a}, {b}): expected float operands")
    return Call(a.dtype, f"tir.{name}", (a, b))


def min(a: ExprLike, b: ExprLike, *rest: ExprLike) -> PrimExpr:
    """The smallest of the arguments."""
    return reduce(lambda x, y: binary(Min, x, y), (b, *rest), convert(a))


def max(a: ExprLike, b: ExprLike, *rest: ExprLike) -> PrimExpr:
    """The largest of the arguments."""
    return reduce(lambda x, y: binary(Max, x, y), (b, *rest), convert(a))


def floordiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Division rounding toward negative infinity."""
    return binary(FloorDiv, a, b)


def floormod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`floordiv`."""
    return binary(FloorMod, a, b)


def truncdiv(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Division rounding toward zero (C's ``/``)."""
    return binary(_Div, a, b)


def truncmod(a: ExprLike, b: ExprLike) -> PrimExpr:
    """Remainder of :func:`truncdiv` (C's ``%``)."""
    return binary(_Mod, a, b)


def div(a: ExprLike, b: ExprLike) -> PrimExpr:
    """``a / b`` as C computes it (TVM's ``tir.div``): true division of floats, division
    rounding toward zero of integers.
    """
    return binary(_Div, a, b)


#: Index division of non-negative indices (TVM's names): floor division.
indexdiv = floordiv
indexmod = floormod


def if_then_else(cond: ExprLike, t: ExprLike, f: ExprLike) -> PrimExpr:
    """``t`` where ``cond`` holds, else ``f`` (only the chosen side is evaluated)."""
    c = convert(cond)
    a, b = match_types(t, f)
    if isinstance(c, IntImm):
        return a if c.value else b
    return Call(a.dtype, "tir.if_then_else", (c, a, b))


def all(*conds: ExprLike) -> PrimExpr:
    """Logical and of the arguments (``True`` for none)."""
    if len(conds) == 1 and isinstance(conds[0], Sequence):
        conds = tuple(conds[0])
    if not conds:
        return const(True)
    return reduce(lambda x, y: binary(And, x, y), conds[1:], convert(conds[0]))


def any(*conds: ExprLike) -> PrimExpr:
    """Logical or of the arguments (``False`` for none)."""
    if len(conds) == 1 and isinstance(conds[0], Sequence):
        conds = tuple(conds[0])
    if not conds:
        return const(False)
    return reduce(lambda x, y: binary(Or, x, y), conds[1:], convert(conds[0]))


def max_value(dtype: str) -> PrimExpr:
    """The largest value of ``dtype`` (``inf`` for floats)."""
    return _limit(dtype, high=True)


def min_value(dtype: str) -> PrimExpr:
    """The smallest value of ``dtype`` (``-inf`` for floats)."""
    return _limit(dtype, high=False)


def _limit(dtype: str, high: bool) -> PrimExpr:
    if is_float(dtype):
        return const(float("inf") if high else float("-inf"), dtype)
    if dtype == "bool":
        return const(high, "bool")
    bits = int("".join(ch for ch in dtype if ch.isdigit()) or 32)
    if dtype.startswith("uint"):
        return const((1 << bits) - 1 if high else 0, dtype)
    return const((1 << (bits - 1)) - 1 if high else -(1 << (bits - 1)), dtype)
