"""Converters of ONNX Runtime's quantized elementwise operators (``com.microsoft``, written by
``onnxruntime.quantization`` in QOperator format): ``QLinearAdd``, ``QLinearMul``,
``QLinearSigmoid``, ``QLinearLeakyRelu``, ``QLinearGlobalAveragePool`` and ``QLinearConcat``.

Scales and zero points are per tensor and known at import time (as ONNX Runtime requires). Each
computes in float32 as ONNX Runtime does and requantizes with ``saturate(round(v) + zero_point)``
(halves to even):

- add: ``round(zc - ra·za - rb·zb + ra·a + rb·b)`` with ``ra = sa / sc``, ``rb = sb / sc``;
- mul: ``round((a - za)(b - zb) · (sa · sb / sc)) + zc``;
- sigmoid, leaky relu and concat's requantization: a 256-entry table made at import time
  (``quantize(f(dequantize(q)))`` for every 8-bit ``q``), looked up with ``take``, as ONNX
  Runtime's lookup-table kernels do;
- global average pool: ``round((Σ q - n · zx) · sx / (sy · n)) + zy`` over the ``n`` spatial
  positions, summed in int32.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np

from ...graph import Expr, Tuple
from .node import ConverterTable, NodeContext

__all__ = ["QLINEAR_ELEMENTWISE_CONVERTERS"]


def _check_8bit(ctx: NodeContext, i: int) -> str:
    dtype = ctx.dtype(i)
    if dtype not in ("int8", "uint8"):
        raise ctx.error(f"input {i} is {dtype}; expected int8 or uint8")
    return dtype


def _param(ctx: NodeContext, i: int, what: str, default: float = 0.0) -> float:
    """Scale or zero point input ``i`` (one value, known at import time; ``default`` when
    the optional input is not given).
    """
    if not ctx.has(i):
        return default
    value = np.asarray(ctx.value(i, what)).reshape(-1)
    if value.size != 1:
        raise ctx.error(f"{what} (input {i}) has {value.size} values; expected one (per tensor)")
    return float(value[0]) if "scale" in what else int(value[0])


def _f32(value: float) -> np.float32:
    return np.float32(value)


def _saturate(ctx: NodeContext, y: Expr, dtype: str) -> Expr:
    """``cast(clip(round(y)))`` to the 8-bit ``dtype``."""
    info = np.iinfo(np.dtype(dtype))
    y = ctx.call("clip", ctx.call("round", y), a_min=float(info.min), a_max=float(info.max))
    return ctx.call("cast", y, dtype=dtype)


def _float(ctx: NodeContext, x: Expr) -> Expr:
    return ctx.call("cast", x, dtype="float32")


def _const(ctx: NodeContext, value: np.float32) -> Expr:
    return ctx.const(np.asarray(value, dtype="float32"))


def _qlinear_add(ctx: NodeContext) -> Expr:
    """Inputs: A, A_scale, A_zero_point?, B, B_scale, B_zero_point?, C_scale, C_zero_point?."""
    dtype = _check_8bit(ctx, 0)
    _check_8bit(ctx, 3)
    sa, sb, sc = (_f32(_param(ctx, i, "scale")) for i in (1, 4, 6))
    za, zb, zc = (_f32(_param(ctx, i, "zero point")) for i in (2, 5, 7))
    ra, rb = sa / sc, sb / sc
    bias = zc - ra * za - rb * zb
    y = ctx.call(
        "add", _const(ctx, bias), ctx.call("multiply", _float(ctx, ctx.expr(0)), _const(ctx, ra))
    )
    y = ctx.call("add", y, ctx.call("multiply", _float(ctx, ctx.expr(3)), _const(ctx, rb)))
    return _saturate(ctx, y, dtype)


def _qlinear_mul(ctx: NodeContext) -> Expr:
    """Inputs as ``QLinearAdd``'s."""
    dtype = _check_8bit(ctx, 0)
    _check_8bit(ctx, 3)
    sa, sb, sc = (_f32(_param(ctx, i, "scale")) for i in (1, 4, 6))
    za, zb, zc = (int(_param(ctx, i, "zero point")) for i in (2, 5, 7))

    def shifted(i: int, z: int) -> Expr:
        x = ctx.call("cast", ctx.expr(i), dtype="int32")
        return ctx.call("subtract", x, ctx.const(np.asarray(z, dtype="int32"))) if z else x

    product = _float(ctx, ctx.call("multiply", shifted(0, za), shifted(3, zb)))
    y = ctx.call("round", ctx.call("multiply", product, _const(ctx, sa * sb / sc)))
    return _saturate(ctx, ctx.call("add", y, _const(ctx, _f32(zc))), dtype)


