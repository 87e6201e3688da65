"""Running sums along an axis: ``cumsum`` (inclusive or exclusive, forward or reversed)."""

from __future__ import annotations

from ..te.operation import compute, reduce_axis
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Var, const
from ..tir.op import if_then_else
from . import tag
from ._shape import normalize_axis

__all__ = ["cumsum"]


def cumsum(
    data: Tensor,
    axis: int = 0,
    dtype: str | None = None,
    exclusive: bool = False,
    reverse: bool = False,
) -> Tensor:
    """``out[.., i, ..] = sum of data[.., k, ..]`` for ``k <= i`` (``k < i`` when
    ``exclusive``; ``k >= i`` / ``k > i`` when ``reverse``), as ONNX ``CumSum``.

    Each output element is a reduction over the whole axis, guarded to its prefix.

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.scan import cumsum
    >>> x = te.placeholder((3, 5), name="x")
    >>> [str(d) for d in cumsum(x, axis=1).shape]
    ['3', '5']
    """
    ax = normalize_axis("cumsum", axis, data.ndim)
    out_dtype = dtype or data.dtype
    k = reduce_axis((0, data.shape[ax]), name="k")

    def body(*idx: Var) -> PrimExpr:
        src: list[PrimExpr] = list(idx)
        src[ax] = k.var
        i = idx[ax]
        if reverse:
            keep = k.var > i if exclusive else k.var >= i
        else:
            keep = k.var < i if exclusive else k.var <= i
        value = data(*src).astype(out_dtype)
        return _sum(if_then_else(keep, value, const(0, out_dtype)), axis=k)  # type: ignore[no-any-return]

    return compute(data.shape, body, name="T_cumsum", tag=tag.COMM_REDUCE + ",cumsum")
