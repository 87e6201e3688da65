"""Vector ``exp``, ``log``, ``tanh``, ``sigmoid``, ``erf`` and ``pow`` of float32: the code
generators' arithmetic forms (:mod:`pytvm.codegen.vector_math`) against numpy in float64 over a
sweep of every float32 bit pattern (subnormals, infinities and NaN included), special values as
C's ``libm``, in both code generators, for vector and scalar calls.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.tir import op as tirop
from pytvm.tir.expr import PrimExpr, const
from pytvm.topi.fast_math import sigmoid_expr
from pytvm.topi.fast_pow import pow_expr

F32 = "float32"
TARGETS = ["llvm", "c"]
LANES = 16
#: Every 4099th float32 bit pattern (1 048 320 values, all exponents and both signs).
SWEEP = np.arange(0, 1 << 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
SWEEP = SWEEP[: len(SWEEP) - len(SWEEP) % LANES]


def _build(fn: Callable[..., PrimExpr], n: int, target: str, vector: bool, arity: int = 1) -> Any:
    xs = [te.placeholder((n,), F32, f"x{i}") for i in range(arity)]
    y = te.compute((n,), lambda i: fn(*[x[i] for x in xs]), name="y")
    s = te.create_schedule(y.op)
    if vector:
        _, inner = s[y].split(y.op.axis[0], factor=LANES)
        s[y].vectorize(inner)
    return pytvm.build(s, [*xs, y], target=target, name="f")


def _run(mod: Any, *arrays: np.ndarray) -> np.ndarray:
    out = pytvm.nd.empty(arrays[0].shape, F32)
    mod["f"](*[pytvm.nd.array(a) for a in arrays], out)
    return out.numpy()


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance of ``got`` from the float64 ``want`` in units of float32's spacing at ``want``."""
    with np.errstate(all="ignore"):
        rounded = want.astype(F32)
        err = np.abs(got.astype(np.float64) - want) / np.spacing(np.abs(rounded)).astype(float)
    same = (np.isnan(got) & np.isnan(want)) | (np.isinf(rounded) & (got == rounded))
    return np.where(same, 0.0, err)


