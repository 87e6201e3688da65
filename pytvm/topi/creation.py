"""Tensors made from values and shapes: ``full``, ``full_like``, ``arange``, ``elemwise_sum``,
``shape``, ``ndarray_size``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.expr import ExprLike, PrimExpr, Select, Var, const, convert
from ..tir.op import ceil
from . import tag
from ._shape import const_int, op_error
from ._shape import prod as shape_prod

__all__ = ["arange", "elemwise_sum", "full", "full_like", "ndarray_size", "shape"]


def full(shape: Sequence[ExprLike], dtype: str, fill_value: ExprLike) -> Tensor:
    """A ``shape`` tensor of ``dtype`` holding ``fill_value`` everywhere.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> [str(d) for d in topi.full((2, 3), "float32", 1.5).shape]
    ['2', '3']
    """
    value = convert(fill_value).astype(dtype)
    return compute(list(shape), lambda *i: value, name="T_full", tag=tag.ELEMWISE)


def full_like(x: Tensor, fill_value: ExprLike) -> Tensor:
    """A tensor of ``x``'s shape and type holding ``fill_value`` everywhere."""
    return full(x.shape, x.dtype, fill_value)


def elemwise_sum(xs: Sequence[Tensor]) -> Tensor:
    """The elementwise sum of tensors of one shape."""
    if not xs:
        raise op_error("elemwise_sum", "inputs", list(xs), "at least one tensor")

    def body(*i: Var) -> PrimExpr:
        total = xs[0](*i)
        for t in xs[1:]:
            total = total + t(*i)
        return total

    return compute(xs[0].shape, body, name="T_elemwise_sum", tag=tag.ELEMWISE)


def arange(
    start: ExprLike, stop: ExprLike | None = None, step: ExprLike = 1, dtype: str = "float32"
) -> Tensor:
    """``start, start + step, ...`` below ``stop`` (one argument: ``0 .. start``), in
    ``dtype``: ``ceil((stop - start) / step)`` elements.
    """
    if stop is None:
        start, stop = 0, start
    values = [v if isinstance(v, (int, float)) else const_int(v) for v in (start, stop, step)]
    if all(v is not None for v in values):
        lo, hi, st = (float(v) for v in values)  # type: ignore[arg-type]
        if st == 0:
            raise op_error("arange", "step", step, "a non-zero number")
        count: PrimExpr = const(max(0, math.ceil((hi - lo) / st)))
    else:
        span = (convert(stop) - convert(start)).astype("float32") / convert(step).astype("float32")
        count = ceil(span).astype("int32")
    first, by = convert(start).astype(dtype), convert(step).astype(dtype)

    def body(i: Var) -> PrimExpr:
        return first + by * i.astype(dtype)

    return compute([count], body, name="T_arange", tag=tag.ELEMWISE)


def shape(array: Tensor, dtype: str = "int32") -> Tensor:
    """``array``'s shape as a 1-d tensor of ``dtype``."""
    dims = [convert(d).astype(dtype) for d in array.shape]

    def body(i: Var) -> PrimExpr:
        out = dims[-1] if dims else const(0, dtype)
        for k in range(len(dims) - 2, -1, -1):
            out = Select(i == k, dims[k], out)
        return out

    return compute([const(len(dims))], body, name="T_shape", tag=tag.ELEMWISE)


def ndarray_size(array: Tensor, dtype: str = "int32") -> Tensor:
    """The number of elements of ``array`` as a 0-d tensor of ``dtype``."""
    size = shape_prod(list(array.shape)).astype(dtype)
    return compute([], lambda: size, name="ndarray_size", tag=tag.ELEMWISE)
