"""Bitwise operators on integers with numpy's broadcasting: ``bitwise_and``, ``bitwise_or``,
``bitwise_xor``, ``bitwise_not``, ``left_shift`` and ``right_shift`` (TVM's ``topi`` names).

Booleans are integers of one bit here, as in numpy: ``and``/``or``/``xor``/``not`` of booleans
are the logical operators. A right shift of a signed integer is arithmetic (C's and numpy's).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.call_builtin import call_intrin
from ..tir.expr import And, Not, Or, PrimExpr, binary, match_types
from . import tag
from ._shape import op_error
from .broadcast import Operand, _broadcast_op, not_equal

__all__ = [
    "bitwise_and",
    "bitwise_not",
    "bitwise_or",
    "bitwise_xor",
    "left_shift",
    "right_shift",
]


def _integer(op: str, dtype: str, bool_ok: bool = True) -> None:
    if dtype.startswith(("int", "uint")) or (bool_ok and dtype == "bool"):
        return
    raise op_error(op, "dtype", dtype, "an integer type" + (" or bool" if bool_ok else ""))


def _intrin(op: str, name: str, boolean: Any = None) -> Callable[[PrimExpr, PrimExpr], PrimExpr]:
    def fn(a: PrimExpr, b: PrimExpr) -> PrimExpr:
        a, b = match_types(a, b)
        _integer(op, a.dtype, boolean is not None)
        if a.dtype == "bool":
            return boolean(a, b)  # type: ignore[no-any-return]
        return call_intrin(a.dtype, name, a, b)

    return fn


def bitwise_and(lhs: Operand, rhs: Operand) -> Any:
    """``lhs & rhs`` elementwise, with broadcasting."""
    return _broadcast_op(
        "bitwise_and",
        _intrin("bitwise_and", "tir.bitwise_and", lambda a, b: binary(And, a, b)),
        lhs,
        rhs,
    )


def bitwise_or(lhs: Operand, rhs: Operand) -> Any:
    """``lhs | rhs`` elementwise, with broadcasting."""
    return _broadcast_op(
        "bitwise_or",
        _intrin("bitwise_or", "tir.bitwise_or", lambda a, b: binary(Or, a, b)),
        lhs,
        rhs,
    )


def bitwise_xor(lhs: Operand, rhs: Operand) -> Any:
    """``lhs ^ rhs`` elementwise, with broadcasting."""
    if isinstance(lhs, Tensor) and isinstance(rhs, Tensor) and lhs.dtype == rhs.dtype == "bool":
        return not_equal(lhs, rhs)
    return _broadcast_op("bitwise_xor", _intrin("bitwise_xor", "tir.bitwise_xor"), lhs, rhs)


def bitwise_not(data: Tensor) -> Tensor:
    """``~data`` elementwise (logical negation of booleans).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((4,), "uint8", "x")
    >>> topi.bitwise_not(x).dtype
    'uint8'
    """
    _integer("bitwise_not", data.dtype)

    def body(*i: Any) -> PrimExpr:
        v = data(*i)
        return Not(v) if data.dtype == "bool" else call_intrin(data.dtype, "tir.bitwise_not", v)

    return compute(data.shape, body, name="T_bitwise_not", tag=tag.ELEMWISE)


def left_shift(lhs: Operand, rhs: Operand) -> Any:
    """``lhs << rhs`` elementwise, with broadcasting (integers)."""
    return _broadcast_op("left_shift", _intrin("left_shift", "tir.shift_left"), lhs, rhs)


def right_shift(lhs: Operand, rhs: Operand) -> Any:
    """``lhs >> rhs`` elementwise, with broadcasting (integers; arithmetic for signed ones)."""
    return _broadcast_op("right_shift", _intrin("right_shift", "tir.shift_right"), lhs, rhs)
