"""Converters of ONNX's integer convolutions: ``ConvInteger`` (the int32 convolution of
zero-point-shifted 8-bit operands) and ``QLinearConv`` (that convolution plus an int32 bias,
requantized as ONNX Runtime does: ``saturate(round(float(acc) · x_scale · w_scale / y_scale) +
y_zero_point)``, rounding halves to even, with one weight scale and zero point per output channel
or one for all).

A constant int8 weight with zero points of 0 (symmetric, per tensor or per channel: what
quantizers write) over 8-bit data of one group, or depthwise, is the 8-bit integer convolution
(``qnn.conv2d`` through :func:`~pytvm.graph.int8_conv.int8_conv2d`: the data padded with its
zero point; the target's 8-bit dot products where it has them, exact float32 lanes for a
depthwise one). Otherwise the data's zero point is subtracted
before padding, so padding with zeros is padding with the zero point, as ONNX defines it, and
products accumulate in int32 through ``nn.conv2d`` with ``out_dtype="int32"`` over int16
operands (an 8-bit value less its zero point fits int16, and the products of int16 lanes
vectorize where int32 ones would halve the width).
One-dimensional convolutions run as two-dimensional ones over a height of 1.
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from ...graph.int8_conv import int8_conv2d, int8_conv2d_applies, int8_groups_apply
from .node import ConverterTable, NodeContext
from .ops_nn import check_spatial, spatial_attrs, window_pads

__all__ = ["QLINEAR_CONV_CONVERTERS"]

_OPERAND = "int16"  # an 8-bit value less an 8-bit zero point: within [-255, 255]


def _check_8bit(ctx: NodeContext, *inputs: int) -> None:
    for i in inputs:
        if ctx.dtype(i) not in ("int8", "uint8"):
            raise ctx.error(f"input {i} is {ctx.dtype(i)}; expected int8 or uint8")


def _zero_point(ctx: NodeContext, i: int, of: int, channels: int) -> Expr | None:
    """Zero point input ``i`` of input ``of`` as an int16 scalar, or one per output channel
    shaped ``[channels, 1, ...]`` (None when not given).
    """
    if not ctx.has(i):
        return None
    if ctx.dtype(i) != ctx.dtype(of):
        raise ctx.error(f"input {i} (a zero point) is {ctx.dtype(i)}, not {ctx.dtype(of)}")
    z = ctx.call("cast", ctx.expr(i), dtype=_OPERAND)
    count = math.prod(ctx.shape(i))
    if count == 1:
        return ctx.call("reshape", z, newshape=()) if ctx.shape(i) else z
    if count != channels or len(ctx.shape(i)) != 1:
        raise ctx.error(
            f"zero point {i} has shape {list(ctx.shape(i))}; expected a scalar or [{channels}]"
        )
    return ctx.call("reshape", z, newshape=(channels, *[1] * (ctx.ndim(of) - 1)))


def _shifted(ctx: NodeContext, i: int, zp: int, channels: int) -> Expr:
    x = ctx.call("cast", ctx.expr(i), dtype=_OPERAND)
    z = _zero_point(ctx, zp, i, channels)
    return x if z is None else ctx.call("subtract", x, z)


def _int_conv(ctx: NodeContext, x: Expr, w: Expr, wshape: tuple[int, ...]) -> Expr:
    """The int32 convolution of shifted data ``x`` and weight ``w`` with the node's attributes."""
    nsp = check_spatial(ctx, ctx.ndim(0))
    if nsp == 3:  # noqa: PLR2004
        raise ctx.error("3-d integer convolutions are not supported (1-d and 2-d are)")
    kernel, strides, dilations = spatial_attrs(ctx, nsp, ctx.attr("kernel_shape") or wshape[2:])
    pads = window_pads(ctx, ctx.shape(0)[2:], kernel, strides, dilations)
    if nsp == 1:
        x = ctx.call("expand_dims", x, axis=2, num_newaxis=1)
        w = ctx.call("expand_dims", w, axis=2, num_newaxis=1)
        strides, dilations, pads = [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]]
    out = ctx.call(
        "nn.conv2d",
        x,
        w,
        strides=tuple(strides),
        padding=tuple(pads),
        dilation=tuple(dilations),
        groups=int(ctx.attr("group", 1)),
        out_dtype="int32",
    )
    return ctx.call("squeeze", out, axis=(2,)) if nsp == 1 else out


