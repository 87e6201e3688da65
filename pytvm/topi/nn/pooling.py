"""Pooling in NCHW: windowed ``pool2d`` (max/avg), ``adaptive_pool`` and ``global_pool``.

Max pooling is one reduction stage (tag ``pool_max``); average pooling is a sum stage
(``pool_sum``) and a division stage (``pool_avg``). Reads outside the input are guarded in the
window, so no padded copy of the input is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import comm_reducer
from ...te.reduction import max as _max
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Select, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else, min_value
from ...tir.op import max as emax
from ...tir.op import min as emin
from .. import tag
from .._shape import const_int, op_error, pair
from .conv_window import padding4

__all__ = ["adaptive_pool", "global_pool", "max_pool2d_with_argmax", "pool2d"]

POOL_TYPES = ("max", "avg")
_NCHW = 4


def _check(op: str, data: Tensor, pool_type: str, layout: str) -> list[int]:
    if pool_type not in POOL_TYPES:
        raise op_error(op, "pool_type", pool_type, "'max' or 'avg'")
    if layout != "NCHW":
        raise op_error(op, "layout", layout, "'NCHW'")
    if data.ndim != _NCHW:
        raise op_error(op, "input rank", data.ndim, "4 (NCHW)")
    dims = [const_int(d) for d in data.shape]
    if None in dims:
        raise op_error(op, "input shape", [str(d) for d in data.shape], "constant dimensions")
    return [d for d in dims if d is not None]


def _out_size(
    op: str, axis: str, size: int, pads: tuple[int, int], k: int, d: int, s: int, ceil_mode: bool
) -> int:
    span = size + pads[0] + pads[1] - ((k - 1) * d + 1)
    if span < 0:
        raise op_error(
            op,
            f"kernel {axis}",
            k,
            f"a dilated window within the padded input ({size + sum(pads)})",
        )
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= size + pads[0]:
        out -= 1  # the last window must start inside the input or the leading padding
    return out


def _window(
    op: str,
    size: tuple[int, int],
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool,
) -> tuple[tuple[int, ...], ...]:
    """``(kernel, stride, dilation, (top, left, bottom, right), (out_h, out_w))``, checked."""
    h, w = size
    kh, kw = pair(op, "kernel", tuple(kernel))
    sh, sw = pair(op, "stride", tuple(stride))
    dh, dw = pair(op, "dilation", tuple(dilation))
    top, left, bottom, right = padding4(op, tuple(padding))
    oh = _out_size(op, "height", h, (top, bottom), kh, dh, sh, ceil_mode)
    ow = _out_size(op, "width", w, (left, right), kw, dw, sw, ceil_mode)
    return (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right), (oh, ow)


def _count(start: PrimExpr, k: int, d: int, lo: int, hi: int) -> PrimExpr:
    """How many of ``start + r * d`` (``r < k``) lie in ``[lo, hi)``."""
    r_lo = emax(const(0), (lo - start + d - 1) // d)
    r_hi = emin(const(k - 1), (hi - 1 - start) // d)
    return emax(r_hi - r_lo + 1, const(0))


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
    """Max or average over ``kernel`` windows of the H and W axes.

    ``padding`` is ``(top, left, bottom, right)``. Average pooling divides by the window's
    size including the explicit padding (``count_include_pad``) or by the number of input
    elements it covers; with ``ceil_mode`` the extra region is never counted.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 2, 7, 7), name="x")
    >>> y = topi.nn.pool2d(x, (3, 3), (2, 2), (1, 1), (0, 0, 0, 0), "max", ceil_mode=True)
    >>> [str(d) for d in y.shape]
    ['1', '2', '3', '3']
    """
    n, c, h, w = _check("pool2d", data, pool_type, layout)
    (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right), (oh, ow) = _window(
        "pool2d", (h, w), kernel, stride, dilation, padding, ceil_mode
    )
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    dtype = data.dtype
    fill = min_value(dtype) if pool_type == "max" else const(0, dtype)

    def window(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        iy = y * sh - top + ry.var * dh
        ix = x * sw - left + rx.var * dw
        guard = _all(iy >= 0, iy < h, ix >= 0, ix < w)
        v = if_then_else(guard, data(b, ch, iy, ix), fill)
        return (_max if pool_type == "max" else _sum)(v, axis=[ry, rx])  # type: ignore[no-any-return]

    shape = (n, c, oh, ow)
    if pool_type == "max":
        return compute(shape, window, name="pool_max", tag=tag.POOL_MAX)
    total = compute(shape, window, name="pool_sum", tag=tag.POOL_SUM)
    hi_h, hi_w = (h + bottom, w + right) if count_include_pad else (h, w)
    lo_h, lo_w = (-top, -left) if count_include_pad else (0, 0)

    def average(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        cnt_h = _count(y * sh - top, kh, dh, lo_h, hi_h)
        cnt_w = _count(x * sw - left, kw, dw, lo_w, hi_w)
        return total(b, ch, y, x) / emax(cnt_h * cnt_w, const(1)).astype(dtype)

    return compute(shape, average, name="pool_avg", tag=f"{tag.ELEMWISE},pool_avg")


def max_pool2d_with_argmax(
    data: Tensor,
    kernel: Sequence[int],
    stride: Sequence[int],
    dilation: Sequence[int],
    padding: Sequence[int],
    ceil_mode: bool = False,
    storage_order: int = 0,
) -> list[Tensor]:
    """``[values, indices]``: max pooling as :func:`pool2d` and, per window, where its maximum
    is in the input: an int64 index into the input flattened row-major (``storage_order`` 0,
    ``((n * C + c) * H + h) * W + w``) or with H and W swapped (1: ``... + h + w * H``), as
    ONNX's ``MaxPool`` gives its ``Indices``. Ties give the window's first maximum (row by row).
    """
    op = "max_pool2d_with_argmax"
    n, c, h, w = _check(op, data, "max", "NCHW")
    if storage_order not in (0, 1):
        raise op_error(op, "storage_order", storage_order, "0 (row major) or 1 (column major)")
    (kh, kw), (sh, sw), (dh, dw), (top, left, _, _), (oh, ow) = _window(
        op, (h, w), kernel, stride, dilation, padding, ceil_mode
    )
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    dtype = data.dtype

    def combine(acc: tuple[Var, Var], new: tuple[Var, Var]) -> tuple[PrimExpr, PrimExpr]:
        # a tap inside the input replaces the window's first pick, then only a larger value
        take = (new[0] >= 0) & ((acc[0] < 0) | (new[1] > acc[1]))
        return Select(take, new[0], acc[0]), Select(take, new[1], acc[1])

    def identity(ti: str, tv: str) -> tuple[PrimExpr, PrimExpr]:
        return const(-1, ti), min_value(tv)

    reducer = comm_reducer(combine, identity, name="argmax_pool")

    def window(b: Var, ch: Var, y: Var, x: Var) -> Any:
        iy = y * sh - top + ry.var * dh
        ix = x * sw - left + rx.var * dw
        inside = _all(iy >= 0, iy < h, ix >= 0, ix < w)
        plane = (b.astype("int64") * c + ch.astype("int64")) * (h * w)
        yy, xx = iy.astype("int64"), ix.astype("int64")
        flat = plane + (yy * w + xx if storage_order == 0 else yy + xx * h)
        index = if_then_else(inside, flat, const(-1, "int64"))
        value = if_then_else(inside, data(b, ch, iy, ix), min_value(dtype))
        return reducer((index, value), axis=[ry, rx])

    shape = (n, c, oh, ow)
    best = compute(shape, window, name="pool_argmax", tag=tag.COMM_REDUCE_IDX)
    values = compute(shape, lambda *i: best[1](*i), name="pool_max", tag=tag.INJECTIVE)  # noqa: PLW0108
    indices = compute(shape, lambda *i: best[0](*i), name="pool_indices", tag=tag.INJECTIVE)  # noqa: PLW0108
    return [values, indices]


def adaptive_pool(
    data: Tensor, output_size: Sequence[int], pool_type: str, layout: str = "NCHW"
) -> Tensor:
    """Max or average over windows that tile H and W into ``output_size`` cells, as
    ``torch.nn.AdaptiveAvgPool2d`` does (cell ``i`` covers ``[floor(i*H/O), ceil((i+1)*H/O))``).
    """
    op = "adaptive_pool"
    n, c, h, w = _check(op, data, pool_type, layout)
    oh, ow = pair(op, "output_size", tuple(output_size))

    def bounds(size: int, out: int) -> int:
        return max(-(-(i + 1) * size // out) - (i * size // out) for i in range(out))

    kh, kw = bounds(h, oh), bounds(w, ow)
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    dtype = data.dtype

    def starts(y: Var, x: Var) -> tuple[PrimExpr, PrimExpr, PrimExpr, PrimExpr]:
        hs, ws = y * h // oh, x * w // ow
        he, we = (y * h + h + oh - 1) // oh, (x * w + w + ow - 1) // ow
        return hs, ws, he, we

    def window(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        hs, ws, he, we = starts(y, x)
        if kh == h // oh and h % oh == 0 and kw == w // ow and w % ow == 0:
            v = data(b, ch, hs + ry.var, ws + rx.var)
        else:
            inside = _all(hs + ry.var < he, ws + rx.var < we)
            fill = min_value(dtype) if pool_type == "max" else const(0, dtype)
            v = if_then_else(inside, data(b, ch, hs + ry.var, ws + rx.var), fill)
        return (_max if pool_type == "max" else _sum)(v, axis=[ry, rx])  # type: ignore[no-any-return]

    shape = (n, c, oh, ow)
    if pool_type == "max":
        return compute(shape, window, name="adaptive_pool_max", tag=tag.ADAPTIVE_POOL_MAX)
    total = compute(shape, window, name="adaptive_pool_sum", tag=tag.ADAPTIVE_POOL_SUM)

    def average(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        hs, ws, he, we = starts(y, x)
        return total(b, ch, y, x) / ((he - hs) * (we - ws)).astype(dtype)

    kind = f"{tag.ELEMWISE},adaptive_pool_avg"
    return compute(shape, average, name="adaptive_pool_avg", tag=kind)


def global_pool(data: Tensor, pool_type: str, layout: str = "NCHW") -> Tensor:
    """Max or average over all of H and W: ``[N, C, 1, 1]``."""
    _check("global_pool", data, pool_type, layout)
    return adaptive_pool(data, (1, 1), pool_type, layout)
