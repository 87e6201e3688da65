"""Broadcast arithmetic with numpy's rules: ``add``, ``multiply``, ``maximum``, ``broadcast_to``...

Operands are tensors or Python numbers; shapes align from the right and a dimension of 1 (or
a missing one) stretches to the other side's extent. Two numbers give an expression.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir import op as tirop
from ..tir.expr import (
    Div,
    ExprLike,
    PrimExpr,
    Select,
    Var,
    binary,
    const,
    convert,
    match_types,
)
from ..tir.expr import is_float as _is_float
from . import tag
from ._shape import const_int, op_error

__all__ = [
    "add",
    "broadcast_shape",
    "broadcast_to",
    "divide",
    "equal",
    "floor_divide",
    "floor_mod",
    "greater",
    "greater_equal",
    "less",
    "less_equal",
    "logical_and",
    "logical_or",
    "maximum",
    "minimum",
    "mod",
    "multiply",
    "not_equal",
    "power",
    "subtract",
]

Operand = Tensor | ExprLike


def broadcast_shape(op: str, a: Sequence[PrimExpr], b: Sequence[PrimExpr]) -> list[PrimExpr]:
    """The numpy broadcast of shapes ``a`` and ``b``; raises naming ``op`` on a mismatch."""
    n = max(len(a), len(b))
    pa = [const(1)] * (n - len(a)) + list(a)
    pb = [const(1)] * (n - len(b)) + list(b)
    out = []
    for k, (x, y) in enumerate(zip(pa, pb, strict=True)):
        cx, cy = const_int(x), const_int(y)
        if cx == 1:
            out.append(y)
        elif cy == 1 or x is y or (cx is not None and cx == cy):
            out.append(x)
        elif cx is None or cy is None:
            out.append(y if cx is None and cy is not None else x)
        else:
            raise op_error(
                op,
                "shapes",
                ([str(s) for s in a], [str(s) for s in b]),
                f"broadcastable shapes (dimension {k}: {cx} vs {cy})",
            )
    return out


def _index(t: Tensor, out_shape: Sequence[PrimExpr], idx: Sequence[Var]) -> list[PrimExpr]:
    """Indices into ``t`` for output point ``idx`` (size-1 dims read index 0)."""
    off = len(out_shape) - t.ndim
    res: list[PrimExpr] = []
    for k, dim in enumerate(t.shape):
        cd, co = const_int(dim), const_int(out_shape[off + k])
        res.append(const(0, idx[off + k].dtype) if cd == 1 and co != 1 else idx[off + k])
    return res


def _broadcast_op(
    name: str, fn: Callable[[PrimExpr, PrimExpr], PrimExpr], lhs: Operand, rhs: Operand
) -> Any:
    lt, rt = isinstance(lhs, Tensor), isinstance(rhs, Tensor)
    if not lt and not rt:
        return fn(convert(lhs), convert(rhs))  # type: ignore[arg-type]
    ls = list(lhs.shape) if isinstance(lhs, Tensor) else []
    rs = list(rhs.shape) if isinstance(rhs, Tensor) else []
    shape = broadcast_shape(name, ls, rs)

    def body(*idx: Var) -> PrimExpr:
        a = lhs(*_index(lhs, shape, idx)) if isinstance(lhs, Tensor) else lhs
        b = rhs(*_index(rhs, shape, idx)) if isinstance(rhs, Tensor) else rhs
        if not isinstance(a, PrimExpr):
            a = _scalar_like(a, b)
        if not isinstance(b, PrimExpr):
            b = _scalar_like(b, a)
        return fn(a, b)

    kind = tag.ELEMWISE if (lt and rt and _same(ls, rs)) or not (lt and rt) else tag.BROADCAST
    return compute(shape, body, name=f"T_{name}", tag=kind)


def _same(a: Sequence[PrimExpr], b: Sequence[PrimExpr]) -> bool:
    return len(a) == len(b) and all(
        x is y or (const_int(x) is not None and const_int(x) == const_int(y))
        for x, y in zip(a, b, strict=True)
    )


def _scalar_like(value: Any, other: Any) -> PrimExpr:
    """A Python number as a constant of the tensor operand's type."""
    dtype = convert(other).dtype
    if isinstance(value, float) and not _is_float(dtype):
        return const(value)
    return const(value, dtype)


def add(lhs: Operand, rhs: Operand) -> Any:
    """``lhs + rhs`` with broadcasting."""
    return _broadcast_op("add", lambda a, b: a + b, lhs, rhs)


def subtract(lhs: Operand, rhs: Operand) -> Any:
    """``lhs - rhs`` with broadcasting."""
    return _broadcast_op("subtract", lambda a, b: a - b, lhs, rhs)


def multiply(lhs: Operand, rhs: Operand) -> Any:
    """``lhs * rhs`` with broadcasting."""
    return _broadcast_op("multiply", lambda a, b: a * b, lhs, rhs)


