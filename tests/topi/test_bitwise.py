"""topi.bitwise_*: compiled for llvm and C, against numpy (broadcasting, booleans, shifts)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


def _run(target: str, fn: Callable[..., Any], *arrays: np.ndarray) -> np.ndarray:
    holders = [te.placeholder(a.shape, str(a.dtype), f"x{i}") for i, a in enumerate(arrays)]
    out = fn(*holders)
    f = tvm.build(te.create_schedule(out.op), [*holders, out], target)
    res = tvm.nd.empty([int(d) for d in out.shape], out.dtype)
    f(*[tvm.nd.array(a) for a in arrays], res)
    return res.numpy()


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("dtype", ["int8", "uint16", "int64"])
def test_bitwise_binary_ops_broadcast(dtype: str, target: str) -> None:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(0)
    a = rng.integers(info.min, info.max, (3, 4), dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, (4,), dtype=dtype, endpoint=True)
    for fn, ref in [
        (topi.bitwise_and, np.bitwise_and),
        (topi.bitwise_or, np.bitwise_or),
        (topi.bitwise_xor, np.bitwise_xor),
    ]:
        np.testing.assert_array_equal(_run(target, fn, a, b), ref(a, b))
    np.testing.assert_array_equal(_run(target, topi.bitwise_not, a), np.invert(a))


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_shifts_are_arithmetic_for_signed(target: str) -> None:
    a = np.array([-64, -3, 5, 100], dtype="int32")
    s = np.array([1, 2, 3, 4], dtype="int32")
    np.testing.assert_array_equal(_run(target, topi.right_shift, a, s), a >> s)
    np.testing.assert_array_equal(_run(target, topi.left_shift, a, s), a << s)


def test_booleans_are_logical() -> None:
    a = np.array([True, True, False, False])
    b = np.array([True, False, True, False])
    np.testing.assert_array_equal(_run("llvm", topi.bitwise_and, a, b), a & b)
    np.testing.assert_array_equal(_run("llvm", topi.bitwise_xor, a, b), a ^ b)
    np.testing.assert_array_equal(_run("llvm", topi.bitwise_not, a), ~a)


def test_floats_are_refused() -> None:
    x = te.placeholder((2,), "float32", "x")
    with pytest.raises(ValueError, match="integer"):
        topi.bitwise_and(x, x)
