"""Gathering by index tensors: ``gather`` (ONNX ``GatherElements``), ``gather_nd`` (TVM's:
index tuples along the first axis of the indices) and ``gather_nd_last_axis`` (ONNX
``GatherND``'s layout: index tuples along the last axis).

Negative indices count from the end of their axis, as ONNX allows; float indices are
truncated to integers.
"""

from __future__ import annotations

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Select, Var, const, convert
from . import tag
from ._shape import const_int, normalize_axis, op_error

__all__ = ["gather", "gather_nd", "gather_nd_last_axis"]


def _wrap(i: PrimExpr, n: PrimExpr) -> PrimExpr:
    """Index ``i`` (as int32, the type of index arithmetic) with negative values counted from
    the end of an axis of ``n``.
    """
    if i.dtype != "int32":
        i = i.astype("int32")
    n = convert(n).astype(i.dtype)
    return Select(i < const(0, i.dtype), i + n, i)


def gather(data: Tensor, axis: int, indices: Tensor) -> Tensor:
    """``out[i0, .., ik, ..] = data[i0, .., indices[i0, .., ik, ..], ..]`` along ``axis``:
    ``indices`` has ``data``'s rank and the output its shape.

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.gather import gather
    >>> d = te.placeholder((3, 4), name="d")
    >>> i = te.placeholder((2, 4), "int64", name="i")
    >>> [str(x) for x in gather(d, 0, i).shape]
    ['2', '4']
    """
    ax = normalize_axis("gather", axis, data.ndim)
    if indices.ndim != data.ndim:
        raise op_error("gather", "indices rank", indices.ndim, f"the data's rank {data.ndim}")

    def body(*idx: Var) -> PrimExpr:
        src: list[PrimExpr] = list(idx)
        src[ax] = _wrap(indices(*idx), data.shape[ax])
        return data(*src)

    return compute(indices.shape, body, name="T_gather", tag=tag.INJECTIVE)


def gather_nd(
    a: Tensor, indices: Tensor, batch_dims: int = 0, index_rank: int | None = None
) -> Tensor:
    """TVM's ``gather_nd``: ``indices`` is ``[M, Y...]``; ``out[Y..., X...]`` is
    ``a[b..., indices[0, Y...], ..., indices[M - 1, Y...], X...]`` where the first
    ``batch_dims`` axes of ``Y`` index the leading axes of ``a`` too. ``index_rank``, when
    given, must be ``M``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> d = te.placeholder((2, 3, 4), name="d")
    >>> i = te.placeholder((2, 5), "int64", name="i")
    >>> [str(x) for x in topi.gather_nd(d, i).shape]
    ['5', '4']
    """
    depth = const_int(indices.shape[0]) if indices.ndim else None
    if depth is None or (index_rank is not None and index_rank != depth):
        raise op_error("gather_nd", "indices shape", str(indices.shape), "a constant first axis")
    b = batch_dims
    if b < 0 or b + depth > a.ndim or b > indices.ndim - 1:
        raise op_error("gather_nd", "batch_dims/index depth", (b, depth), f"at most {a.ndim} axes")
    lead = list(indices.shape[1:])
    shape = [*lead, *a.shape[b + depth :]]

    def body(*idx: Var) -> PrimExpr:
        outer = idx[: len(lead)]
        src: list[PrimExpr] = list(outer[:b])
        for k in range(depth):
            src.append(_wrap(indices(const(k), *outer), a.shape[b + k]))
        return a(*src, *idx[len(lead) :])

    return compute(shape, body, name="T_gather_nd", tag=tag.INJECTIVE)


def gather_nd_last_axis(data: Tensor, indices: Tensor, batch_dims: int = 0) -> Tensor:
    """Slices of ``data`` at the index tuples in the last axis of ``indices`` (ONNX
    ``GatherND``; the first ``batch_dims`` axes are shared by both).

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.gather import gather_nd_last_axis
    >>> d = te.placeholder((2, 3, 4), name="d")
    >>> i = te.placeholder((5, 2), "int64", name="i")
    >>> [str(x) for x in gather_nd_last_axis(d, i).shape]
    ['5', '4']
    """
    depth = const_int(indices.shape[-1])
    if depth is None or indices.ndim < 1:
        raise op_error("gather_nd", "indices shape", str(indices.shape), "a constant last axis")
    b = batch_dims
    if not 0 <= b < min(data.ndim, indices.ndim) or b + depth > data.ndim:
        raise op_error(
            "gather_nd", "batch_dims/index depth", (b, depth), f"at most {data.ndim} axes"
        )
    lead = list(indices.shape[:-1])
    shape = [*lead, *data.shape[b + depth :]]

    def body(*idx: Var) -> PrimExpr:
        outer = idx[: len(lead)]
        src: list[PrimExpr] = list(outer[:b])
        for k in range(depth):
            src.append(_wrap(indices(*outer, const(k)), data.shape[b + k]))
        return data(*src, *idx[len(lead) :])

    return compute(shape, body, name="T_gather_nd", tag=tag.INJECTIVE)
