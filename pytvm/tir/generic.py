"""TVM's ``tir.generic``: the arithmetic behind Python's operators, which a higher layer may extend.

Each function combines two operands of the loop IR (numbers, expressions, axes) into one
expression. A layer whose values are not expressions rebinds these module attributes to
functions that handle its own values and defer to the previous binding otherwise, as TVM's
operator library does for tensors (``pytvm.topi.generic_op_impl`` makes ``A + 1`` of a
``te.Tensor`` an elementwise compute). ``__op_priority__`` records the highest priority bound,
so a layer binds once.

Examples
--------
>>> from pytvm import tir
>>> from pytvm.tir import generic
>>> x = tir.Var("x")
>>> print(generic.add(x, 1), generic.cast(x, "float32").dtype)
(x + 1) float32
"""

from __future__ import annotations

from typing import Any

from .expr_operators import Add, Div, FloorDiv, Mul, Sub, binary, convert

__all__ = ["add", "cast", "divide", "floordiv", "multiply", "subtract"]

#: The priority of the operators bound now (0: the loop IR's own).
__op_priority__ = 0


def add(lhs: Any, rhs: Any, span: Any = None) -> Any:
    """``lhs + rhs``."""
    return binary(Add, lhs, rhs)


def subtract(lhs: Any, rhs: Any, span: Any = None) -> Any:
    """``lhs - rhs``."""
    return binary(Sub, lhs, rhs)


def multiply(lhs: Any, rhs: Any, span: Any = None) -> Any:
    """``lhs * rhs``."""
    return binary(Mul, lhs, rhs)


def divide(lhs: Any, rhs: Any, span: Any = None) -> Any:
    """``lhs / rhs`` (true division for floats, C's truncating division for integers)."""
    return binary(Div, lhs, rhs)


def floordiv(lhs: Any, rhs: Any, span: Any = None) -> Any:
    """``lhs // rhs`` (rounding toward negative infinity)."""
    return binary(FloorDiv, lhs, rhs)


def cast(src: Any, dtype: str, span: Any = None) -> Any:
    """``src`` converted to ``dtype``."""
    return convert(src).astype(dtype)
