"""testing.assert_prim_expr_equal and testing.check_numerical_grads."""

from __future__ import annotations

import numpy as np
import pytest

from pytvm import testing, tir


def test_assert_prim_expr_equal_proves_or_raises() -> None:
    x = tir.Var("x")
    testing.assert_prim_expr_equal(x * 2 + x, x * 3)
    testing.assert_prim_expr_equal(tir.const(4), 4)
    with pytest.raises(ValueError, match="not equal"):
        testing.assert_prim_expr_equal(x + 1, x)


def test_numerical_grads_accept_right_and_reject_wrong_gradients() -> None:
    a = np.array([[1.0, -2.0], [0.5, 3.0]])
    b = np.array([2.0, 1.0])

    def f(a: np.ndarray, b: np.ndarray) -> float:
        return float(np.sum(np.sin(a) @ b))

    grad_a = np.cos(a) * b[None, :]
    grad_b = np.sin(a).sum(axis=0)
    testing.check_numerical_grads(f, [a, b], [grad_a, grad_b])
    testing.check_numerical_grads(f, {"a": a, "b": b}, {"a": grad_a, "b": grad_b}, f(a, b))
    with pytest.raises(AssertionError, match="input 1"):
        testing.check_numerical_grads(f, [a, b], [grad_a, grad_b + 1.0])
