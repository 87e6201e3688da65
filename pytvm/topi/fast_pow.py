"""``pow(x, y)`` of float32 as vectorizable arithmetic: ``exp(y log|x|)`` carried in float64,
then C99's special cases by selects; constant exponents 0, 1, 2, 3, -1 and 0.5 as products, a
quotient and a square root.

``y log|x|`` must be known to about 2**-30 relative for the float32 result to be right within
an ulp (an error ``d`` in the exponent is a relative error ``d`` in the result, and the exponent
reaches 104), more than float32 carries; so the logarithm (``2 atanh(s)`` series,
``s = (m - 1) / (m + 1)``) and the exponential (Taylor series of degree 11 after
``r = t - n ln 2``) are float64 polynomials, and the one rounding to float32 comes last. The
result is within 1 ulp of the correctly rounded value. Special cases follow C99 (Annex F.9.4.4):
``pow(x, +-0) = 1`` and ``pow(1, y) = 1`` even for NaN, ``pow(-1, +-inf) = 1``, a negative finite
``x`` with a finite non-integer ``y`` gives NaN, a negative ``x`` with an odd integer ``y``
keeps its sign (``pow(-0, -3) = -inf``), and zeros and infinities go to 0 or infinity by the
signs and magnitudes.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ..tir import op as tirop
from ..tir.expr import Broadcast, FloatImm, PrimExpr, scalar_of
from ._float_bits import (
    Share,
    bits_and,
    bits_or,
    bits_shift_left,
    bits_shift_right,
    bits_xor,
    convert_to,
    float_of_bits,
    horner,
    like,
    round_to_integer,
    select,
    sharer,
    to_bits,
)

__all__ = ["pow_expr"]

_F32 = "float32"
_F64 = "float64"
#: Beyond ``|y log x| = 160`` the float32 result is 0 or infinity.
_EXP_CLAMP = 160.0
_LN2_HIGH = 6.93147180369123816490e-01  # the top 32 bits of ln 2: n * _LN2_HIGH is exact
_LN2_LOW = 1.90821492927058770002e-10
#: exp(r) = sum r**k / k! up to degree 11, |r| <= ln(2)/2.
_EXP_SERIES = tuple(1.0 / math.factorial(k) for k in range(12))
#: log(m) = 2 s (1 + s**2/3 + s**4/5 + ...), |s| <= 0.1716 for m in [sqrt(1/2), sqrt(2)).
_LOG_SERIES = tuple(2.0 / (2 * j + 1) for j in range(9))
#: High word of sqrt(1/2) and of 1.0 in float64.
_SQRT_HALF_HIGH = 0x3FE6A09E
_ONE_HIGH = 0x3FF00000
_LOW_WORD = 0xFFFFFFFF
_HIGH_MANTISSA = 0x000FFFFF
_ONE_BITS = 0x3F800000
_MINUS_ONE_BITS = 0xBF800000
#: The bits of an infinity shifted left by one (the sign dropped).
_INF_BITS_X2 = 0xFF000000
_QUIET_NAN = 0x7FC00000
#: Floats of magnitude 2**24 and more are even integers.
_ALL_INTEGERS = 2.0**24


def _log_f64(ax: PrimExpr, share: Share) -> PrimExpr:
    """``log(ax)`` in float64 for a float64 ``ax >= 0`` (0 gives -inf, inf and NaN themselves)."""

    def from_bits(bits: PrimExpr) -> PrimExpr:
        high = convert_to("uint32", bits_shift_right(bits, 32))
        biased = high + like(_ONE_HIGH - _SQRT_HALF_HIGH, high)

        def from_high(hb: PrimExpr) -> PrimExpr:
            k = convert_to(_F64, convert_to("int32", bits_shift_right(hb, 20))) - like(1023.0, ax)
            top = convert_to("uint64", bits_and(hb, _HIGH_MANTISSA) + like(_SQRT_HALF_HIGH, hb))
            mant = float_of_bits(bits_or(bits_shift_left(top, 32), bits_and(bits, _LOW_WORD)))
            one = like(1.0, ax)
            s = (mant - one) / (mant + one)
            series = share(s * s, lambda z: horner(_LOG_SERIES, z))
            return k * like(math.log(2.0), ax) + s * series

        return share(biased, from_high)

    def special(finite: PrimExpr) -> PrimExpr:
        zero = like(0.0, ax)
        positive = select(share, ax < like(math.inf, ax), finite, ax)
        return select(
            share, ax > zero, positive, select(share, ax == zero, like(-math.inf, ax), ax)
        )

    # the selects come last and choose among computed values (no branch in scalar code)
    return share(share(to_bits(ax), from_bits), special)


def _exp_f64(t: PrimExpr, share: Share) -> PrimExpr:
    """``exp(t)`` in float64 for ``|t| <= 160`` (or NaN), within 1e-13 relative."""

    def from_n(n: PrimExpr) -> PrimExpr:
        reduced = (t - n * like(_LN2_HIGH, t)) - n * like(_LN2_LOW, t)
        poly = share(reduced, lambda r: horner(_EXP_SERIES, r))
        # max(n, constant) turns a NaN n into the constant: no NaN reaches the conversion
        safe = tirop.min(tirop.max(n, like(-300.0, n)), like(300.0, n))
        biased = convert_to("uint64", convert_to("int32", safe) + like(1023, t, "int32"))
        return poly * float_of_bits(bits_shift_left(biased, 52))

    return share(round_to_integer(t * like(1.0 / math.log(2.0), t)), from_n)


def _general(x: PrimExpr, y: PrimExpr, share: Share) -> PrimExpr:
    def with_core(core: PrimExpr, yc: PrimExpr, yi: PrimExpr) -> PrimExpr:
        # integer masks and one select of a constant: no branch in scalar code (C's ``&&``
        # and GCC's merging of selects that return one constant would be branches)
        all_ones, u32 = 0xFFFFFFFF, "uint32"
        xb, yb, yu = to_bits(x), to_bits(y), convert_to(u32, yi)
        int_mask = select(share, convert_to(_F32, yi) == yc, like(all_ones, xb), like(0, xb))
        # a negative x and an odd integer y: the sign of x (``pow(-0, 3) = -0``)
        sign = bits_and(bits_and(xb, 0x80000000), bits_and(bits_shift_left(yu, 31), int_mask))
        # a negative finite x (not -0) and a non-integer y: NaN
        neg_finite = select(
            share,
            xb - like(0x80000001, xb) <= like(0xFF7FFFFF - 0x80000001, xb),
            like(_QUIET_NAN, xb),
            like(0, xb),
        )
        nan = bits_and(neg_finite, bits_xor(int_mask, all_ones))
        value = float_of_bits(bits_or(bits_xor(to_bits(core), sign), nan))
        # x == 1 or y == +-0, or x == -1 and y == +-inf: 1
        y2 = bits_shift_left(yb, 1)
        unit_one = tirop.min(bits_xor(xb, _ONE_BITS), y2)
        minus_one_inf = tirop.max(bits_xor(xb, _MINUS_ONE_BITS), bits_xor(y2, _INF_BITS_X2))
        unit = tirop.min(unit_one, minus_one_inf) == like(0, xb)
        return share(value, lambda v: select(share, unit, like(1.0, x), v))

    def with_y(yc: PrimExpr) -> PrimExpr:
        wide_x = tirop.max(convert_to(_F64, x), -convert_to(_F64, x))
        log_x = share(wide_x, lambda ax: _log_f64(ax, share))
        t = convert_to(_F64, y) * log_x
        clamped = tirop.min(like(_EXP_CLAMP, t), tirop.max(like(-_EXP_CLAMP, t), t))
        core = convert_to(_F32, share(clamped, lambda tc: _exp_f64(tc, share)))
        return share(
            core, lambda c: share(convert_to("int32", yc), lambda yi: with_core(c, yc, yi))
        )

    # y clamped to +-2**24 (NaN to the bound) keeps whether it is an odd or even integer
    bound = like(_ALL_INTEGERS, y)
    return share(tirop.min(tirop.max(y, -bound), bound), with_y)


def _constant(y: PrimExpr) -> float | None:
    if isinstance(y, Broadcast):
        y = y.value
    return y.value if isinstance(y, FloatImm) else None


def pow_expr(x: PrimExpr, y: PrimExpr, let: bool = False) -> PrimExpr:
    """``x ** y`` as vectorizable arithmetic for float32 (the intrinsic for other dtypes),
    within 1 ulp, with C99's special cases; a constant ``y`` of 0, 1, 2, 3, -1 or 0.5 is
    ``1``, ``x``, ``x*x``, ``x*x*x``, ``1/x`` or ``sqrt(x)`` (``+0`` for ``-0``, ``inf`` for
    ``-inf``).
    """
    if scalar_of(x.dtype) != _F32 or y.dtype != x.dtype:
        return tirop.pow(x, y)
    share = sharer(let)
    exponent = _constant(y)
    one = like(1.0, x)
    forms: dict[float, Callable[[PrimExpr], PrimExpr]] = {
        0.0: lambda v: one,
        1.0: lambda v: v,
        2.0: lambda v: v * v,
        3.0: lambda v: v * v * v,
        -1.0: lambda v: one / v,
        0.5: lambda v: _sqrt(v, share),
    }
    form = forms.get(exponent) if exponent is not None else None
    if form is not None:
        return share(x, form)
    return share(x, lambda v: share(y, lambda w: _general(v, w, share)))


def _sqrt(v: PrimExpr, share: Share) -> PrimExpr:
    zero = like(0.0, v)
    root = select(share, v == zero, zero, tirop.sqrt(v))
    return select(share, v == like(-math.inf, v), like(math.inf, v), root)
