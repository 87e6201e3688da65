"""Adaptive pooling: windows that tile the pooled axes into a given number of cells
(``adaptive_pool1d``, ``adaptive_pool``, ``adaptive_pool3d``), and ``global_pool``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import max as _max
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import ExprLike, PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else, min_value
from .. import tag
from .._shape import op_error
from .pool_window import POOL_TYPES, constant_shape, ints, pool_axes

__all__ = ["adaptive_pool", "adaptive_pool1d", "adaptive_pool3d", "global_pool"]


def _widest(size: int, out: int) -> int:
    """The largest cell when ``size`` is tiled into ``out`` cells."""
    return max(-(-(i + 1) * size // out) - (i * size // out) for i in range(out))


def _adaptive(
    op: str,
    data: Tensor,
    output_size: Sequence[ExprLike] | ExprLike,
    pool_type: str,
    layout: str,
    ndim: int,
) -> Tensor:
    """Cell ``i`` of an axis of size ``n`` tiled into ``o`` covers
    ``[floor(i*n/o), ceil((i+1)*n/o))``, as ``torch.nn.AdaptiveAvgPool2d`` does.
    """
    if pool_type not in POOL_TYPES:
        raise op_error(op, "pool_type", pool_type, "'max' or 'avg'")
    axes = pool_axes(op, data, layout, ndim)
    shape = constant_shape(op, data)
    outs = ints(op, "output_size", output_size, ndim)
    if min(outs) < 1:
        raise op_error(op, "output_size", output_size, "positive sizes")
    sizes = [shape[a] for a in axes]
    widths = [_widest(n, o) for n, o in zip(sizes, outs, strict=True)]
    rs = [reduce_axis((0, k), name=f"rv{i}") for i, k in enumerate(widths)]
    exact = all(n % o == 0 for n, o in zip(sizes, outs, strict=True))
    out_shape = list(shape)
    for a, o in zip(axes, outs, strict=True):
        out_shape[a] = o
    dtype = data.dtype

    def bounds(idx: Sequence[Var]) -> list[tuple[PrimExpr, PrimExpr]]:
        return [
            (idx[a] * n // o, (idx[a] * n + n + o - 1) // o)
            for a, n, o in zip(axes, sizes, outs, strict=True)
        ]

    def window(*idx: Var) -> PrimExpr:
        at: list[PrimExpr] = list(idx)
        inside = []
        for a, (lo, hi), r in zip(axes, bounds(idx), rs, strict=True):
            at[a] = lo + r.var
            inside.append(lo + r.var < hi)
        if exact:
            v = data(*at)
        else:
            fill = min_value(dtype) if pool_type == "max" else const(0, dtype)
            v = if_then_else(_all(*inside), data(*at), fill)
        return (_max if pool_type == "max" else _sum)(v, axis=rs)  # type: ignore[no-any-return]

    if pool_type == "max":
        return compute(out_shape, window, name="adaptive_pool_max", tag=tag.ADAPTIVE_POOL_MAX)
    total = compute(out_shape, window, name="adaptive_pool_sum", tag=tag.ADAPTIVE_POOL_SUM)

    def average(*idx: Var) -> PrimExpr:
        count: PrimExpr = const(1)
        for lo, hi in bounds(idx):
            count = count * (hi - lo)
        return total(*idx) / count.astype(dtype)

    kind = f"{tag.ELEMWISE},adaptive_pool_avg"
    return compute(out_shape, average, name="adaptive_pool_avg", tag=kind)


def adaptive_pool1d(
    data: Tensor, output_size: Sequence[int] | int, pool_type: str, layout: str = "NCW"
) -> Tensor:
    """Max or average over windows that tile W into ``output_size`` cells."""
    return _adaptive("adaptive_pool1d", data, output_size, pool_type, layout, 1)


def adaptive_pool(
    data: Tensor, output_size: Sequence[int] | int, pool_type: str, layout: str = "NCHW"
) -> Tensor:
    """Max or average over windows that tile H and W into ``output_size`` cells, as
    ``torch.nn.AdaptiveAvgPool2d`` does (cell ``i`` covers ``[floor(i*H/O), ceil((i+1)*H/O))``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 10, 10), name="x")
    >>> [str(d) for d in topi.nn.adaptive_pool(x, (3, 4), "avg").shape]
    ['1', '3', '3', '4']
    """
    return _adaptive("adaptive_pool", data, output_size, pool_type, layout, 2)


def adaptive_pool3d(
    data: Tensor, output_size: Sequence[int] | int, pool_type: str, layout: str = "NCDHW"
) -> Tensor:
    """Max or average over windows that tile D, H and W into ``output_size`` cells."""
    return _adaptive("adaptive_pool3d", data, output_size, pool_type, layout, 3)


def global_pool(data: Tensor, pool_type: str, layout: str = "NCHW") -> Tensor:
    """Max or average over all of H and W (size 1 left in their place)."""
    return _adaptive("global_pool", data, (1, 1), pool_type, layout, 2)
