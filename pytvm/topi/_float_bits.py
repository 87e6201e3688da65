"""Building blocks of the vectorizable math expressions: constants of an operand's type, Horner
polynomials, bit views of floats and sharing a value (inline, or as a ``Let``).

Every helper keeps the lanes of its operand, so one expression serves a scalar and a vector of any
width. A shared value is written twice into the tree where the expression must pass the
vectorizer (``Let`` stops it), and bound once by a ``Let`` where a code generator builds it
after vectorizing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ..tir.expr import (
    Broadcast,
    Call,
    Cast,
    FloatImm,
    IntImm,
    Let,
    PrimExpr,
    Select,
    Var,
    const,
    lanes_of,
    scalar_of,
    with_lanes,
)
from ..tir.op import reinterpret

__all__ = [
    "Share",
    "bits_and",
    "bits_or",
    "bits_shift_left",
    "bits_shift_right",
    "bits_xor",
    "convert_to",
    "float_of_bits",
    "horner",
    "like",
    "round_to_integer",
    "select",
    "sharer",
    "to_bits",
]

#: ``share(value, body)``: ``body`` of ``value`` evaluated once (a ``Let``) or written inline.
Share = Callable[[PrimExpr, Callable[[PrimExpr], PrimExpr]], PrimExpr]

#: ``x + MAGIC - MAGIC`` rounds a float to the nearest integer (ties to even) while ``|x|`` is
#: below ``2 ** 22`` (float32) or ``2 ** 51`` (float64): the sum has no fraction bits left.
_ROUND_MAGIC = {"float32": 12582912.0, "float64": 6755399441055744.0}
_BITS = {"float32": "uint32", "float64": "uint64"}
_FLOATS = {"uint32": "float32", "uint64": "float64"}


def _inline(value: PrimExpr, body: Callable[[PrimExpr], PrimExpr]) -> PrimExpr:
    return body(value)


def _let(value: PrimExpr, body: Callable[[PrimExpr], PrimExpr]) -> PrimExpr:
    if isinstance(value, (Var, IntImm, FloatImm)) or (
        isinstance(value, Broadcast) and isinstance(value.value, (IntImm, FloatImm, Var))
    ):
        return body(value)
    var = Var("vm", value.dtype)
    return Let(var, value, body(var))


def sharer(let: bool) -> Share:
    """The way to share values: a ``Let`` (``let``) or the value written at each use."""
    return _let if let else _inline


def select(share: Share, cond: PrimExpr, t: PrimExpr, f: PrimExpr) -> PrimExpr:
    """``cond ? t : f`` with both values computed first (shared): a select of two values, never
    a branch around a computation (a C compiler does not speculate float arithmetic that may
    raise a flag, so that branch would keep the loop scalar).
    """
    return share(t, lambda tv: share(f, lambda fv: Select(cond, tv, fv)))


def like(value: float | int, x: PrimExpr, scalar: str | None = None) -> PrimExpr:
    """The constant ``value`` with ``x``'s lanes, of ``x``'s scalar type or ``scalar``."""
    return const(value, with_lanes(scalar or scalar_of(x.dtype), lanes_of(x.dtype)))


def horner(coefs: Sequence[float], t: PrimExpr) -> PrimExpr:
    """``coefs[0] + coefs[1] t + ...`` by Horner's rule."""
    out = like(coefs[-1], t)
    for c in coefs[-2::-1]:
        out = out * t + like(c, t)
    return out


def convert_to(scalar: str, x: PrimExpr) -> PrimExpr:
    """``x`` converted to ``scalar`` lane by lane (C's conversion)."""
    return Cast(with_lanes(scalar, lanes_of(x.dtype)), x)


def to_bits(x: PrimExpr) -> PrimExpr:
    """The bits of a float as an unsigned integer of its width."""
    return reinterpret(_BITS[scalar_of(x.dtype)], x)


def float_of_bits(bits: PrimExpr) -> PrimExpr:
    """The float whose bits are the unsigned integer ``bits``."""
    return reinterpret(_FLOATS[scalar_of(bits.dtype)], bits)


def _bit_call(op: str, a: PrimExpr, b: PrimExpr | int) -> PrimExpr:
    return Call(a.dtype, op, (a, like(b, a) if isinstance(b, int) else b))


def bits_and(a: PrimExpr, b: PrimExpr | int) -> PrimExpr:
    """``a & b``."""
    return _bit_call("tir.bitwise_and", a, b)


def bits_or(a: PrimExpr, b: PrimExpr | int) -> PrimExpr:
    """``a | b``."""
    return _bit_call("tir.bitwise_or", a, b)


def bits_xor(a: PrimExpr, b: PrimExpr | int) -> PrimExpr:
    """``a ^ b``."""
    return _bit_call("tir.bitwise_xor", a, b)


def bits_shift_right(a: PrimExpr, n: int) -> PrimExpr:
    """``a >> n`` (logical for the unsigned types used here)."""
    return _bit_call("tir.shift_right", a, n)


def bits_shift_left(a: PrimExpr, n: int) -> PrimExpr:
    """``a << n``."""
    return _bit_call("tir.shift_left", a, n)


def round_to_integer(x: PrimExpr) -> PrimExpr:
    """``x`` rounded to the nearest integer, ties to even, for ``|x|`` below ``2 ** 22``
    (float32) or ``2 ** 51`` (float64); arithmetic only, so it stays a vector instruction.
    """
    magic = like(_ROUND_MAGIC[scalar_of(x.dtype)], x)
    return (x + magic) - magic