def _reference(name: str, x: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        wide = x.astype(np.float64)
        functions: dict[str, Callable[[np.ndarray], np.ndarray]] = {
            "exp": np.exp,
            "log": np.log,
            "tanh": np.tanh,
            "sigmoid": _sigmoid64,
            "erf": _ERF64,
        }
        return functions[name](wide)


def _sigmoid64(x: np.ndarray) -> np.ndarray:
    """The logistic function in float64 (exact to float32 rounding: exp's overflow gives 0)."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-x))  # type: ignore[no-any-return]


#: erf in float64, one libm call per element (the float32 results are judged against it).
_ERF64 = np.vectorize(math.erf, otypes=[np.float64])


#: Bounds measured over all float32 (ulp; erf: 4e-7 absolute, its documented bound).
BOUNDS = {"exp": 2.0, "log": 2.0, "tanh": 3.0}
INTRINSICS = {"exp": tirop.exp, "log": tirop.log, "tanh": tirop.tanh}


@pytest.mark.parametrize("vector", [True, False], ids=["vector", "scalar"])
@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_intrinsic_is_within_its_ulp_bound_over_float32(
    name: str, target: str, vector: bool
) -> None:
    mod = _build(INTRINSICS[name], len(SWEEP), target, vector)
    got = _run(mod, SWEEP)
    assert _ulps(got, _reference(name, SWEEP)).max() <= BOUNDS[name]
    if target == "c":  # arithmetic, not one library call per element
        assert f"{name}f(" not in mod.get_source()


@pytest.mark.parametrize("target", TARGETS)
def test_sigmoid_is_within_3_ulp_and_never_overflows(target: str) -> None:
    got = _run(_build(sigmoid_expr, len(SWEEP), target, True), SWEEP)
    assert _ulps(got, _reference("sigmoid", SWEEP)).max() <= 3.0
    # tir.sigmoid is lowered to 1 / (1 + exp(-x)) before code generation: 0 below -88.7
    lowered = _run(_build(tirop.sigmoid, len(SWEEP), target, True), SWEEP)
    normal = ~(SWEEP < -87.0)
    assert _ulps(lowered[normal], _reference("sigmoid", SWEEP[normal])).max() <= 3.0
    assert np.all(lowered[SWEEP < -88.8] == 0) and not np.isnan(lowered[np.isfinite(SWEEP)]).any()


@pytest.mark.parametrize("target", TARGETS)
def test_erf_vector_call_is_within_4e7(target: str) -> None:
    mod = _build(tirop.erf, len(SWEEP), target, True)
    got, want = _run(mod, SWEEP), _reference("erf", SWEEP)
    finite = ~np.isnan(want)
    assert np.abs(got[finite] - want[finite]).max() <= 4e-7 and np.isnan(got[~finite]).all()


SPECIAL = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 1e-45, -1e-45, 89.0, -104.0, 1.0], F32)


@pytest.mark.parametrize("vector", [True, False], ids=["vector", "scalar"])
@pytest.mark.parametrize("target", TARGETS)
def test_special_values_are_libm_s(target: str, vector: bool) -> None:
    x = np.resize(SPECIAL, 32)
    results = {n: _run(_build(INTRINSICS[n], 32, target, vector), x)[:10] for n in INTRINSICS}
    inf, nan = np.inf, np.nan
    expected = {
        "exp": [inf, 0, 1, 1, 1, 1, 1, inf, 0, np.e],
        "log": [inf, nan, nan, -inf, -inf, -103.27893, nan, np.log(89.0), nan, 0],
        "tanh": [1, -1, nan, 0, -0.0, 1e-45, -1e-45, 1, -1, np.tanh(1.0)],
    }
    expected["exp"][2] = nan
    for name, want in expected.items():
        np.testing.assert_allclose(results[name], np.array(want, F32), rtol=2e-7, err_msg=name)
    assert np.signbit(results["tanh"][4]) and not np.signbit(results["tanh"][3])  # tanh(-0) = -0


@pytest.mark.parametrize("target", TARGETS)
def test_exp_of_a_negation_matches_exp_of_the_negated_value(target: str) -> None:
    # exp(0 - y) folds the sign into the constants: the same roundings as exp of -y
    folded = _run(_build(lambda v: tirop.exp(const(0.0, F32) - v), len(SWEEP), target, True), SWEEP)
    plain = _run(_build(tirop.exp, len(SWEEP), target, True), -SWEEP)
    np.testing.assert_array_equal(folded, plain)


@pytest.mark.parametrize("target", TARGETS)
def test_exp_rounds_subnormal_results_once(target: str) -> None:
    x = np.linspace(-104.0, -87.0, 1 << 16).astype(F32)
    got = _run(_build(tirop.exp, len(x), target, True), x)
    want = np.exp(x.astype(np.float64))
    assert (np.abs(got - want) <= 2.0**-149).all()  # within one subnormal spacing
    assert got[0] == 0 and got[-1] == np.float32(np.exp(np.float64(-87.0)))


@pytest.mark.parametrize("target", TARGETS)
def test_tanh_saturates_and_keeps_subnormals(target: str) -> None:
    big = np.array([9.02, 9.5, 10.0, 20.0, 1e30, np.inf], F32)
    tiny = np.array([1e-45, 1e-40, 1.1754942e-38, 0.0], F32)
    x = np.resize(np.concatenate([big, -big, tiny, -tiny]), 32)
    got = _run(_build(tirop.tanh, len(x), target, True), x)[:20]
    np.testing.assert_array_equal(got[:6], 1.0)
    np.testing.assert_array_equal(got[6:12], -1.0)
    np.testing.assert_array_equal(got[12:], x[12:20])  # tanh(x) = x, signs of zeros kept
    assert np.signbit(got[12:]).tolist() == np.signbit(x[12:20]).tolist()


def _pow_cases() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(0)
    n = 1 << 16
    x = np.concatenate(
        [
            rng.uniform(0, 10, n),
            np.exp(rng.uniform(-100, 80, n)),
            -rng.uniform(0, 5, n),
            rng.uniform(0.9, 1.1, n),
        ]
    )
    y = np.concatenate(
        [
            rng.uniform(-20, 20, n),
            rng.uniform(-1.2, 1.2, n),
            np.round(rng.uniform(-30, 30, n)),
            rng.uniform(-800, 800, n),
        ]
    )
    values = np.array(
        [0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e-45, -3]
    )
    gx, gy = np.meshgrid(values, values)
    x = np.concatenate([x, np.resize(gx.ravel(), 176)]).astype(F32)
    y = np.concatenate([y, np.resize(gy.ravel(), 176)]).astype(F32)
    return x, y


@pytest.mark.parametrize("vector", [True, False], ids=["vector", "scalar"])
@pytest.mark.parametrize("target", TARGETS)
def test_pow_is_within_1_ulp_with_c99_special_cases(target: str, vector: bool) -> None:
    x, y = _pow_cases()
    got = _run(_build(tirop.pow, len(x), target, vector, arity=2), x, y)
    with np.errstate(all="ignore"):
        want = np.power(x.astype(np.float64), y.astype(np.float64))
        exact = np.power(x, y)  # float32 powf: C99's special cases, signs of zeros
    assert _ulps(got, want).max() <= 1.0
    special_cases = slice(len(x) - 176, None)
    np.testing.assert_array_equal(got[special_cases], exact[special_cases])
    assert (np.signbit(got) == np.signbit(exact))[special_cases][
        ~np.isnan(exact[special_cases])
    ].all()


@pytest.mark.parametrize("target", TARGETS)
def test_pow_of_a_constant_exponent_is_a_product_or_a_root(target: str) -> None:
    x = np.array([0.0, -0.0, 2.5, -3.0, np.inf, -np.inf, np.nan, 1e-20] * 2, F32)
    for exponent in (0.0, 1.0, 2.0, 3.0, -1.0, 0.5):
        fn = lambda v, e=exponent: pow_expr(v, const(e, F32))  # noqa: E731
        got = _run(_build(fn, len(x), target, True), x)
        with np.errstate(all="ignore"):
            want = np.power(x, np.full_like(x, exponent))  # a scalar would take numpy's sqrt
        np.testing.assert_allclose(got, want, rtol=2e-7, err_msg=str(exponent))
        assert (np.signbit(got) == np.signbit(want))[~np.isnan(want)].all(), exponent


def test_topi_activations_compile_without_library_calls() -> None:
    x = te.placeholder((4, 64), F32, "x")
    outs = [
        topi.tanh(x),
        topi.sigmoid(x),
        topi.exp(x),
        topi.log(x),
        topi.nn.gelu(x),
        topi.nn.gelu(x, "tanh"),
        topi.power(x, x),
    ]
    for out in outs:
        with pytvm.target.Target("c"):
            s = topi.generic.schedule_injective(out)
            source = pytvm.build(s, [x, out], target="c", name="f").get_source()
        for name in ("expf(", "logf(", "tanhf(", "erff(", "powf("):
            assert name not in source, (out.op.name, name)
