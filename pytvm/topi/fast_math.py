"""``exp``, ``log``, ``tanh``, ``sigmoid`` and ``erf`` of float32 from multiply-adds, selects and
bit casts, so vector loops stay vectors.

A vector call of a math function is one ``libm`` call per lane; these expressions use only
arithmetic, comparisons, selects, ``min``/``max``, integer conversions and bit operations, which
both code generators compile to vector instructions. They keep the lanes of their operand, so
they serve scalars and vectors alike. Two places use them: topi's stages that must vectorize
(``topi.erf``, softmax, the ``fast_*`` operators: there a shared value is written at each use,
as the vectorizer refuses ``Let``), and the code generators, which replace every vector float32
call of ``tir.exp``/``log``/``tanh``/``sigmoid``/``erf``/``pow`` by them after vectorizing
(``let=True``: each shared value is bound once; :mod:`pytvm.codegen.vector_math`).

Accuracy against the exact value in units of float32's spacing there (ulp), as
tests/topi/test_vector_math.py checks it over a sweep of float32: ``exp`` within 2 ulp
(subnormal results included, infinity above 88.72284), ``log`` within 2 ulp, ``tanh`` within
3 ulp, ``sigmoid`` within 3 ulp, ``erf`` within 4e-7 absolute. The largest errors measured over
every 257th float32 bit pattern (16.7 million values): ``exp`` 0.98, ``log`` 0.76, ``tanh``
1.31, ``sigmoid`` 2.33 ulp. Special values are as C's ``libm``: ``exp(-inf) = 0``,
``exp(inf) = inf``, ``log(0) = -inf``, ``log(x < 0) = nan``, ``log(inf) = inf``,
``tanh(+-inf) = +-1``, ``tanh(-0) = -0``, and NaN in gives NaN out. Other dtypes use the
intrinsics.
"""

from __future__ import annotations

import math

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import op as tirop
from ..tir.expr import Cast, PrimExpr, scalar_of
from . import tag
from ._float_bits import (
    bits_and,
    bits_shift_right,
    convert_to,
    float_of_bits,
    horner,
    like,
    select,
    sharer,
    to_bits,
)
from ._shape import op_error

__all__ = [
    "erf_expr",
    "exp_expr",
    "fast_erf",
    "fast_exp",
    "fast_tanh",
    "log_expr",
    "sigmoid_expr",
    "tanh_expr",
]

_F32 = "float32"
_F16 = "float16"
#: exp's argument is clamped to this range first: beyond it the result is 0 or infinity.
_EXP_CLAMP = (-104.0, 100.0)
#: ln 2 split so that ``n * _LN2_HIGH`` is exact for the exponents used (Cody and Waite).
_LN2_HIGH = 0.693359375
_LN2_LOW = -2.12194440e-4
#: exp(r) = 1 + r P(r) on |r| <= ln(2)/2: a minimax fit of the relative error (2e-9) made for
#: this module by reweighted least squares.
_EXP_P = (
    1.0,
    0.4999999403953552,
    0.16666431725025177,
    0.04166800156235695,
    0.00837415549904108,
    0.0013843652559444308,
)
#: ``x + 1.5 * 2 ** 23`` holds round(x) in its low mantissa bits; these are its bits at 0.
_ROUND_MAGIC = 12582912.0
_MAGIC_BITS = 0x4B400000
#: log(1 + f) = f - f**2/2 + f**3 P(f) on sqrt(1/2) - 1 <= f < sqrt(2) - 1 (Cephes' logf).
_LOG_P = (
    3.3333331174e-1,
    -2.4999993993e-1,
    2.0000714765e-1,
    -1.6668057665e-1,
    1.4249322787e-1,
    -1.2420140846e-1,
    1.1676998740e-1,
    -1.1514610310e-1,
    7.0376836292e-2,
)
#: tanh(x) = x + x**3 P(x**2) on |x| < 0.625 (Cephes' tanhf).
_TANH_P = (
    -3.33332819422e-1,
    1.33314422036e-1,
    -5.37397155531e-2,
    2.06390887954e-2,
    -5.70498872745e-3,
)
_TANH_SMALL = 0.625
#: Below this tanh(x) rounds to x (and -0 stays -0).
_TANH_TINY = 2.0**-12
_ERF_CLAMP = 4.0
_ERF_P = (
    1.1283791672613768,
    0.19215937639381273,
    0.055279242151604846,
    0.004146661328175492,
    0.00039326313147084596,
    6.125442134560788e-06,
)
_ERF_Q = (
    1.0,
    0.5036301723304186,
    0.11686643503232225,
    0.01607763131155498,
    0.0013814656861928674,
    6.773271054389546e-05,
    2.2361270202164718e-07,
)
#: Bits of sqrt(1/2): a mantissa is normalized into [sqrt(1/2), sqrt(2)).
_SQRT_HALF_BITS = 0x3F3504F3
_ONE_BITS = 0x3F800000
_MANTISSA = 0x007FFFFF
_SMALLEST_NORMAL = 2.0**-126


