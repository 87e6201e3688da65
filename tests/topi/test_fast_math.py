"""Vectorizable ``exp`` and ``erf`` (``topi.fast_exp``/``fast_erf``; ``topi.erf`` uses the
latter for float32): accuracy against the math library over the float range, special values,
and kernels that stay vector code (no per-lane library calls).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

import pytvm
from pytvm import te, topi
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target

F32 = "float32"


def _run(fn: object, values: np.ndarray, target: str = "llvm") -> tuple[np.ndarray, str]:
    with Target(target):
        x = te.placeholder(values.shape, F32, "x")
        y = fn(x)  # type: ignore[operator]
        s = topi.generic.schedule_injective(y)
        mod = pytvm.build(s, [x, y], target=target, name="f")
    out = pytvm.nd.empty(values.shape, F32)
    mod["f"](pytvm.nd.array(values), out)
    return out.numpy(), str(pytvm.lower(s, [x, y]))


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    spacing = np.spacing(np.abs(want).astype(F32)).astype(np.float64)
    return np.abs(got.astype(np.float64) - want) / spacing  # type: ignore[no-any-return]


TARGETS = ["llvm", "c"]


@pytest.mark.parametrize("target", TARGETS)
def test_fast_exp_is_within_two_ulps_over_the_normal_range(target: str) -> None:
    xs = np.concatenate([np.linspace(-87.3, 88.72, 400_001), np.linspace(-1e-3, 1e-3, 1001)])
    got, text = _run(topi.fast_exp, xs.astype(F32), target)
    want = np.exp(xs.astype(F32).astype(np.float64))
    assert _ulps(got, want).max() <= 2.0
    assert "exp(" not in text  # arithmetic only: no per-lane library call


@pytest.mark.parametrize("target", TARGETS)
def test_fast_exp_special_values(target: str) -> None:
    xs = np.array([np.inf, -np.inf, np.nan, 0.0, -0.0, 89.0, -88.0, -1000.0], F32)
    got, _ = _run(topi.fast_exp, np.tile(xs, 2), target)
    subnormal = np.exp(np.float32(-88.0))  # exp(-88) is subnormal, as libm's
    want = np.array([np.inf, 0, np.nan, 1, 1, np.inf, subnormal, 0], F32)
    np.testing.assert_array_equal(got[:8], want)


@pytest.mark.parametrize("target", TARGETS)
def test_erf_is_within_4e7_and_saturates(target: str) -> None:
    xs = np.concatenate([np.linspace(-6, 6, 200_001), [np.inf, -np.inf, 1e-30, -1e-30]])
    xs = xs.astype(F32)
    got, text = _run(topi.erf, xs, target)
    want = np.array([math.erf(float(v)) for v in xs])
    np.testing.assert_allclose(got, want, rtol=0, atol=4e-7)
    assert got[-4] == 1 and got[-3] == -1
    np.testing.assert_allclose(got[-2:], want[-2:], rtol=1e-6)  # tiny inputs: relative accuracy
    assert "erf(" not in text


def test_fast_erf_keeps_nan_and_refuses_integers() -> None:
    got, _ = _run(topi.fast_erf, np.array([np.nan, 0.5] * 8, F32))
    assert np.isnan(got[0]) and abs(got[1] - math.erf(0.5)) < 4e-7
    with pytest.raises(TVMValueError, match="float"):
        topi.fast_erf(te.placeholder((4,), "int32", "i"))


def _run_dtype(fn: object, values: np.ndarray) -> np.ndarray:
    x = te.placeholder(values.shape, str(values.dtype), "x")
    y = fn(x)  # type: ignore[operator]
    mod = pytvm.build(te.create_schedule(y.op), [x, y], target="llvm", name="f")
    out = pytvm.nd.empty(values.shape, y.dtype)
    mod["f"](pytvm.nd.array(values), out)
    return out.numpy()


def test_fast_erf_float16_is_computed_in_float32() -> None:
    values = np.arange(-10, 10, 0.01).astype("float16")
    got = _run_dtype(topi.fast_erf, values).astype("float64")
    want = np.array([math.erf(v) for v in values.astype("float64")])
    assert np.abs(got - want).max() < 1e-3


def test_fast_tanh_is_within_2e7() -> None:
    values = np.concatenate([np.arange(-10, 10, 0.01), [0.0, 1e-6, -1e-6]]).astype(F32)
    got = _run_dtype(topi.fast_tanh, values)
    assert np.abs(got - np.tanh(values.astype("float64"))).max() < 2e-7
    assert np.isnan(_run_dtype(topi.fast_tanh, np.array([np.nan], F32))).all()


@pytest.mark.parametrize("fn", [topi.fast_exp, topi.fast_tanh, topi.fast_erf])
def test_inline_forms_pass_the_vectorizer(fn: object) -> None:
    # the inline expressions use arithmetic, selects and bit views only: the stage's
    # vectorized loop becomes vector statements, not a serial loop of scalars
    with Target("llvm"):
        x = te.placeholder((4, 64), F32, "x")
        y = fn(x)  # type: ignore[operator]
        text = str(pytvm.lower(topi.generic.schedule_injective(y), [x, y]))
    assert re.search(rf"{y.op.name}\w*\[ramp\(", text), text
