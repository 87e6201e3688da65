"""Converters of ONNX's linear quantization: ``QuantizeLinear`` and ``DequantizeLinear``
(per tensor or per axis), computed in floating point as ONNX defines them:
``q = saturate(round(x / scale) + zero_point)`` and ``x = (q - zero_point) * scale``, and
``DynamicQuantizeLinear`` (uint8 with the scale and zero point of the input's range widened to
hold 0: ``scale = (max - min) / 255``, 1 where the range is empty as in ONNX Runtime, and
``zero_point = round(clip(-min / scale, 0, 255))``). Rounding is half to even.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...graph import Expr, call
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
    """A constant 8-bit weight (two or more axes) stays ``(cast(w) - zero_point) * scale`` as
    calls, not folded here: ``FuseQDQ`` reads its codes (the integer convolution and dense of
    QDQ graphs), and ``FoldConstant`` folds what it leaves.
    """
    ftype = ctx.dtype(1)
    if ctx.attr("output_dtype"):
        ftype = onnx_dtype(ctx, int(ctx.attr("output_dtype")))
    codes = ctx.known_value(0)
    if codes is not None and codes.ndim >= 2 and codes.dtype in (np.int8, np.uint8):  # noqa: PLR2004

        def build(op: str, *args: Expr, **attrs: Any) -> Expr:
            return call(op, *args, name=ctx.name, **attrs)

    else:
        build = ctx.call
    x = build("cast", ctx.expr(0), dtype=ftype)
    if ctx.has(2):
        x = build("subtract", x, _along_axis(ctx, 2, ftype))
    return build("multiply", x, _along_axis(ctx, 1, ftype))


def _dynamic_quantize(ctx: NodeContext) -> list[Expr]:
    if ctx.dtype(0) != "float32":
        raise ctx.error(f"the input is {ctx.dtype(0)}; expected float32")
    x = ctx.expr(0)
    axes = tuple(range(ctx.ndim(0)))

    def scalar(value: float) -> Expr:
        return ctx.const(np.asarray(value, dtype="float32"))

    low = ctx.call("minimum", ctx.call("min", x, axis=axes), scalar(0.0))
    high = ctx.call("maximum", ctx.call("max", x, axis=axes), scalar(0.0))
    span = ctx.call("divide", ctx.call("subtract", high, low), scalar(255.0))
    scale = ctx.call("where", ctx.call("equal", high, low), scalar(1.0), span)
    zero = ctx.call("divide", ctx.call("negative", low), scale)
    zero = ctx.call("round", ctx.call("clip", zero, a_min=0.0, a_max=255.0))
    q = ctx.call("add", ctx.call("round", ctx.call("divide", x, scale)), zero)
    q = ctx.call("cast", ctx.call("clip", q, a_min=0.0, a_max=255.0), dtype="uint8")
    return [q, scale, ctx.call("cast", zero, dtype="uint8")]


QUANTIZE_CONVERTERS: ConverterTable = {
    "DynamicQuantizeLinear": (11, _dynamic_quantize),
    "QuantizeLinear": (10, _quantize),
    "DequantizeLinear": (10, _dequantize),
}