def exp_expr(x: PrimExpr, let: bool = False) -> PrimExpr:
    """``exp(x)`` as vectorizable arithmetic for float32 (the intrinsic for other dtypes):
    ``2 ** n * exp(r)`` with ``r = x - n ln 2``, within 2 ulp; subnormal results are rounded
    once (the scale is split in two powers of two), so they are within 1 ulp of their spacing.
    """
    if scalar_of(x.dtype) != _F32:
        return tirop.exp(x)
    share = sharer(let)
    low, high = _EXP_CLAMP
    # min(constant, ...) and max(constant, ...) keep a NaN x (``a < b ? a : b``)
    clamped = tirop.min(like(high, x), tirop.max(like(low, x), x))

    def from_k(xc: PrimExpr, k: PrimExpr) -> PrimExpr:
        n = k - like(_ROUND_MAGIC, x)
        reduced = (xc - n * like(_LN2_HIGH, x)) - n * like(_LN2_LOW, x)
        poly = share(reduced, lambda r: like(1.0, r) + r * horner(_EXP_P, r))
        # 2 ** n as 2 ** h * 2 ** (n - h) with h = round(n / 2), both normal (|h| <= 75): the
        # product is rounded once, into the subnormals or to infinity. The integers are the low
        # bits of k and of n / 2 + 1.5 * 2 ** 23 (no float-to-int conversion, which a NaN
        # would make undefined; unsigned arithmetic wraps)
        half = n * like(0.5, x) + like(_ROUND_MAGIC, x)
        return _scaled(poly, _low_bits(k), _low_bits(half))

    def round_n(xc: PrimExpr) -> PrimExpr:  # n + 1.5 * 2 ** 23: n in the low bits
        return xc * like(1.0 / math.log(2.0), x) + like(_ROUND_MAGIC, x)

    return share(clamped, lambda xc: share(round_n(xc), lambda k: from_k(xc, k)))


def _low_bits(magic_sum: PrimExpr) -> PrimExpr:
    """The integer ``m`` of ``m + 1.5 * 2 ** 23`` (as uint32, wrapping for a negative ``m``)."""
    return to_bits(magic_sum) - like(_MAGIC_BITS, magic_sum, "uint32")


def _scaled(poly: PrimExpr, n: PrimExpr, h: PrimExpr) -> PrimExpr:
    """``poly * 2 ** h * 2 ** (n - h)`` for integers ``n``, ``h`` (uint32) with the exponents
    of both powers in the normal range.
    """

    def power(e: PrimExpr) -> PrimExpr:  # the biased exponent e + 127 in place
        return float_of_bits(e * like(1 << 23, e) + like(_ONE_BITS, e))

    return (poly * power(h)) * power(n - h)


def log_expr(x: PrimExpr, let: bool = False) -> PrimExpr:
    """``log(x)`` as vectorizable arithmetic for float32 (the intrinsic for other dtypes):
    ``k ln 2 + log(m)`` with the mantissa ``m`` in ``[sqrt(1/2), sqrt(2))`` read from the bits
    (subnormals scaled by ``2 ** 23`` first), within 2 ulp.
    """
    if scalar_of(x.dtype) != _F32:
        return tirop.log(x)
    share = sharer(let)

    def body(v: PrimExpr) -> PrimExpr:
        tiny = v < like(_SMALLEST_NORMAL, v)
        scaled = select(share, tiny, v * like(2.0**23, v), v)
        # the test phrased apart from ``tiny``: GCC would merge two selects of one test into a
        # branch around the integer conversion below (which may raise "inexact")
        normal = v >= like(_SMALLEST_NORMAL, v)
        shift = select(share, normal, like(0.0, v), like(23.0, v))
        biased = to_bits(scaled) + like(_ONE_BITS - _SQRT_HALF_BITS, v, "uint32")

        def from_bits(ix: PrimExpr) -> PrimExpr:
            exponent = convert_to(_F32, convert_to("int32", bits_shift_right(ix, 23)))
            k = exponent - like(127.0, v) - shift
            mant = float_of_bits(bits_and(ix, _MANTISSA) + like(_SQRT_HALF_BITS, ix))
            return share(k, lambda kk: share(mant - like(1.0, v), lambda f: _log_poly(f, kk)))

        def special(finite: PrimExpr) -> PrimExpr:
            positive = select(share, v == like(math.inf, v), v, finite)
            negative = select(share, v == like(0.0, v), like(-math.inf, v), like(math.nan, v))
            return select(share, v > like(0.0, v), positive, negative)  # NaN: neither test holds

        # the selects come last and choose among computed values (no branch in scalar code)
        return share(share(biased, from_bits), special)

    return share(x, body)


