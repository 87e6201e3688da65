"""Shape and attribute helpers shared by the operator definitions: constant dims, axes, errors."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ffi.errors import TVMValueError
from ..tir.expr import ExprLike, IntImm, PrimExpr, const, convert

__all__ = [
    "const_int",
    "const_ints",
    "const_shape",
    "normalize_axes",
    "normalize_axis",
    "op_error",
    "pair",
    "prod",
]


def op_error(op: str, attr: str, value: object, expected: str) -> TVMValueError:
    """The error for a bad attribute: names the operator, the attribute and the value."""
    return TVMValueError(f"{op}: bad {attr} {value!r}; expected {expected}")


def const_int(dim: ExprLike) -> int | None:
    """The value of a constant dimension, or None when it is symbolic."""
    if isinstance(dim, bool):
        return int(dim)
    if isinstance(dim, int):
        return dim
    e = convert(dim)
    return e.value if isinstance(e, IntImm) else None


def const_ints(op: str, what: str, dims: Sequence[ExprLike]) -> list[int]:
    """The values of dimensions that must be constant (raises naming ``op`` and ``what``)."""
    out = []
    for d in dims:
        v = const_int(d)
        if v is None:
            raise TVMValueError(f"{op}: {what} must be constant, got symbolic {d}")
        out.append(v)
    return out


def const_shape(op: str, name: str, t: Any, ndim: int) -> list[int]:
    """The constant shape of tensor ``t`` of rank ``ndim`` (raises naming ``op`` and ``name``)."""
    if t.ndim != ndim:
        raise op_error(op, f"{name} rank", t.ndim, str(ndim))
    dims = [const_int(d) for d in t.shape]
    if None in dims:
        raise op_error(op, f"{name} shape", [str(d) for d in t.shape], "constant dimensions")
    return [d for d in dims if d is not None]


def normalize_axis(op: str, axis: int, ndim: int, attr: str = "axis") -> int:
    """``axis`` in ``[0, ndim)`` (negative counts from the end)."""
    if not isinstance(axis, int) or not -ndim <= axis < ndim:
        raise op_error(op, attr, axis, f"an int in [{-ndim}, {ndim}) for a {ndim}-d input")
    return axis % ndim


def normalize_axes(op: str, axis: int | Sequence[int] | None, ndim: int) -> list[int]:
    """Sorted, distinct axes in ``[0, ndim)``; None means all."""
    if axis is None:
        return list(range(ndim))
    axes = [axis] if isinstance(axis, int) else list(axis)
    out = sorted(normalize_axis(op, a, ndim) for a in axes)
    if len(set(out)) != len(out):
        raise op_error(op, "axis", axis, "distinct axes")
    return out


def pair(op: str, attr: str, value: int | Sequence[int], positive: bool = True) -> tuple[int, int]:
    """An int or a 2-sequence as a pair; checks positivity (``positive``) or non-negativity."""
    vals = [value, value] if isinstance(value, int) else list(value)
    if len(vals) != 2 or not all(isinstance(v, int) for v in vals):  # noqa: PLR2004
        raise op_error(op, attr, value, "an int or a pair of ints")
    low = 1 if positive else 0
    if any(v < low for v in vals):
        raise op_error(op, attr, value, f"values >= {low}")
    return vals[0], vals[1]


def prod(dims: Sequence[PrimExpr]) -> PrimExpr:
    """The product of ``dims`` (1 for none)."""
    out: PrimExpr = const(1, "int32")
    for d in dims:
        out = out * d
    return out