def _table(
    ctx: NodeContext,
    x: Expr,
    dtype: str,
    x_params: tuple[float, float],
    y_params: tuple[float, float],
    fn: Callable[[np.ndarray], np.ndarray],
) -> Expr:
    """``quantize(fn(dequantize(x)))`` by a 256-entry table made now and looked up with take."""
    info = np.iinfo(np.dtype(dtype))
    codes = np.arange(info.min, info.max + 1, dtype="int32")
    (sx, zx), (sy, zy) = x_params, y_params
    real = fn((codes - np.int32(zx)).astype("float32") * np.float32(sx)).astype("float32")
    q = np.rint(real / np.float32(sy)) + np.float32(zy)
    table = np.clip(q, info.min, info.max).astype(dtype)
    index = ctx.call("cast", x, dtype="int32")
    if info.min:
        index = ctx.call("subtract", index, ctx.const(np.asarray(info.min, dtype="int32")))
    return ctx.call("take", ctx.const(table), index, axis=0, mode="clip")


def _lookup(fn: Callable[[NodeContext, np.ndarray], np.ndarray]) -> Callable[[NodeContext], Expr]:
    """A converter of ``X, X_scale, X_zero_point?, Y_scale, Y_zero_point?`` by table lookup."""

    def convert(ctx: NodeContext) -> Expr:
        dtype = _check_8bit(ctx, 0)
        x_params = (_param(ctx, 1, "X_scale"), _param(ctx, 2, "X_zero_point"))
        y_params = (_param(ctx, 3, "Y_scale"), _param(ctx, 4, "Y_zero_point"))
        return _table(ctx, ctx.expr(0), dtype, x_params, y_params, lambda v: fn(ctx, v))

    return convert


def _sigmoid(ctx: NodeContext, v: np.ndarray) -> np.ndarray:
    out: np.ndarray = (1.0 / (1.0 + np.exp(-v.astype("float64")))).astype("float32")
    return out


def _leaky_relu(ctx: NodeContext, v: np.ndarray) -> np.ndarray:
    alpha = np.float32(ctx.attr("alpha", 0.01))
    return np.where(v >= 0, v, v * alpha).astype("float32")


def _global_average_pool(ctx: NodeContext) -> Expr:
    """Inputs: X, x_scale, x_zero_point, y_scale, y_zero_point; ``channels_last`` selects
    ``[N, ..., C]`` over ``[N, C, ...]``.
    """
    dtype = _check_8bit(ctx, 0)
    shape = ctx.shape(0)
    if len(shape) < 3:  # noqa: PLR2004
        raise ctx.error(f"X has shape {list(shape)}; expected [N, C, spatial...]")
    last = bool(int(ctx.attr("channels_last", 0)))
    axes = tuple(range(1, len(shape) - 1)) if last else tuple(range(2, len(shape)))
    n = math.prod(shape[a] for a in axes)
    sx, zx = _param(ctx, 1, "x_scale"), int(_param(ctx, 2, "x_zero_point"))
    sy, zy = _param(ctx, 3, "y_scale"), int(_param(ctx, 4, "y_zero_point"))
    total = ctx.call("sum", ctx.call("cast", ctx.expr(0), dtype="int32"), axis=axes, keepdims=True)
    if zx:
        total = ctx.call("subtract", total, ctx.const(np.asarray(zx * n, dtype="int32")))
    scale = _f32(sx) / (_f32(sy) * _f32(n))
    y = ctx.call("round", ctx.call("multiply", _float(ctx, total), _const(ctx, scale)))
    return _saturate(ctx, ctx.call("add", y, _const(ctx, _f32(zy))), dtype)


def _qlinear_concat(ctx: NodeContext) -> Expr:
    """Inputs: Y_scale, Y_zero_point, then (tensor, scale, zero point) per input."""
    if ctx.num_inputs < 5 or (ctx.num_inputs - 2) % 3:  # noqa: PLR2004
        raise ctx.error(
            f"{ctx.num_inputs} inputs; expected Y_scale, Y_zero_point and triples of "
            "(tensor, scale, zero point)"
        )
    y_params = (_param(ctx, 0, "Y_scale"), _param(ctx, 1, "Y_zero_point"))
    dtype = ctx.dtype(1)
    parts = []
    for i in range(2, ctx.num_inputs, 3):
        if _check_8bit(ctx, i) != dtype:
            raise ctx.error(f"input {i} is {ctx.dtype(i)}; the output is {dtype}")
        x_params = (_param(ctx, i + 1, "scale"), _param(ctx, i + 2, "zero point"))
        same = _f32(x_params[0]) == _f32(y_params[0]) and x_params[1] == y_params[1]
        parts.append(
            ctx.expr(i)
            if same
            else _table(ctx, ctx.expr(i), dtype, x_params, y_params, lambda v: v)
        )
    rank = ctx.ndim(2)
    axis = int(ctx.require("axis"))
    if not -rank <= axis < rank:
        raise ctx.error(f"axis {axis} is out of range for {rank}-d inputs")
    return ctx.call("concatenate", Tuple(tuple(parts)), axis=axis % rank)


#: ``com.microsoft`` operators of this module.
QLINEAR_ELEMENTWISE_CONVERTERS: ConverterTable = {
    "QLinearAdd": (1, _qlinear_add),
    "QLinearMul": (1, _qlinear_mul),
    "QLinearSigmoid": (1, _lookup(_sigmoid)),
    "QLinearLeakyRelu": (1, _lookup(_leaky_relu)),
    "QLinearGlobalAveragePool": (1, _global_average_pool),
    "QLinearConcat": (1, _qlinear_concat),
}