def _log_poly(f: PrimExpr, k: PrimExpr) -> PrimExpr:
    z = f * f
    y = f * z * horner(_LOG_P, f) + k * like(_LN2_LOW, f) - like(0.5, f) * z
    return (f + y) + k * like(_LN2_HIGH, f)


def tanh_expr(x: PrimExpr, let: bool = False) -> PrimExpr:
    """``tanh(x)`` as vectorizable arithmetic for float32 and float16 (computed in float32),
    the intrinsic for other dtypes: ``x + x**3 P(x**2)`` below 0.625, else
    ``sign(x) (1 - 2 / (exp(2|x|) + 1))``; within 3 ulp, ``tanh(+-inf) = +-1``.
    """
    if scalar_of(x.dtype) == _F16:
        return convert_to(_F16, tanh_expr(convert_to(_F32, x), let))
    if scalar_of(x.dtype) != _F32:
        return tirop.tanh(x)
    share = sharer(let)

    def body(v: PrimExpr) -> PrimExpr:
        def with_abs(a: PrimExpr) -> PrimExpr:
            one = like(1.0, v)
            z = v * v
            small = select(share, a < like(_TANH_TINY, v), v, v + v * z * horner(_TANH_P, z))

            def with_large(large: PrimExpr) -> PrimExpr:
                signed = select(share, v < like(0.0, v), -large, large)
                return select(share, a < like(_TANH_SMALL, v), small, signed)

            return share(one - like(2.0, v) / (exp_expr(a + a, let) + one), with_large)

        return share(tirop.max(v, -v), with_abs)  # |v| (a NaN stays NaN)

    return share(x, body)


def sigmoid_expr(x: PrimExpr, let: bool = False) -> PrimExpr:
    """``1 / (1 + exp(-x))`` for float32 (and float16, computed in float32) with
    :func:`exp_expr` of ``-|x|`` (``e / (1 + e)`` for negative ``x``: no overflow, subnormal
    results for ``x < -87.3``), within 3 ulp.
    """
    if scalar_of(x.dtype) == _F16:
        return convert_to(_F16, sigmoid_expr(convert_to(_F32, x), let))
    if scalar_of(x.dtype) != _F32:
        return tirop.sigmoid(x)
    share = sharer(let)

    def body(v: PrimExpr) -> PrimExpr:
        one = like(1.0, v)
        # e = exp(-|v|) never overflows: 1 / (1 + e) for v >= 0, e / (1 + e) below
        return share(
            exp_expr(tirop.min(v, -v), let),
            lambda e: select(share, v < like(0.0, v), e, one) / (one + e),
        )

    return share(x, body)


def erf_expr(x: PrimExpr, let: bool = False) -> PrimExpr:
    """``erf(x)`` as vectorizable arithmetic for float32 and float16 (computed in float32 and
    rounded back), the intrinsic for other dtypes: a rational fit of ``erf(x) / x`` in ``x**2``
    on ``[0, 4]`` (least squares on the relative error), within 4e-7 of the true value;
    ``|erf(x)|`` rounds to 1 beyond 4.
    """
    if scalar_of(x.dtype) == _F16:
        return Cast(x.dtype, erf_expr(convert_to(_F32, x), let))
    if scalar_of(x.dtype) != _F32:
        return tirop.erf(x)
    share = sharer(let)

    def body(xc: PrimExpr) -> PrimExpr:
        y = share(xc * xc, lambda t: xc * horner(_ERF_P, t) / horner(_ERF_Q, t))
        return tirop.min(like(1.0, x), tirop.max(like(-1.0, x), y))

    # NaN passes through the clamp
    clamped = tirop.min(like(_ERF_CLAMP, x), tirop.max(like(-_ERF_CLAMP, x), x))
    return share(clamped, body)


def _elementwise(name: str, fn: object, x: Tensor) -> Tensor:
    if not str(x.dtype).startswith("float"):
        raise op_error(name, "dtype", x.dtype, "a float type")
    return compute(
        x.shape,
        lambda *i: fn(x(*i)),  # type: ignore[operator]
        name=f"T_{name}",
        tag=tag.ELEMWISE,
    )


def fast_exp(x: Tensor) -> Tensor:
    """``exp(x)`` elementwise with :func:`exp_expr`.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((4, 16), name="x")
    >>> topi.fast_exp(x).op.tag
    'elemwise'
    """
    return _elementwise("fast_exp", exp_expr, x)


def fast_erf(x: Tensor) -> Tensor:
    """``erf(x)`` elementwise with :func:`erf_expr`."""
    return _elementwise("fast_erf", erf_expr, x)


def fast_tanh(x: Tensor) -> Tensor:
    """``tanh(x)`` elementwise with :func:`tanh_expr`."""
    return _elementwise("fast_tanh", tanh_expr, x)