def divide(lhs: Operand, rhs: Operand) -> Any:
    """``lhs / rhs`` with broadcasting (integers round toward zero, as C and TVM do)."""
    return _broadcast_op("divide", lambda a, b: binary(Div, a, b), lhs, rhs)


def floor_divide(lhs: Operand, rhs: Operand) -> Any:
    """``floor(lhs / rhs)`` with broadcasting."""

    def fn(a: PrimExpr, b: PrimExpr) -> PrimExpr:
        if _is_float(a.dtype) or _is_float(b.dtype):
            return tirop.floor(a / b)
        return tirop.floordiv(a, b)

    return _broadcast_op("floor_divide", fn, lhs, rhs)


def mod(lhs: Operand, rhs: Operand) -> Any:
    """Remainder with the sign of ``lhs`` (C's ``%``, ``fmod`` for floats)."""

    def fn(a: PrimExpr, b: PrimExpr) -> PrimExpr:
        if _is_float(a.dtype) or _is_float(b.dtype):
            return tirop.fmod(a, b)
        return tirop.truncmod(a, b)

    return _broadcast_op("mod", fn, lhs, rhs)


def floor_mod(lhs: Operand, rhs: Operand) -> Any:
    """Remainder with the sign of ``rhs`` (Python's ``%``; for floats numpy's ``mod``, exact
    and right for infinite divisors: ``fmod`` moved into ``rhs``'s sign).
    """

    def fn(a: PrimExpr, b: PrimExpr) -> PrimExpr:
        if _is_float(a.dtype) or _is_float(b.dtype):
            a, b = match_types(a, b)
            r = tirop.fmod(a, b)
            zero = const(0, r.dtype)
            flip = (r != zero) & ((r < zero) != (b < zero))
            return Select(flip, r + b, r)
        return tirop.floormod(a, b)

    return _broadcast_op("floor_mod", fn, lhs, rhs)


def maximum(lhs: Operand, rhs: Operand) -> Any:
    """The larger element of each pair, with broadcasting."""
    return _broadcast_op("maximum", tirop.max, lhs, rhs)


def minimum(lhs: Operand, rhs: Operand) -> Any:
    """The smaller element of each pair, with broadcasting."""
    return _broadcast_op("minimum", tirop.min, lhs, rhs)


def power(lhs: Operand, rhs: Operand) -> Any:
    """``lhs ** rhs`` with broadcasting (floating-point operands)."""
    return _broadcast_op("power", tirop.pow, lhs, rhs)


def greater(lhs: Operand, rhs: Operand) -> Any:
    """``lhs > rhs`` (bool) with broadcasting."""
    return _broadcast_op("greater", lambda a, b: a > b, lhs, rhs)


def less(lhs: Operand, rhs: Operand) -> Any:
    """``lhs < rhs`` (bool) with broadcasting."""
    return _broadcast_op("less", lambda a, b: a < b, lhs, rhs)


def greater_equal(lhs: Operand, rhs: Operand) -> Any:
    """``lhs >= rhs`` (bool) with broadcasting."""
    return _broadcast_op("greater_equal", lambda a, b: a >= b, lhs, rhs)


def less_equal(lhs: Operand, rhs: Operand) -> Any:
    """``lhs <= rhs`` (bool) with broadcasting."""
    return _broadcast_op("less_equal", lambda a, b: a <= b, lhs, rhs)


def equal(lhs: Operand, rhs: Operand) -> Any:
    """``lhs == rhs`` (bool) with broadcasting."""
    return _broadcast_op("equal", lambda a, b: a == b, lhs, rhs)


def not_equal(lhs: Operand, rhs: Operand) -> Any:
    """``lhs != rhs`` (bool) with broadcasting."""
    return _broadcast_op("not_equal", lambda a, b: a != b, lhs, rhs)


def logical_and(lhs: Operand, rhs: Operand) -> Any:
    """Logical and of booleans, with broadcasting."""
    return _broadcast_op("logical_and", lambda a, b: a & b, lhs, rhs)


def logical_or(lhs: Operand, rhs: Operand) -> Any:
    """Logical or of booleans, with broadcasting."""
    return _broadcast_op("logical_or", lambda a, b: a | b, lhs, rhs)


def broadcast_to(data: Tensor, shape: Sequence[ExprLike]) -> Tensor:
    """``data`` stretched to ``shape`` by numpy's rules.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((3, 1), name="A")
    >>> [str(d) for d in topi.broadcast_to(A, (2, 3, 4)).shape]
    ['2', '3', '4']
    """
    target = [convert(s) for s in shape]
    out = broadcast_shape("broadcast_to", list(data.shape), target)
    if len(out) != len(target) or any(
        const_int(o) != const_int(t) for o, t in zip(out, target, strict=True)
    ):
        raise op_error(
            "broadcast_to",
            "shape",
            [str(s) for s in shape],
            f"a shape that {[str(s) for s in data.shape]} broadcasts to",
        )
    return compute(
        target, lambda *idx: data(*_index(data, target, idx)), "T_broadcast_to", tag.BROADCAST
    )