def _int8_conv(ctx: NodeContext, w: int, x_zp: int, w_zp: int, bias: int | None) -> Expr | None:
    """The convolution of input 0 (less zero point ``x_zp``) and constant weight ``w`` plus
    ``bias`` through :func:`int8_conv2d`, when it applies (else None: the int16 path).
    """
    nsp = check_spatial(ctx, ctx.ndim(0))
    weight = ctx.known_value(w)
    w_zero = ctx.known_value(w_zp) if ctx.has(w_zp) else np.zeros(1, "int8")
    x_zero = ctx.known_value(x_zp) if ctx.has(x_zp) else np.zeros(1, "int8")
    if (
        nsp > 2  # noqa: PLR2004
        or weight is None
        or weight.ndim != nsp + 2
        or w_zero is None
        or x_zero is None
        or x_zero.size != 1
        or (ctx.has(x_zp) and ctx.dtype(x_zp) != ctx.dtype(0))
    ):
        return None
    weight2d = weight.reshape(*weight.shape[:2], 1, -1) if nsp == 1 else weight
    groups = int(ctx.attr("group", 1))
    if not (
        int8_conv2d_applies(ctx.dtype(0), weight2d, w_zero)
        and int8_groups_apply(ctx.shape(0)[1], weight2d, groups)
    ):
        return None
    kernel, strides, dilations = spatial_attrs(
        ctx, nsp, ctx.attr("kernel_shape") or weight.shape[2:]
    )
    pads = window_pads(ctx, ctx.shape(0)[2:], kernel, strides, dilations)
    x = ctx.expr(0)
    if nsp == 1:
        x = ctx.call("expand_dims", x, axis=2, num_newaxis=1)
        strides, dilations, pads = [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]]
    b = None if bias is None else ctx.known_value(bias)
    zero = int(x_zero.reshape(-1)[0])
    out = int8_conv2d(x, zero, weight2d, strides, pads, dilations, b, ctx.name, groups)
    if bias is not None and b is None and ctx.has(bias):
        out = ctx.call("nn.bias_add", out, ctx.expr(bias), axis=1)
    return ctx.call("squeeze", out, axis=(2,)) if nsp == 1 else out


def _conv_integer(ctx: NodeContext) -> Expr:
    """Inputs: x, w, x_zero_point?, w_zero_point?; output: int32."""
    _check_8bit(ctx, 0, 1)
    fast = _int8_conv(ctx, 1, 2, 3, None)
    if fast is not None:
        return fast
    x = _shifted(ctx, 0, 2, 1)
    w = _shifted(ctx, 1, 3, ctx.shape(1)[0])
    return _int_conv(ctx, x, w, ctx.shape(1))


def _scale(ctx: NodeContext, i: int) -> np.ndarray:
    """Scale input ``i``, known at import time, as float32 values."""
    return np.asarray(ctx.value(i, "a scale"), dtype="float32").reshape(-1)


def requantize(
    ctx: NodeContext,
    acc: Expr,
    scale: np.ndarray,
    zero_point: int,
    out_dtype: str,
    channel_axis: int = 1,
) -> Expr:
    """``saturate(round(float(acc) · scale) + zero_point)`` as ``out_dtype``, where
    ``zero_point`` is the index of the zero point input (0 when not given); ``scale`` holds one
    value or one per channel along ``channel_axis``.
    """
    rank = len(acc.checked_type.shape)  # type: ignore[union-attr]
    shape = [1] * rank
    if scale.size > 1:
        shape[channel_axis] = scale.size
    factor = ctx.const(scale.astype("float32").reshape(shape))
    y = ctx.call("round", ctx.call("multiply", ctx.call("cast", acc, dtype="float32"), factor))
    if ctx.has(zero_point):
        if math.prod(ctx.shape(zero_point)) != 1:
            raise ctx.error(f"zero point {zero_point} must hold one value")
        z = ctx.call("cast", ctx.expr(zero_point), dtype="float32")
        y = ctx.call("add", y, ctx.call("reshape", z, newshape=()))
    info = np.iinfo(np.dtype(out_dtype))
    y = ctx.call("clip", y, a_min=float(info.min), a_max=float(info.max))
    return ctx.call("cast", y, dtype=out_dtype)


def _qlinear_conv(ctx: NodeContext) -> Expr:
    """Inputs: x, x_scale, x_zero_point, w, w_scale, w_zero_point, y_scale, y_zero_point, B?."""
    _check_8bit(ctx, 0, 3)
    channels = ctx.shape(3)[0]
    if ctx.has(8) and (ctx.dtype(8) != "int32" or ctx.shape(8) != (channels,)):
        raise ctx.error(
            f"bias B is {ctx.dtype(8)} {list(ctx.shape(8))}; expected int32 [{channels}]"
        )
    acc = _int8_conv(ctx, 3, 2, 5, 8)
    if acc is None:
        x = _shifted(ctx, 0, 2, 1)
        w = _shifted(ctx, 3, 5, channels)
        acc = _int_conv(ctx, x, w, ctx.shape(3))
        if ctx.has(8):
            acc = ctx.call("nn.bias_add", acc, ctx.expr(8), axis=1)
    x_scale, w_scale, y_scale = _scale(ctx, 1), _scale(ctx, 4), _scale(ctx, 6)
    if x_scale.size != 1 or y_scale.size != 1 or w_scale.size not in (1, channels):
        raise ctx.error(
            f"scales of sizes x {x_scale.size}, w {w_scale.size}, y {y_scale.size}: expected "
            f"one each, or {channels} for w (one per output channel)"
        )
    # ONNX Runtime's order: x_scale · w_scale / y_scale in float32.
    scale = (x_scale * w_scale / y_scale).astype("float32")
    return requantize(ctx, acc, scale, 7, ctx.dtype(7) if ctx.has(7) else ctx.dtype(0))


QLINEAR_CONV_CONVERTERS: ConverterTable = {
    "ConvInteger": (10, _conv_integer),
    "QLinearConv": (10, _qlinear_conv),
}
