"""Sorting along an axis by ranks: ``sort``, ``argsort``, ``topk``, and ``searchsorted``.

An element's rank is how many elements of its row come before it (smaller, or larger when
descending; equal ones keep their order, so the sort is stable); the output at position ``r``
is the element of rank ``r``. Each is a reduction over the row, so a row of ``n`` costs
``n * n`` comparisons: meant for the moderate rows of shape computations and tests.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..te.operation import compute, reduce_axis
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Select, Var, const
from . import tag
from ._shape import const_int, normalize_axis, op_error

__all__ = ["argsort", "rank", "searchsorted", "sort", "topk"]


def rank(data: Tensor, axis: int, is_ascend: bool) -> Tensor:
    """The int32 rank of each element along ``axis`` in a stable sort."""
    ax = normalize_axis("rank", axis, data.ndim)
    j = reduce_axis((0, data.shape[ax]), name="j")

    def body(*i: Var) -> PrimExpr:
        other = list(i)
        other[ax] = j.var
        xi, xj = data(*i), data(*other)
        first = (xj < xi) if is_ascend else (xj > xi)
        tie = (xj == xi) & (j.var < i[ax])
        return _sum(Select(first | tie, const(1), const(0)), axis=j)  # type: ignore[no-any-return]

    return compute(data.shape, body, name="T_rank", tag=tag.COMM_REDUCE)


def _by_rank(
    data: Tensor,
    ranks: Tensor,
    ax: int,
    k: int,
    dtype: str,
    value: Callable[[list[PrimExpr], Var], PrimExpr],
    name: str,
) -> Tensor:
    """``out[..., r, ...] = value`` of the element whose rank is ``r``, for ``r < k``."""
    i = reduce_axis((0, data.shape[ax]), name="i")
    shape = list(data.shape)
    shape[ax] = const(k)

    def body(*o: Var) -> PrimExpr:
        at: list[PrimExpr] = list(o)
        at[ax] = i.var
        hit = ranks(*at) == o[ax]
        return _sum(Select(hit, value(at, i.var), const(0, dtype)), axis=i)  # type: ignore[no-any-return]

    return compute(shape, body, name=name, tag=tag.COMM_REDUCE)


def _extent(op: str, data: Tensor, ax: int) -> int:
    n = const_int(data.shape[ax])
    if n is None:
        raise op_error(op, f"extent of axis {ax}", str(data.shape[ax]), "a constant")
    return n


def sort(data: Tensor, axis: int = -1, is_ascend: bool = True) -> Tensor:
    """``data`` sorted along ``axis`` (stable), ascending or descending.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((3, 5), name="x")
    >>> [str(d) for d in topi.sort(x, axis=1).shape]
    ['3', '5']
    """
    ax = normalize_axis("sort", axis, data.ndim)
    n = _extent("sort", data, ax)
    ranks = rank(data, ax, is_ascend)
    return _by_rank(data, ranks, ax, n, data.dtype, lambda at, _: data(*at), "T_sort")


def argsort(
    data: Tensor,
    valid_count: Tensor | None = None,
    axis: int = -1,
    is_ascend: bool = True,
    dtype: str = "float32",
) -> Tensor:
    """The positions along ``axis`` that sort ``data`` (stable), as ``dtype``."""
    if valid_count is not None:
        raise op_error("argsort", "valid_count", "a tensor", "None (not supported)")
    ax = normalize_axis("argsort", axis, data.ndim)
    n = _extent("argsort", data, ax)
    ranks = rank(data, ax, is_ascend)
    return _by_rank(data, ranks, ax, n, dtype, lambda _, i: i.astype(dtype), "T_argsort")


def topk(
    data: Tensor,
    k: int = 1,
    axis: int = -1,
    ret_type: str = "both",
    is_ascend: bool = False,
    dtype: str = "int64",
) -> Any:
    """The ``k`` largest (``is_ascend``: smallest) elements along ``axis`` in order; ``k < 1``
    takes all. ``ret_type`` ``"values"``, ``"indices"`` (as ``dtype``) or ``"both"``
    (``[values, indices]``).
    """
    op = "topk"
    if ret_type not in ("both", "values", "indices"):
        raise op_error(op, "ret_type", ret_type, "'both', 'values' or 'indices'")
    ax = normalize_axis(op, axis, data.ndim)
    n = _extent(op, data, ax)
    kk = n if k < 1 else min(k, n)
    ranks = rank(data, ax, is_ascend)
    values = _by_rank(data, ranks, ax, kk, data.dtype, lambda at, _: data(*at), "T_topk_values")
    indices = _by_rank(data, ranks, ax, kk, dtype, lambda _, i: i.astype(dtype), "T_topk_indices")
    if ret_type == "values":
        return values
    if ret_type == "indices":
        return indices
    return [values, indices]


def searchsorted(
    sorted_sequence: Tensor, values: Tensor, right: bool = False, out_dtype: str = "int64"
) -> Tensor:
    """Where each of ``values`` would go in its row of ``sorted_sequence`` (the last axis;
    a 1-d sequence serves every row) to keep it sorted: the count of entries below it
    (``right``: not above it).
    """
    op = "searchsorted"
    seq = sorted_sequence
    if seq.ndim != 1 and (seq.ndim != values.ndim or seq.ndim < 1):
        raise op_error(op, "sorted_sequence rank", seq.ndim, f"1 or {values.ndim}")
    j = reduce_axis((0, seq.shape[-1]), name="j")

    def body(*i: Var) -> PrimExpr:
        entry = seq(j.var) if seq.ndim == 1 else seq(*i[:-1], j.var)
        v = values(*i)
        below = entry <= v if right else entry < v
        return _sum(Select(below, const(1, out_dtype), const(0, out_dtype)), axis=j)  # type: ignore[no-any-return]

    return compute(values.shape, body, name="T_searchsorted", tag=tag.COMM_REDUCE)
