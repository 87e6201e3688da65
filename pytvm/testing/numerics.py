"""TVM's ``tvm.testing`` checks of values: symbolic equality of expressions and gradients.

Examples
--------
>>> import numpy as np
>>> from pytvm import tir
>>> from pytvm.testing import assert_prim_expr_equal, check_numerical_grads
>>> x = tir.Var("x")
>>> assert_prim_expr_equal(x * 2 + x, x * 3)
>>> check_numerical_grads(lambda a: float((a * a).sum()), [np.array([1.0, 2.0])],
...                       [np.array([2.0, 4.0])])
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np

from ..ffi.errors import TVMValueError
from ..tir.arith import Analyzer
from ..tir.expr import PrimExpr

__all__ = ["assert_prim_expr_equal", "check_numerical_grads"]

#: The order of the 2-point central difference (the 4-point stencil has order 4).
_TWO_POINT = 2


def assert_prim_expr_equal(lhs: PrimExpr | int, rhs: PrimExpr | int) -> None:
    """Raise ``ValueError`` unless the analyzer proves ``lhs == rhs`` for all variable values."""
    if not Analyzer().can_prove_equal(lhs, rhs):
        raise TVMValueError(f"{lhs} and {rhs} are not equal")


def _as_kwargs(
    function: Callable[..., Any], values: Sequence[Any] | Mapping[str, Any]
) -> tuple[Callable[..., float], dict[str, np.ndarray]]:
    """The function as one of keyword arguments, and its point (positional inputs get names
    "0", "1", ...).
    """
    if isinstance(values, Mapping):
        point = {k: np.asarray(v, dtype="float64") for k, v in values.items()}
        return (lambda **kw: float(function(**kw))), point
    point = {str(i): np.asarray(v, dtype="float64") for i, v in enumerate(values)}

    def positional(**kw: Any) -> float:
        return float(function(*(kw[str(i)] for i in range(len(kw)))))

    return positional, point


def _shifted(
    func: Callable[..., float], point: dict[str, np.ndarray], name: str, index: Any, step: float
) -> float:
    moved = dict(point)
    arr = point[name].copy()
    arr[index] += step
    moved[name] = arr
    return func(**moved)


def _numerical_grad(
    func: Callable[..., float], point: dict[str, np.ndarray], name: str, delta: float, order: int
) -> np.ndarray:
    """Central finite differences: 2 points (order 2) or the 4-point stencil (order 4)."""
    grad = np.zeros_like(point[name])
    for index in np.ndindex(*point[name].shape):

        def f(step: float, index: Any = index) -> float:
            return _shifted(func, point, name, index, step)

        if order == _TWO_POINT:
            grad[index] = (f(delta) - f(-delta)) / (2 * delta)
        else:
            grad[index] = (-f(2 * delta) + 8 * f(delta) - 8 * f(-delta) + f(-2 * delta)) / (
                12 * delta
            )
    return grad


def check_numerical_grads(
    function: Callable[..., Any],
    input_values: Sequence[Any] | Mapping[str, Any],
    grad_values: Sequence[Any] | Mapping[str, Any],
    function_value: float | None = None,
    delta: float = 1e-3,
    atol: float = 1e-2,
    rtol: float = 0.1,
) -> None:
    """Check ``grad_values`` against finite-difference gradients of ``function`` at
    ``input_values`` (TVM's ``tvm.testing.check_numerical_grads``).

    ``function`` returns a scalar and takes the inputs positionally (lists) or by name
    (dicts). For each input the error ``|numerical - given|`` (Euclidean norm) must be at most
    ``atol * sqrt(size) + rtol * |numerical|``; a 2-point central difference is tried first and
    the 4-point stencil when it misses.

    Raises
    ------
    AssertionError
        When a gradient differs, naming the input and the worst element.
    ValueError
        When the inputs and gradients do not match in names or shapes, or ``function_value``
        is not the function's value at the point.
    """
    func, point = _as_kwargs(function, input_values)
    grads = (
        {k: np.asarray(v, dtype="float64") for k, v in grad_values.items()}
        if isinstance(grad_values, Mapping)
        else {str(i): np.asarray(v, dtype="float64") for i, v in enumerate(grad_values)}
    )
    if set(grads) != set(point):
        raise TVMValueError(
            f"check_numerical_grads: gradients for {sorted(grads)}, inputs {sorted(point)}"
        )
    if function_value is not None:
        actual = func(**point)
        if not np.isclose(actual, function_value, rtol=1e-5, atol=1e-6):
            raise TVMValueError(
                f"check_numerical_grads: function_value {function_value} is not the function's "
                f"value {actual} at the inputs"
            )
    for name, given in grads.items():
        if given.shape != point[name].shape:
            raise TVMValueError(
                f"check_numerical_grads: gradient of {name} has shape {given.shape}, the input "
                f"{point[name].shape}"
            )
        tolerance = 0.0
        dist = 0.0
        numerical = given
        for order in (2, 4):
            numerical = _numerical_grad(func, point, name, delta, order)
            dist = float(np.sqrt(np.sum((numerical - given) ** 2)))
            tolerance = atol * np.sqrt(max(given.size, 1)) + rtol * float(
                np.sqrt(np.sum(numerical**2))
            )
            if dist <= tolerance:
                break
        else:
            worst = np.unravel_index(int(np.argmax(np.abs(numerical - given))), given.shape)
            raise AssertionError(
                f"gradient of input {name} differs from the numerical one: distance {dist:.6g} "
                f"> tolerance {tolerance:.6g}; worst at index {tuple(int(i) for i in worst)}: "
                f"given {given[worst]:.6g}, numerical {numerical[worst]:.6g}"
            )
