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
2.40, ``sigmoid`` 2.33 ulp. Special values are as C's ``libm``: ``exp(-inf) = 0``,
``exp(inf) = inf``, ``log(0) = -inf``, ``log(x < 0) = nan``, ``log(inf) = inf``,
``tanh(+-inf) = +-1``, ``tanh(-0) = -0``, and NaN in gives NaN out. Other dtypes use the
intrinsics.
"""

from __future__ import annotations

import math

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import op as tirop
from ..tir.expr import Broadcast, Cast, FloatImm, PrimExpr, Sub, scalar_of
from ..tir.op import reinterpret
from . import tag
from ._float_bits import (
    Share,
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
_LOG2E = 1.0 / math.log(2.0)
#: exp's scale 2 ** n is 2 ** a * 2 ** (n - a) with a = max(n - _EXP_SPLIT, _EXP_FLOOR): both
#: normal for -150 <= n <= 145 (``_scaled``).
_EXP_SPLIT = 32
_EXP_FLOOR = -100
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
#: expm1(2u) = u P(u) on |u| <= ln(2)/4 (P(0) = 2; evaluated as 2u + u (u P1(u)), P1 the rest):
#: a minimax fit of the relative error (1.7e-8 with these float32 coefficients) made for this
#: module by reweighted least squares.
_TANH_EM1 = (
    2.0,
    2.0,
    1.3333228826522827,
    0.6666704416275024,
    0.2677558958530426,
    0.08897212892770767,
)
#: tanh's |x| is clamped here: expm1(19) is above 2 ** 27, so e / (e + 2) rounds to 1.
_TANH_CLAMP = 9.5
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
_REST_BITS = _ONE_BITS + (_EXP_SPLIT << 23)  # 2 ** _EXP_SPLIT
_MANTISSA = 0x007FFFFF
_SMALLEST_NORMAL = 2.0**-126


def exp_expr(x: PrimExpr, let: bool = False) -> PrimExpr:
    """``exp(x)`` as vectorizable arithmetic for float32 (the intrinsic for other dtypes):
    ``2 ** n * exp(r)`` with ``r = x - n ln 2``, within 2 ulp; subnormal results are rounded
    once (the scale is split in two powers of two), so they are within 1 ulp of their spacing.
    ``exp(0 - y)`` (``exp(-y)``, as in ``sigmoid``) is computed from ``y`` with the signs
    folded into the constants: the same roundings, so the same result, one negation fewer.
    """
    if scalar_of(x.dtype) != _F32:
        return tirop.exp(x)
    share = sharer(let)
    low, high = _EXP_CLAMP
    sign = 1.0
    if isinstance(x, Sub) and _is_zero(x.a):
        x, sign = x.b, -1.0  # v = -y: y is clamped to [-high, -low] and r = -(y + n ln 2)
        low, high = -high, -low
    # min(constant, ...) and max(constant, ...) keep a NaN x (``a < b ? a : b``)
    clamped = tirop.min(like(high, x), tirop.max(like(low, x), x))
    # ``k = n - _EXP_SPLIT + 127 + 1.5 * 2 ** 23`` rounds v / ln 2: its low bits are the biased
    # exponent of 2 ** (n - _EXP_SPLIT)
    magic = like(_ROUND_MAGIC - _EXP_SPLIT + 127, x)
    # exp(r) = 1 + r P(r); for r = -r' it is 1 + r' P'(r') with P'(r') = -P(-r')
    coefs = [c * sign ** (j + 1) for j, c in enumerate(_EXP_P)]

    def from_k(xc: PrimExpr, k: PrimExpr) -> PrimExpr:
        n = k - magic
        reduced = (xc - n * like(sign * _LN2_HIGH, x)) - n * like(sign * _LN2_LOW, x)
        poly = share(reduced, lambda r: like(1.0, r) + r * horner(coefs, r))
        return _scaled(poly, k, share)

    def round_n(xc: PrimExpr) -> PrimExpr:
        return share(xc * like(sign * _LOG2E, x) + magic, lambda k: from_k(xc, k))

    return share(clamped, round_n)


def _is_zero(e: PrimExpr) -> bool:
    if isinstance(e, Broadcast):
        e = e.value
    return isinstance(e, FloatImm) and e.value == 0.0


def _scaled(poly: PrimExpr, k: PrimExpr, share: Share) -> PrimExpr:
    """``poly * 2 ** n`` for the ``n`` of ``k = n - _EXP_SPLIT + 127 + 1.5 * 2 ** 23``
    (``-150 <= n <= 145``) as ``poly * 2 ** a * 2 ** (n - a)``, ``a = max(n - _EXP_SPLIT,
    _EXP_FLOOR)``: both powers are normal, so the product is rounded once, into the subnormals
    or to infinity (and is exact for a normal result). The powers are integers in the bits:
    ``k``'s low 9 bits shifted into the exponent field are those of ``2 ** (n - _EXP_SPLIT)``
    (the biased exponent, -55 to 240, as a signed int32 there; no float-to-int conversion,
    which a NaN would make undefined); an integer max clamps it. Two multiplies, not an integer
    add into ``poly``'s exponent, so a NaN ``poly`` stays NaN.
    """
    shifted = reinterpret("int32", to_bits(k) * like(1 << 23, k, "uint32"))  # << 23, wrapping

    def with_shifted(t: PrimExpr) -> PrimExpr:
        def powers(a: PrimExpr) -> PrimExpr:
            first = float_of_bits(reinterpret("uint32", a))
            rest = float_of_bits(reinterpret("uint32", t - a) + like(_REST_BITS, k, "uint32"))
            return (poly * first) * rest

        return share(tirop.max(t, like((_EXP_FLOOR + 127) << 23, t)), powers)

    return share(shifted, with_shifted)


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
    the intrinsic for other dtypes: ``sign(x) e / (e + 2)`` with ``e = expm1(2|x|)``, ``|x|``
    clamped to 9.5 (where ``e + 2`` rounds to ``e``: the result is 1); within 3 ulp,
    ``tanh(+-inf) = +-1``, ``tanh(-0) = -0``, and ``tanh(x) = x`` for subnormal ``x``.

    ``expm1(2a) = 2 ** n (expm1(2u) + 1) - 1`` with ``n = round(2a / ln 2)``,
    ``u = a - n ln(2) / 2`` and ``expm1(2u) = 2u + u**2 P(u)``, each ending in one
    multiply-add. The error of ``e`` reaches the quotient damped by ``2 / (e + 2)`` (no
    cancellation near 1), and near 0 (``n = 0``) ``e`` is ``expm1(2u)`` itself (relative
    accuracy for tiny ``x``). 24 vector instructions per vector (load and store included, one
    division) where ``1 - 2 / (exp(2|x|) + 1)`` beside a polynomial for small ``x`` (both
    computed, then selected) took 38.
    """
    if scalar_of(x.dtype) == _F16:
        return convert_to(_F16, tanh_expr(convert_to(_F32, x), let))
    if scalar_of(x.dtype) != _F32:
        return tirop.tanh(x)
    share = sharer(let)

    def with_abs(bits: PrimExpr, a: PrimExpr) -> PrimExpr:
        def from_k(ac: PrimExpr, k: PrimExpr) -> PrimExpr:
            n = k - like(_ROUND_MAGIC, x)
            half_low = n * like(_LN2_LOW / 2.0, x)
            reduced = (ac - n * like(_LN2_HIGH / 2.0, x)) - half_low
            # 2 ** n from k's low bits (0 <= n <= 28 here: no clamp needed)
            power = float_of_bits(
                to_bits(k) * like(1 << 23, k, "uint32") + like(_ONE_BITS, k, "uint32")
            )

            def quotient(s: PrimExpr, em1: PrimExpr) -> PrimExpr:
                # e / (e + 2) with e rounded once: its error is damped by 2 / (e + 2)
                e = share(s * em1 + (s - like(1.0, x)), lambda ev: ev / (ev + like(2.0, x)))
                # x's sign bit (bits - |x|'s bits) added to e's bits: e >= 0, or NaN either way
                return float_of_bits(to_bits(e) + (bits - to_bits(a)))

            # expm1(2u) = 2u + u (u P1(u)), rounded once at the end
            em1 = share(reduced, lambda u: u * (u * horner(_TANH_EM1[1:], u)) + (u + u))
            return share(power, lambda s: share(em1, lambda m: quotient(s, m)))

        # min(constant, ...) keeps a NaN (``a < b ? a : b``)
        clamped = tirop.min(like(_TANH_CLAMP, x), a)
        round_n = clamped * like(2.0 * _LOG2E, x) + like(_ROUND_MAGIC, x)
        return share(clamped, lambda ac: share(round_n, lambda k: from_k(ac, k)))

    # |v| as max(v, -v) (-0 gives +0), and the bits of v: arithmetic only, which the vectorizer
    # takes (topi's stages write tanh_expr inline)
    return share(x, lambda v: share(tirop.max(v, -v), lambda a: with_abs(to_bits(v), a)))


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
