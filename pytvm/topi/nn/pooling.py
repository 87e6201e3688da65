"""Windowed pooling: ``pool1d``, ``pool2d``, ``pool3d`` (max or average) in any layout.

Max pooling is one reduction stage (tag ``pool_max``); average pooling is a sum stage
(``pool_sum``) and a division stage (``pool_avg``). Reads outside the input are guarded in the
window, so no padded copy of the input is made.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...te.operation import compute, reduce_axis
from ...te.reduction import max as _max
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else, min_value
from ...tir.op import max as emax
from .. import tag
from .._shape import op_error
from .pool_window import POOL_TYPES, constant_shape, pool_axes, pool_windows, taps_in

__all__ = ["pool1d", "pool2d", "pool3d"]


def _pool_nd(
    op: str,
    data: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    pool_type: str,
    ceil_mode: bool,
    layout: str,
    count_include_pad: bool,
    ndim: int,
) -> Tensor:
    """Windowed max or average over the ``ndim`` pooled axes of ``layout`` (TVM's pool_impl_nd)."""
    if pool_type not in POOL_TYPES:
        raise op_error(op, "pool_type", pool_type, "'max' or 'avg'")
    axes = pool_axes(op, data, layout, ndim)
    shape = constant_shape(op, data)
    wins = pool_windows(op, [shape[a] for a in axes], kernel, stride, dilation, padding, ceil_mode)
    rs = [reduce_axis((0, w.kernel), name=f"rv{i}") for i, w in enumerate(wins)]
    out_shape = list(shape)
    for a, w in zip(axes, wins, strict=True):
        out_shape[a] = w.out
    dtype = data.dtype
    fill = min_value(dtype) if pool_type == "max" else const(0, dtype)

    def window(*idx: Var) -> PrimExpr:
        at: list[PrimExpr] = list(idx)
        inside = []
        for a, w, r in zip(axes, wins, rs, strict=True):
            at[a] = w.start(idx[a]) + r.var * w.dilation
            last = (w.out - 1) * w.stride - w.before + (w.kernel - 1) * w.dilation
            if w.before > 0 or last >= w.size:
                inside += [at[a] >= 0, at[a] < w.size]
        v = if_then_else(_all(*inside), data(*at), fill) if inside else data(*at)
        return (_max if pool_type == "max" else _sum)(v, axis=rs)  # type: ignore[no-any-return]

    if pool_type == "max":
        return compute(out_shape, window, name="pool_max", tag=tag.POOL_MAX)
    total = compute(out_shape, window, name="pool_sum", tag=tag.POOL_SUM)

    def average(*idx: Var) -> PrimExpr:
        count: PrimExpr = const(1)
        for a, w in zip(axes, wins, strict=True):
            lo, hi = (-w.before, w.size + w.after) if count_include_pad else (0, w.size)
            count = count * taps_in(w.start(idx[a]), w, lo, hi)
        return total(*idx) / emax(count, const(1)).astype(dtype)

    return compute(out_shape, average, name="pool_avg", tag=f"{tag.ELEMWISE},pool_avg")


def pool1d(
    data: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    pool_type: str,
    ceil_mode: bool = False,
    layout: str = "NCW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or average over ``kernel`` windows of the W axis; ``padding`` is ``(left, right)``.
    See :func:`pool2d`.
    """
    return _pool_nd(
        "pool1d", data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout,
        count_include_pad, 1,
    )  # fmt: skip


def pool2d(
    data: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    pool_type: str,
    ceil_mode: bool = False,
    layout: str = "NCHW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or average over ``kernel`` windows of the H and W axes of ``layout`` (``NCHW``,
    ``NHWC``, ``NCHW16c``, ...).

    ``padding`` is ``(top, left, bottom, right)``. The output size is TVM's:
    ``(size + pads - dilated kernel) / stride + 1``, rounded up with ``ceil_mode``. Average
    pooling divides by the window's size within the explicitly padded input
    (``count_include_pad``) or by the number of input elements it covers; the ceil-mode extra
    region is never counted.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 2, 7, 7), name="x")
    >>> y = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), "max", ceil_mode=True)
    >>> [str(d) for d in y.shape]
    ['1', '2', '3', '3']
    """
    return _pool_nd(
        "pool2d", data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout,
        count_include_pad, 2,
    )  # fmt: skip


def pool3d(
    data: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    pool_type: str,
    ceil_mode: bool = False,
    layout: str = "NCDHW",
    count_include_pad: bool = True,
) -> Tensor:
    """Max or average over ``kernel`` windows of the D, H and W axes; ``padding`` is
    ``(front, top, left, back, bottom, right)``. See :func:`pool2d`.
    """
    return _pool_nd(
        "pool3d", data, kernel, stride, dilation, padding, pool_type, ceil_mode, layout,
        count_include_pad, 3,
    )  # fmt: skip
