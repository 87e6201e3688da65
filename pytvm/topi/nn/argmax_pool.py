"""``max_pool2d_with_argmax``: NCHW max pooling and where each maximum is, as ONNX's ``MaxPool``
gives its ``Indices`` (ONNX's output size: with ``ceil_mode`` the last window starts inside the
input or its leading padding).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import comm_reducer
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Select, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else, min_value
from .. import tag
from .._shape import const_int, op_error, pair
from .conv_window import padding4

__all__ = ["max_pool2d_with_argmax"]

_NCHW = 4


def _check(op: str, data: Tensor) -> list[int]:
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
    n, c, h, w = _check(op, data)
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
