"""Elementwise, broadcast and activation operators against numpy (reference evaluator)."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.te_eval import evaluate

RNG = np.random.default_rng(0)


def _rand(shape: tuple[int, ...], lo: float = -2.0, hi: float = 2.0) -> np.ndarray[Any, Any]:
    return RNG.uniform(lo, hi, size=shape).astype("float32")


@pytest.mark.parametrize(
    ("name", "ref"),
    [
        ("add", np.add),
        ("subtract", np.subtract),
        ("multiply", np.multiply),
        ("divide", np.divide),
        ("maximum", np.maximum),
        ("minimum", np.minimum),
    ],
)
@pytest.mark.parametrize(
    ("sa", "sb"),
    [((2, 3, 4), (2, 3, 4)), ((2, 3, 4), (4,)), ((3, 1), (2, 1, 5)), ((1,), (3, 2))],
)
def test_broadcast_binary_matches_numpy(
    name: str, ref: Callable[..., Any], sa: tuple[int, ...], sb: tuple[int, ...]
) -> None:
    A = te.placeholder(sa, name="A")
    B = te.placeholder(sb, name="B")
    C = getattr(topi, name)(A, B)
    a, b = _rand(sa), _rand(sb, 0.5, 2.0)
    (got,) = evaluate(C, {A: a, B: b})
    np.testing.assert_allclose(got, ref(a, b), rtol=1e-6)


def test_power_and_scalar_operands() -> None:
    A = te.placeholder((3, 4), name="A")
    a = _rand((3, 4), 0.5, 2.0)
    (p,) = evaluate(topi.power(A, 2.5), {A: a})
    np.testing.assert_allclose(p, a**2.5, rtol=1e-5)
    (s,) = evaluate(topi.subtract(1.0, A), {A: a})
    np.testing.assert_allclose(s, 1.0 - a)


def test_integer_divide_rounds_toward_zero() -> None:
    A = te.placeholder((4,), "int32", name="A")
    B = te.placeholder((4,), "int32", name="B")
    a = np.array([7, -7, 7, -7], "int32")
    b = np.array([2, 2, -2, -2], "int32")
    (got,) = evaluate(topi.divide(A, B), {A: a, B: b})
    assert got.tolist() == [3, -3, -3, 3]
    (fd,) = evaluate(topi.floor_divide(A, B), {A: a, B: b})
    assert fd.tolist() == (a // b).tolist()


def test_broadcast_mismatch_names_operator_and_shapes() -> None:
    A = te.placeholder((2, 3), name="A")
    B = te.placeholder((4,), name="B")
    with pytest.raises(TVMValueError, match=r"add: bad shapes.*dimension 1: 3 vs 4"):
        topi.add(A, B)


_UNARY = [
    ("exp", np.exp, (-2, 2)),
    ("log", np.log, (0.1, 3)),
    ("sqrt", np.sqrt, (0.1, 3)),
    ("rsqrt", lambda x: 1 / np.sqrt(x), (0.1, 3)),
    ("tanh", np.tanh, (-3, 3)),
    ("sigmoid", lambda x: 1 / (1 + np.exp(-x)), (-3, 3)),
    ("erf", np.vectorize(math.erf), (-2, 2)),
    ("abs", np.abs, (-2, 2)),
    ("negative", np.negative, (-2, 2)),
    ("floor", np.floor, (-3, 3)),
    ("ceil", np.ceil, (-3, 3)),
    ("round", np.round, (-3, 3)),
]


@pytest.mark.parametrize(("name", "ref", "rng"), _UNARY, ids=[u[0] for u in _UNARY])
def test_unary_math_matches_numpy(
    name: str, ref: Callable[..., Any], rng: tuple[float, float]
) -> None:
    A = te.placeholder((3, 5), name="A")
    a = _rand((3, 5), *rng)
    a[0, :3] = [0.5, 1.5, -2.5]  # halves: round goes to even, as numpy
    a = np.clip(a, rng[0], rng[1]).astype("float32")
    (got,) = evaluate(getattr(topi, name)(A), {A: a})
    np.testing.assert_allclose(got, ref(a).astype("float32"), rtol=1e-5, atol=1e-6)


def test_float_math_on_integers_is_the_intrinsic_call_llvm_refuses() -> None:
    A = te.placeholder((3,), "int32", name="A")
    B = topi.exp(A)
    body: Any = B.op.body[0]
    assert (body.op.name, body.dtype) == ("tir.exp", "int32")
    with pytest.raises(TVMValueError, match=r"no tir\.exp for int32"):
        pytvm.build(te.create_schedule(B.op), [A, B], "llvm")


def test_cast_truncates_toward_zero() -> None:
    A = te.placeholder((4,), name="A")
    a = np.array([1.7, -1.7, 2.5, -0.2], "float32")
    (got,) = evaluate(topi.cast(A, "int32"), {A: a})
    assert got.dtype == np.int32 and got.tolist() == [1, -1, 2, 0]


_ACT = [
    ("relu", lambda x: np.maximum(x, 0), {}),
    ("leaky_relu", lambda x: np.where(x > 0, x, 0.1 * x), {"alpha": 0.1}),
    ("clip", lambda x: np.clip(x, -0.5, 1.0), {"a_min": -0.5, "a_max": 1.0}),
    ("gelu", lambda x: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2))), {}),
    (
        "gelu",
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        {"approximate": "tanh"},
    ),
    ("hard_sigmoid", lambda x: np.clip(0.2 * x + 0.5, 0, 1), {}),
    ("hard_swish", lambda x: x * np.clip(x / 6 + 0.5, 0, 1), {}),
]


@pytest.mark.parametrize(("name", "ref", "kw"), _ACT, ids=[f"{a[0]}{a[2]}" for a in _ACT])
def test_activations_match_numpy(name: str, ref: Callable[..., Any], kw: dict[str, Any]) -> None:
    A = te.placeholder((4, 7), name="A")
    a = _rand((4, 7), -5, 5)
    (got,) = evaluate(getattr(topi.nn, name)(A, **kw), {A: a})
    np.testing.assert_allclose(got, ref(a), rtol=1e-5, atol=1e-6)


def test_bad_attributes_name_operator_and_value() -> None:
    A = te.placeholder((4,), name="A")
    with pytest.raises(TVMValueError, match=r"gelu: bad approximate 'fast'"):
        topi.nn.gelu(A, "fast")
    with pytest.raises(TVMValueError, match=r"clip: bad a_min/a_max \(2.0, 1.0\)"):
        topi.clip(A, 2.0, 1.0)


def test_prelu_uses_one_slope_per_channel() -> None:
    X = te.placeholder((2, 3, 4), name="X")
    S = te.placeholder((3,), name="S")
    x, sl = _rand((2, 3, 4), -2, 2), _rand((3,), 0, 1)
    (got,) = evaluate(topi.nn.prelu(X, S, 1), {X: x, S: sl})
    np.testing.assert_allclose(got, np.where(x > 0, x, x * sl[:, None]), rtol=1e-6)


def test_comparisons_modulo_and_logic() -> None:
    A = te.placeholder((2, 4), name="A")
    B = te.placeholder((4,), name="B")
    a, b = _rand((2, 4), -3, 3), _rand((4,), 0.5, 2)
    got = evaluate(
        [topi.greater(A, B), topi.less_equal(A, B), topi.floor_mod(A, B), topi.mod(A, B)],
        {A: a, B: b},
    )
    np.testing.assert_array_equal(got[0], a > b)
    np.testing.assert_array_equal(got[1], a <= b)
    np.testing.assert_allclose(got[2], np.mod(a, b), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(got[3], np.fmod(a, b), rtol=1e-5, atol=1e-6)
    L = te.placeholder((4,), "bool", name="L")
    lv = np.array([True, False, True, False])
    (both,) = evaluate(topi.logical_and(L, topi.greater(B, 1.0)), {L: lv, B: b})
    np.testing.assert_array_equal(both, lv & (b > 1.0))


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "int16"])
def test_isnan_isinf_isfinite_match_numpy(dtype: str) -> None:
    values = np.random.uniform(0, 1, (8, 8)).astype(dtype)
    if dtype.startswith("float"):
        values.ravel()[::3] = np.nan
        values.ravel()[1::4] = np.inf
        values.ravel()[2::5] = -np.inf
    for fn, ref in ((topi.isnan, np.isnan), (topi.isinf, np.isinf), (topi.isfinite, np.isfinite)):
        x = te.placeholder(values.shape, dtype, "x")
        y = fn(x)
        f = pytvm.build(te.create_schedule(y.op), [x, y], "llvm")
        out = pytvm.nd.empty(values.shape, "bool")
        f(pytvm.nd.array(values), out)
        np.testing.assert_array_equal(out.numpy(), ref(values))


def test_trunc_rounds_toward_zero() -> None:
    values = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.7], "float32")
    x = te.placeholder(values.shape, "float32", "x")
    y = topi.trunc(x)
    f = pytvm.build(te.create_schedule(y.op), [x, y], "llvm")
    out = pytvm.nd.empty(values.shape, "float32")
    f(pytvm.nd.array(values), out)
    np.testing.assert_array_equal(out.numpy(), np.trunc(values))


def test_clip_casts_constant_bounds_of_another_type() -> None:
    from pytvm import tir

    values = np.array([-300, -5, 0, 200], "int16")
    x = te.placeholder(values.shape, "int16", "x")
    y = topi.clip(x, tir.IntImm("int32", -127), tir.IntImm("int32", 127))
    f = pytvm.build(te.create_schedule(y.op), [x, y], "llvm")
    out = pytvm.nd.empty(values.shape, "int16")
    f(pytvm.nd.array(values), out)
    np.testing.assert_array_equal(out.numpy(), np.clip(values, -127, 127))
