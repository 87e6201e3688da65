"""Elementwise, broadcast and activation operators: the interpreter and the compiled kernels
agree with numpy (integer division and remainders with C's and ONNX's signs, rounding halves
to even, broadcasting both ways).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from pytvm.graph import TensorType
from pytvm.testing.graph_ops import OpCase, build_cases, interpret_case, run_compiled

RNG = np.random.default_rng(11)


def _f(*shape: int, lo: float = -2.0, hi: float = 2.0) -> np.ndarray:
    return RNG.uniform(lo, hi, shape).astype("float32")


def _i(*shape: int, lo: int = -9, hi: int = 10, dtype: str = "int32") -> np.ndarray:
    return RNG.integers(lo, hi, shape).astype(dtype)


def _nonzero(x: np.ndarray) -> np.ndarray:
    return np.where(x == 0, 3, x).astype(x.dtype)


A, B = _f(2, 3, 5), _f(3, 1)
IA, IB = _i(4, 5), _nonzero(_i(5))
P, Q = _f(2, 7, lo=0.2), _f(2, 7, lo=-1.5, hi=1.5)
BA, BB = RNG.integers(0, 2, (3, 4)).astype(bool), RNG.integers(0, 2, (4,)).astype(bool)
HALVES = np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.49, -0.51], "float32")
_erf = np.vectorize(math.erf)


def _trunc_div(a: np.ndarray, b: np.ndarray) -> Any:
    return np.trunc(a.astype(np.float64) / b).astype(a.dtype)


CASES: list[OpCase] = [
    OpCase("add", "add", [A, B], expected=np.add),
    OpCase("subtract", "subtract", [B, A], expected=np.subtract),
    OpCase("multiply", "multiply", [A, B], expected=np.multiply),
    OpCase("divide", "divide", [A, _nonzero(B)], expected=np.divide),
    OpCase("maximum", "maximum", [A, B], expected=np.maximum),
    OpCase("minimum", "minimum", [A, B], expected=np.minimum),
    OpCase("power", "power", [P, Q], expected=np.power),
    OpCase("add_int64", "add", [IA.astype("int64"), IB.astype("int64")], expected=np.add),
    OpCase("divide_int_truncates", "divide", [IA, IB], expected=_trunc_div),
    OpCase("floor_divide_int", "floor_divide", [IA, IB], expected=np.floor_divide),
    OpCase(
        "floor_divide_float",
        "floor_divide",
        [A, _nonzero(B)],
        expected=lambda a, b: np.floor(a / b),
    ),
    OpCase("mod_int_sign_of_dividend", "mod", [IA, IB], expected=np.fmod),
    OpCase("mod_float", "mod", [P, _nonzero(Q)], expected=np.fmod),
    OpCase("floor_mod_int_sign_of_divisor", "floor_mod", [IA, IB], expected=np.mod),
    OpCase("power_int", "power", [_i(6, lo=-3, hi=4), _i(6, lo=0, hi=4)], expected=np.power),
    OpCase("greater", "greater", [A, B], expected=np.greater),
    OpCase("less", "less", [A, B], expected=np.less),
    OpCase("greater_equal", "greater_equal", [IA, IB], expected=np.greater_equal),
    OpCase("less_equal", "less_equal", [IA, IB], expected=np.less_equal),
    OpCase("equal", "equal", [IA, IB], expected=np.equal),
    OpCase("not_equal", "not_equal", [IA, IB], expected=np.not_equal),
    OpCase("logical_and", "logical_and", [BA, BB], expected=np.logical_and),
    OpCase("logical_or", "logical_or", [BA, BB], expected=np.logical_or),
    OpCase("logical_xor", "logical_xor", [BA, BB], expected=np.logical_xor),
    OpCase("logical_not", "logical_not", [BA], expected=np.logical_not),
    OpCase("relu", "nn.relu", [A], expected=lambda x: np.maximum(x, 0)),
    OpCase("exp", "exp", [A], expected=np.exp),
    OpCase("log", "log", [P], expected=np.log),
    OpCase("sqrt", "sqrt", [P], expected=np.sqrt),
    OpCase("rsqrt", "rsqrt", [P], expected=lambda x: 1 / np.sqrt(x)),
    OpCase("tanh", "tanh", [A], expected=np.tanh),
    OpCase("sigmoid", "sigmoid", [A], expected=lambda x: 1 / (1 + np.exp(-x))),
    OpCase("erf", "erf", [A], expected=_erf),
    OpCase("sin", "sin", [A], expected=np.sin),
    OpCase("cos", "cos", [A], expected=np.cos),
    OpCase("tan", "tan", [Q], expected=np.tan),
    OpCase("sinh", "sinh", [A], expected=np.sinh),
    OpCase("cosh", "cosh", [A], expected=np.cosh),
    OpCase("asinh", "asinh", [A], expected=np.arcsinh),
    OpCase("acosh", "acosh", [P + 1], expected=np.arccosh),
    OpCase("atanh", "atanh", [Q / 2], expected=np.arctanh),
    OpCase("abs", "abs", [A], expected=np.abs),
    OpCase("abs_int", "abs", [IA], expected=np.abs),
    OpCase("negative", "negative", [IA], expected=np.negative),
    OpCase("sign", "sign", [np.array([-2.0, 0.0, 3.5], "float32")], expected=np.sign),
    OpCase("sign_int", "sign", [IA], expected=np.sign),
    OpCase("floor", "floor", [HALVES], expected=np.floor),
    OpCase("ceil", "ceil", [HALVES], expected=np.ceil),
    OpCase("round_half_to_even", "round", [HALVES], expected=np.round),
    OpCase("copy", "copy", [A], expected=np.copy),
    OpCase(
        "clip", "clip", [A], {"a_min": -0.5, "a_max": 1.0}, expected=lambda x: np.clip(x, -0.5, 1.0)
    ),
    OpCase(
        "clip_int", "clip", [IA], {"a_min": -2, "a_max": 3}, expected=lambda x: np.clip(x, -2, 3)
    ),
    OpCase(
        "cast_to_int_truncates",
        "cast",
        [A * 3],
        {"dtype": "int32"},
        expected=lambda x: x.astype("int32"),
    ),
    OpCase(
        "cast_to_float", "cast", [IA], {"dtype": "float32"}, expected=lambda x: x.astype("float32")
    ),
    OpCase("cast_to_bool", "cast", [IA], {"dtype": "bool"}, expected=lambda x: x != 0),
    OpCase(
        "leaky_relu",
        "nn.leaky_relu",
        [A],
        {"alpha": 0.1},
        expected=lambda x: np.where(x > 0, x, 0.1 * x),
    ),
    OpCase(
        "prelu",
        "nn.prelu",
        [A, _f(3)],
        {"axis": 1},
        expected=lambda x, s: np.where(x > 0, x, x * s[:, None]),
    ),
    OpCase("gelu", "nn.gelu", [A], expected=lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2)))),
    OpCase(
        "gelu_tanh",
        "nn.gelu",
        [A],
        {"approximate": "tanh"},
        expected=lambda x: 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x**3))),
    ),
]
IDS = [c.name for c in CASES]


def _check(got: Any, case: OpCase) -> None:
    want = np.asarray(case.want())
    assert got.shape == want.shape, (got.shape, want.shape)
    if want.dtype == bool or np.issubdtype(want.dtype, np.integer):
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got, want, rtol=case.rtol, atol=case.atol)


@pytest.fixture(scope="module")
def built() -> tuple[Any, dict[str, BaseException]]:
    return build_cases(CASES)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_interpreter_matches_numpy(case: OpCase) -> None:
    got = interpret_case(case)
    _check(got, case)
    ty = case.call()[1].checked_type
    assert isinstance(ty, TensorType) and str(got.dtype) == ty.dtype  # as the relation says


@pytest.mark.needs_cc
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_compiled_kernel_matches_numpy(case: OpCase, built: tuple[Any, Any]) -> None:
    mod, errors = built
    if case.name in errors:
        raise errors[case.name]
    _check(run_compiled(mod, case), case)
