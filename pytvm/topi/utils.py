"""TVM's ``topi.utils``: constant shapes and values, index arithmetic, layout shapes.

The module keeps TVM's name (``from tvm.topi.utils import get_const_tuple``); each helper reads
constants out of expressions (simplifying first), builds index expressions, or answers a
question about a shape or layout.

Examples
--------
>>> from pytvm import te
>>> from pytvm.topi.utils import get_const_tuple, get_shape
>>> x = te.placeholder((2, 3 + 1), name="x")
>>> get_const_tuple(x.shape)
(2, 4)
>>> get_shape((1, 3, 224, 224), "NCHW", "NHWC")
(1, 224, 224, 3)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from numbers import Integral
from typing import Any

import numpy as np

from ..ffi.errors import TVMValueError
from ..target import Target
from ..te.operation import compute
from ..te.tensor import ComputeOp, Operation, Tensor
from ..tir.arith.analyzer import Analyzer
from ..tir.expr import FloatImm, IntImm, Or, PrimExpr, Select, Var, const
from ..tir.op import abs as _abs
from ..tir.op import all as _all
from ..tir.op import if_then_else, indexdiv, indexmod
from . import tag
from ._shape import prod as _prod
from .layout import layout_axes

__all__ = [
    "InvalidShapeError",
    "ceil_div",
    "const_matrix",
    "const_vector",
    "equal_const_int",
    "get_const_float",
    "get_const_int",
    "get_const_tuple",
    "get_float_tuple",
    "get_max_power2_factor",
    "get_shape",
    "is_dynamic_shape",
    "is_empty_shape",
    "is_target",
    "make_idx",
    "nchw_pack_layout",
    "nchw_xc_layout",
    "ncw_pack_layout",
    "ncw_xc_layout",
    "prod",
    "ravel_index",
    "simplify",
    "swap",
    "traverse_inline",
    "unravel_index",
    "within_index",
]


class InvalidShapeError(TVMValueError):
    """A shape a topi function does not handle (a winograd template for a non-3x3 kernel)."""


def ncw_pack_layout(layout_info: str) -> bool:
    """Whether ``layout_info`` is ``NCWinic`` (both channel axes blocked)."""
    return layout_info[:3] == "NCW" and "c" in layout_info and "n" in layout_info


def ncw_xc_layout(layout_info: str) -> bool:
    """Whether ``layout_info`` is ``NCW<x>c``."""
    return layout_info[:3] == "NCW" and "c" in layout_info and layout_info[3:-1].isnumeric()


def nchw_pack_layout(layout_info: str) -> bool:
    """Whether ``layout_info`` is ``NCHWinic`` (both channel axes blocked)."""
    return layout_info[:4] == "NCHW" and "c" in layout_info and "n" in layout_info


def nchw_xc_layout(layout_info: str) -> bool:
    """Whether ``layout_info`` is ``NCHW<x>c``."""
    return layout_info[:4] == "NCHW" and "c" in layout_info and layout_info[4:-1].isnumeric()


def traverse_inline(s: Any, final_op: Operation, callback: Callable[[ComputeOp], None]) -> None:
    """Inline every injective stage reached from ``final_op`` that is not a schedule output,
    and call ``callback`` on every compute stage reached, producers first.
    """
    output_ops = {id(t.op) if isinstance(t, Tensor) else id(t) for t in s.outputs}
    visited: set[int] = set()

    def visit(op: Operation) -> None:
        if id(op) in visited or not isinstance(op, ComputeOp):
            return
        visited.add(id(op))
        if tag.is_injective(op.tag):
            if id(op) not in output_ops:
                s[op].compute_inline()
            for t in op.input_tensors:
                visit(t.op)
        callback(op)

    visit(final_op)


def prod(x: Sequence[Any]) -> Any:
    """The product of the items of ``x`` (an int32 ``1`` when empty)."""
    if not x:
        return const(1, "int32")
    if all(isinstance(v, Integral) for v in x):
        out = 1
        for v in x:
            out *= int(v)
        return out
    return _prod(list(x))


def _simplified(expr: Any) -> Any:
    return Analyzer().simplify(expr) if isinstance(expr, PrimExpr) else expr


def get_const_int(expr: Any) -> int:
    """The value of an integer constant ``expr`` (simplified first); raises when not constant."""
    if isinstance(expr, Integral):
        return int(expr)
    value = _simplified(expr)
    if not isinstance(value, IntImm):
        raise TVMValueError(f"expected a constant int, got {expr!r}; bind its variables first")
    return int(value.value)


def get_const_float(expr: Any) -> float:
    """The value of a floating-point constant ``expr``; raises when not constant."""
    if isinstance(expr, float):
        return expr
    value = _simplified(expr)
    if not isinstance(value, FloatImm):
        raise TVMValueError(f"expected a constant float, got {expr!r}")
    return float(value.value)


def equal_const_int(expr: Any, value: int) -> bool:
    """Whether ``expr`` is an integer constant equal to ``value``."""
    if isinstance(expr, Integral):
        return int(expr) == value
    e = _simplified(expr)
    return isinstance(e, IntImm) and e.value == value


def get_const_tuple(in_tuple: Sequence[Any]) -> tuple[Any, ...]:
    """``in_tuple`` with every constant dimension as an int; variables and other symbolic
    dimensions stay expressions.
    """
    out: list[Any] = []
    for elem in in_tuple:
        if isinstance(elem, Var):
            out.append(elem)
            continue
        value = _simplified(elem)
        if isinstance(value, IntImm):
            out.append(int(value.value))
        else:
            out.append(int(value) if isinstance(value, Integral) else value)
    return tuple(out)


def get_float_tuple(in_tuple: Sequence[Any]) -> tuple[float, ...]:
    """``in_tuple`` as floats; raises on a non-constant item."""
    return tuple(get_const_float(e) for e in in_tuple)


def const_vector(vector: Any, name: str = "const_vector") -> Tensor:
    """A tensor holding the 1-d constant ``vector`` (a chain of selects on the index)."""
    arr = np.asarray(vector)
    rows, dtype = arr.shape[0], str(arr.dtype)

    def select(i: PrimExpr) -> PrimExpr:
        now: PrimExpr = const(0, dtype)
        for k in range(rows):
            now = Select(indexmod(i, rows) == k, const(arr[k].item(), dtype), now)
        return now

    return compute(arr.shape, select, name=name)


def const_matrix(matrix: Any, name: str = "const_matrix", attrs: Any = None) -> Tensor:
    """A tensor holding the 2-d constant ``matrix`` (a chain of selects on the indices)."""
    arr = np.asarray(matrix)
    rows, cols = arr.shape
    dtype = str(arr.dtype)

    def select(i: PrimExpr, j: PrimExpr) -> PrimExpr:
        now: PrimExpr = const(0, dtype)
        for a in range(rows):
            for b in range(cols):
                hit = _all(indexmod(i, rows) == a, indexmod(j, cols) == b)
                now = Select(hit, const(arr[a, b].item(), dtype), now)
        return now

    if attrs is None:
        attrs = {"const_matrix": True, "schedule_rule": "None"}
    return compute(arr.shape, select, name=name, attrs=attrs)


def simplify(expr: Any) -> Any:
    """``expr`` simplified when it is an expression, else unchanged."""
    return _simplified(expr)


def ravel_index(indices: Sequence[Any], shape: Sequence[Any]) -> Any:
    """The row-major flat index of ``indices`` in ``shape``."""
    idx: Any = None
    for i, (dim, ind) in enumerate(zip(shape, indices, strict=False)):
        idx = ind if i == 0 else idx * dim + ind
    return idx


def unravel_index(idx: Any, shape: Sequence[Any]) -> list[Any]:
    """The coordinates in ``shape`` of row-major flat index ``idx`` (assumed in bounds)."""
    out: list[Any] = []
    for i, dim in enumerate(reversed(shape)):
        if isinstance(dim, Integral) and dim == 0:
            out.append(0)
        elif i == len(shape) - 1:
            out.append(idx)
        else:
            out.append(indexmod(idx, dim))
            idx = indexdiv(idx, dim)
    return out[::-1]


def get_max_power2_factor(n: int, max_value: int | None = None) -> int:
    """The largest power of two dividing ``n``, capped at ``max_value``."""
    x = 1
    while n % 2 == 0 and (max_value is None or x * 2 <= max_value):
        x *= 2
        n //= 2
    return x


def get_shape(src_shape: Sequence[Any], src_layout: str, dst_layout: str) -> tuple[Any, ...]:
    """``src_shape`` (in ``src_layout``) with its axes reordered into ``dst_layout``.

    Both layouts have the same axes (``"NCHW16c"`` and ``"NC16cWH"``), in any order.
    """
    if src_layout == dst_layout:
        return get_const_tuple(src_shape)
    src, dst = layout_axes(str(src_layout)), layout_axes(str(dst_layout))
    if len(src) != len(src_shape) or sorted(src) != sorted(dst):
        raise TVMValueError(
            f"get_shape: layouts {src_layout!r} and {dst_layout!r} must name the same axes, "
            f"one per dimension of {tuple(src_shape)}"
        )
    return get_const_tuple([src_shape[src.index(axis)] for axis in dst])


def within_index(b: Any, e: Any, s: Any, i: Any) -> PrimExpr:
    """Whether position ``i`` is selected by the slice ``b:e:s``."""
    before = Select(s < 0, i <= e, i < b)
    after = Select(s < 0, i > b, i >= e)
    on_step = if_then_else(s < 0, ((i - e) + (e % _abs(s)) + 1) % _abs(s), (i - b) % s)
    return Select(Or(before, after), const(False, "bool"), on_step == 0)


def make_idx(b: Any, e: Any, s: Any, z: Any, i: Any) -> PrimExpr:
    """The position in the slice ``b:e:s`` (of an axis of size ``z``) of position ``i``;
    meaningful only where :func:`within_index` holds (88 elsewhere, as TVM).
    """
    before = Select(s < 0, i <= e, i < b)
    after = Select(s < 0, i > b, i >= e)
    b = Select(z < b, z - 1, b)
    pos = if_then_else(s < 0, (b - i) // _abs(s), (i - b) // s)
    return if_then_else(Or(before, after), 88, pos)


def is_empty_shape(shape: Sequence[Any]) -> bool:
    """Whether ``shape`` has a dimension known to be 0."""
    return any(equal_const_int(d, 0) for d in shape)


def ceil_div(a: Any, b: Any) -> Any:
    """``a / b`` rounded up."""
    if isinstance(a, Integral) and isinstance(b, Integral):
        return -(-int(a) // int(b))
    return indexdiv(a + (b - 1), b)


def swap(arr: list[Any], axis: int) -> list[Any]:
    """``arr`` with items ``axis`` and ``-1`` exchanged."""
    return [*arr[:axis], arr[-1], *arr[axis + 1 : -1], arr[axis]]


def is_target(names: str | Sequence[str]) -> bool:
    """Whether the current target (``with Target(...)``) has one of ``names`` among its keys."""
    wanted = [names] if isinstance(names, str) else list(names)
    target = Target.current(allow_none=False)
    if target is None:  # allow_none=False raises first; this narrows the type
        raise TVMValueError("is_target: no current target; call it inside `with Target(...)`")
    return any(name in target.keys for name in wanted)


def is_dynamic_shape(shape: Sequence[Any]) -> bool:
    """Whether some dimension of ``shape`` is not a constant."""
    return any(not isinstance(_simplified(d), (IntImm, Integral)) for d in shape)
