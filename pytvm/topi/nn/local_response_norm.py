"""Local response normalization across channels (``topi.nn.lrn``), as ONNX ``LRN`` defines it."""

from __future__ import annotations

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else, pow
from .. import tag
from .._shape import const_int, normalize_axis, op_error

__all__ = ["lrn"]


def lrn(
    data: Tensor,
    size: int,
    axis: int = 1,
    alpha: float = 0.0001,
    beta: float = 0.75,
    bias: float = 2.0,
) -> Tensor:
    """``data / (bias + alpha / size * sum(data**2 over the window)) ** beta``.

    The window along ``axis`` covers channels ``[c - (size-1)//2, c + size//2]`` (within the
    tensor), as ONNX ``LRN`` and TVM's ``nn.lrn`` do.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 5, 3, 3), name="x")
    >>> topi.nn.lrn(x, 3).op.tag
    'elemwise,lrn'
    """
    if not isinstance(size, int) or size < 1:
        raise op_error("lrn", "size", size, "a positive int")
    ax = normalize_axis("lrn", axis, data.ndim)
    channels = const_int(data.shape[ax])
    if channels is None:
        raise op_error("lrn", "extent of the axis", str(data.shape[ax]), "a constant")
    dtype = data.dtype
    lo = (size - 1) // 2
    r = reduce_axis((0, size), name="rc")

    def square_sum(*i: Var) -> PrimExpr:
        c = i[ax] - lo + r.var
        src = [*i[:ax], c, *i[ax + 1 :]]
        v = data(*src)
        return _sum(  # type: ignore[no-any-return]
            if_then_else(_all(c >= 0, c < channels), v * v, const(0, dtype)), axis=r
        )

    sqsum = compute(data.shape, square_sum, name="T_lrn_sqsum", tag=tag.COMM_REDUCE)

    def body(*i: Var) -> PrimExpr:
        scale = const(bias, dtype) + const(alpha / size, dtype) * sqsum(*i)
        return data(*i) / pow(scale, const(beta, dtype))

    return compute(data.shape, body, name="T_lrn", tag=f"{tag.ELEMWISE},lrn")
