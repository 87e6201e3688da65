"""Converters of ONNX's linear quantization: ``QuantizeLinear`` and ``DequantizeLinear``
(per tensor or per axis), computed in floating point as ONNX defines them:
``q = saturate(round(x / scale) + zero_point)`` and ``x = (q - zero_point) * scale``.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_math import onnx_dtype
from .ops_tensor import normalize_axes

__all__ = ["QUANTIZE_CONVERTERS"]


def _along_axis(ctx: NodeContext, i: int, dtype: str) -> Expr:
    """Input ``i`` (a scale or zero point) cast to ``dtype``, shaped to broadcast along the
    node's ``axis`` when it holds one value per element of that axis.
    """
    v = ctx.expr(i)
    if ctx.dtype(i) != dtype:
        v = ctx.call("cast", v, dtype=dtype)
    block = int(ctx.attr("block_size", 0))
    if block > 0:
        return _blocks(ctx, v, ctx.shape(i), block)
    shape = ctx.shape(i)
    if len(shape) == 1 and shape[0] > 1:
        rank = ctx.ndim(0)
        axis = normalize_axes(ctx, [int(ctx.attr("axis", 1))], rank)[0]
        target = [1] * rank
        target[axis] = shape[0]
        v = ctx.call("reshape", v, newshape=tuple(target))
    return v


def _blocks(ctx: NodeContext, v: Expr, shape: tuple[int, ...], block: int) -> Expr:
    """Blocked quantization: each value of ``v`` repeated ``block`` times along the axis."""
    full = ctx.shape(0)
    axis = normalize_axes(ctx, [int(ctx.attr("axis", 1))], len(full))[0]
    if len(shape) != len(full) or shape[axis] != -(-full[axis] // block):
        raise ctx.error(f"blocked scale shape {list(shape)} does not fit input {list(full)}")
    v = ctx.call("expand_dims", v, axis=axis + 1, num_newaxis=1)
    wide = (*shape[: axis + 1], block, *shape[axis + 1 :])
    v = ctx.call("broadcast_to", v, shape=wide)
    merged = (*shape[:axis], shape[axis] * block, *shape[axis + 1 :])
    v = ctx.call("reshape", v, newshape=merged)
    if merged[axis] == full[axis]:
        return v
    return ctx.call("strided_slice", v, begin=(0,), end=(full[axis],), strides=(1,), axes=(axis,))


def _quantize(ctx: NodeContext) -> Expr:
    x, ftype = ctx.expr(0), ctx.dtype(0)
    if ctx.has(2):
        qtype = ctx.dtype(2)
    elif ctx.attr("output_dtype"):
        qtype = onnx_dtype(ctx, int(ctx.attr("output_dtype")))
    else:
        qtype = "uint8"
    if not np.issubdtype(np.dtype(qtype), np.integer):
        raise ctx.error(f"quantizing to {qtype} is not supported (integer types are)")
    q = ctx.call("round", ctx.call("divide", x, _along_axis(ctx, 1, ftype)))
    if ctx.has(2):
        q = ctx.call("add", q, _along_axis(ctx, 2, ftype))
    info = np.iinfo(np.dtype(qtype))
    q = ctx.call("clip", q, a_min=float(info.min), a_max=float(info.max))
    return ctx.call("cast", q, dtype=qtype)


def _dequantize(ctx: NodeContext) -> Expr:
    ftype = ctx.dtype(1)
    if ctx.attr("output_dtype"):
        ftype = onnx_dtype(ctx, int(ctx.attr("output_dtype")))
    x = ctx.call("cast", ctx.expr(0), dtype=ftype)
    if ctx.has(2):
        x = ctx.call("subtract", x, _along_axis(ctx, 2, ftype))
    return ctx.call("multiply", x, _along_axis(ctx, 1, ftype))


QUANTIZE_CONVERTERS: ConverterTable = {
    "QuantizeLinear": (10, _quantize),
    "DequantizeLinear": (10, _dequantize),
}
