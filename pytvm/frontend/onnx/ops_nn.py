"""Converters of ONNX's convolutions, matrix products and normalizations: ``Conv``,
``ConvTranspose``, ``Gemm``, ``MatMul``, ``BatchNormalization``, ``InstanceNormalization``,
``LayerNormalization``, ``LRN``, ``Softmax``/``LogSoftmax``, ``Dropout``.

One-dimensional convolutions run as two-dimensional ones over a height of 1, three-dimensional
ones as a batch of two-dimensional ones (``ops_volume``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_volume import conv3d, conv3d_transpose

__all__ = ["NN_CONVERTERS", "same_pads", "window_pads"]


def same_pads(
    sizes: Sequence[int], kernel: Sequence[int], strides: Sequence[int], dilations: Sequence[int]
) -> list[int]:
    """Total padding per axis for ``auto_pad=SAME_*``: the output is ``ceil(in / stride)``."""
    out = []
    for n, k, s, d in zip(sizes, kernel, strides, dilations, strict=True):
        extent = -(-n // s)
        out.append(max(0, (extent - 1) * s + (k - 1) * d + 1 - n))
    return out


def window_pads(
    ctx: NodeContext,
    sizes: Sequence[int],
    kernel: Sequence[int],
    strides: Sequence[int],
    dilations: Sequence[int],
) -> list[int]:
    """``[begin..., end...]`` padding of a windowed node from ``pads`` or ``auto_pad``."""
    nsp = len(sizes)
    auto = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    if auto == "NOTSET":
        pads = ctx.attr("pads")
        return [0] * (2 * nsp) if pads is None else [int(p) for p in pads]
    if auto == "VALID":
        return [0] * (2 * nsp)
    if auto not in ("SAME_UPPER", "SAME_LOWER"):
        raise ctx.error(f"auto_pad {auto!r} is not one of NOTSET, VALID, SAME_UPPER, SAME_LOWER")
    totals = same_pads(sizes, kernel, strides, dilations)
    small = [t // 2 for t in totals]
    large = [t - t // 2 for t in totals]
    return small + large if auto == "SAME_UPPER" else large + small


def spatial_attrs(ctx: NodeContext, nsp: int, kernel: Sequence[int]) -> tuple[list[int], ...]:
    """``(kernel, strides, dilations)`` of a windowed node with ``nsp`` spatial axes."""
    strides = [int(s) for s in ctx.attr("strides") or [1] * nsp]
    dilations = [int(d) for d in ctx.attr("dilations") or [1] * nsp]
    if len(strides) != nsp or len(dilations) != nsp or len(kernel) != nsp:
        raise ctx.error(
            f"kernel {list(kernel)}, strides {strides}, dilations {dilations}: expected "
            f"{nsp} value(s) each"
        )
    return list(kernel), strides, dilations


def check_spatial(ctx: NodeContext, ndim: int) -> int:
    """The number of spatial axes (1 to 3) of an ``[N, C, ...]`` input of rank ``ndim``."""
    nsp = ndim - 2
    if not 1 <= nsp <= 3:  # noqa: PLR2004
        raise ctx.error(f"{nsp}-d inputs are not supported (1-d to 3-d spatial inputs are)")
    return nsp


def _as_2d(ctx: NodeContext, x: Expr) -> Expr:
    return ctx.call("expand_dims", x, axis=2, num_newaxis=1)


def _conv(ctx: NodeContext) -> Expr:
    nsp = check_spatial(ctx, ctx.ndim(0))
    x, w = ctx.expr(0), ctx.expr(1)
    kernel, strides, dilations = spatial_attrs(
        ctx, nsp, ctx.attr("kernel_shape") or ctx.shape(1)[2:]
    )
    pads = window_pads(ctx, ctx.shape(0)[2:], kernel, strides, dilations)
    if nsp == 3:  # noqa: PLR2004
        out = conv3d(ctx, x, w, strides, pads, dilations, int(ctx.attr("group", 1)))
        return ctx.call("nn.bias_add", out, ctx.expr(2), axis=1) if ctx.has(2) else out
    if nsp == 1:
        x, w = _as_2d(ctx, x), _as_2d(ctx, w)
        strides, dilations, pads = [1, *strides], [1, *dilations], [0, pads[0], 0, pads[1]]
    out = ctx.call(
        "nn.conv2d",
        x,
        w,
        strides=tuple(strides),
        padding=tuple(pads),
        dilation=tuple(dilations),
        groups=int(ctx.attr("group", 1)),
    )
    if ctx.has(2):
        out = ctx.call("nn.bias_add", out, ctx.expr(2), axis=1)
    return ctx.call("squeeze", out, axis=(2,)) if nsp == 1 else out


def _conv_transpose(ctx: NodeContext) -> Expr:
    nsp = check_spatial(ctx, ctx.ndim(0))
    x, w = ctx.expr(0), ctx.expr(1)
    sizes = list(ctx.shape(0)[2:])
    kernel, strides, dilations = spatial_attrs(
        ctx, nsp, ctx.attr("kernel_shape") or ctx.shape(1)[2:]
    )
    out_pad = [int(p) for p in ctx.attr("output_padding") or [0] * nsp]
    auto = ctx.attr("auto_pad", "NOTSET") or "NOTSET"
    target = ctx.attr("output_shape")
    if target is not None:
        target = [int(t) for t in target][-nsp:]
    elif auto in ("SAME_UPPER", "SAME_LOWER"):
        target = [n * s for n, s in zip(sizes, strides, strict=True)]
    extra = [0] * nsp
    if target is not None:
        natural = [
            s * (n - 1) + p + (k - 1) * d + 1
            for n, s, p, k, d in zip(sizes, strides, out_pad, kernel, dilations, strict=True)
        ]
        totals = [nat - t for nat, t in zip(natural, target, strict=True)]
        extra = [max(0, -t) for t in totals]
        totals = [max(0, t) for t in totals]
        half = [t // 2 for t in totals]
        rest = [t - t // 2 for t in totals]
        pads = half + rest if auto == "SAME_UPPER" else rest + half
    elif auto == "VALID" or ctx.attr("pads") is None:
        pads = [0] * (2 * nsp)
    else:
        pads = [int(p) for p in ctx.attr("pads")]
    groups = int(ctx.attr("group", 1))
    if nsp == 1:
        x, w = _as_2d(ctx, x), _as_2d(ctx, w)
        strides, dilations, out_pad = [1, *strides], [1, *dilations], [0, *out_pad]
        pads, extra = [0, pads[0], 0, pads[1]], [0, *extra]
    if nsp == 3:  # noqa: PLR2004
        out = conv3d_transpose(ctx, x, w, strides, pads, dilations, out_pad, groups)
    else:
        out = ctx.call(
            "nn.conv2d_transpose",
            x,
            w,
            strides=tuple(strides),
            padding=tuple(pads),
            dilation=tuple(dilations),
            output_padding=tuple(out_pad),
            groups=groups,
        )
    if any(extra):
        width = ((0, 0), (0, 0), *((0, e) for e in extra))
        out = ctx.call("nn.pad", out, pad_width=width, pad_value=0.0)
    if ctx.has(2):
        out = ctx.call("nn.bias_add", out, ctx.expr(2), axis=1)
    return ctx.call("squeeze", out, axis=(2,)) if nsp == 1 else out


def _scale(ctx: NodeContext, x: Expr, factor: float, dtype: str) -> Expr:
    if factor == 1.0:
        return x
    return ctx.call("multiply", x, ctx.const(np.asarray(factor, dtype=dtype)))


def _gemm(ctx: NodeContext) -> Expr:
    a, b = ctx.expr(0), ctx.expr(1)
    dtype = ctx.dtype(0)
    if ctx.attr("transA", 0):
        a = ctx.call("transpose", a, axes=(1, 0))
    if not ctx.attr("transB", 0):
        b = ctx.call("transpose", b, axes=(1, 0))
    out = ctx.call("nn.dense", a, b)
    out = _scale(ctx, out, float(ctx.attr("alpha", 1.0)), dtype)
    beta = float(ctx.attr("beta", 1.0))
    if not ctx.has(2) or beta == 0.0:
        return out
    c = _scale(ctx, ctx.expr(2), beta, dtype)
    units = out.checked_type.shape[1]  # type: ignore[union-attr]
    if ctx.shape(2) in ((units,), (1, units)) and units > 1:
        c = ctx.call("reshape", c, newshape=(units,)) if len(ctx.shape(2)) == 2 else c  # noqa: PLR2004
        return ctx.call("nn.bias_add", out, c, axis=1)
    return ctx.call("add", out, c)


def _matmul(ctx: NodeContext) -> Expr:
    a, b = ctx.expr(0), ctx.expr(1)
    sa, sb = list(ctx.shape(0)), list(ctx.shape(1))
    if not sa or not sb:
        raise ctx.error("MatMul of a scalar (0-d input)")
    squeeze = []
    if len(sa) == 1:
        a, sa = ctx.call("expand_dims", a, axis=0), [1, *sa]
        squeeze.append(-2)
    if len(sb) == 1:
        b, sb = ctx.call("expand_dims", b, axis=1), [*sb, 1]
        squeeze.append(-1)
    m, k, n = sa[-2], sa[-1], sb[-1]
    if sb[-2] != k:
        raise ctx.error(f"cannot multiply shapes {ctx.shape(0)} and {ctx.shape(1)}")
    try:
        batch = [int(d) for d in np.broadcast_shapes(tuple(sa[:-2]), tuple(sb[:-2]))]
    except ValueError:
        raise ctx.error(f"batch shapes of {ctx.shape(0)} and {ctx.shape(1)} differ") from None
    if len(sb) == 2:  # noqa: PLR2004 - a weight matrix: one dense over every row
        rows = math.prod(sa[:-1])
        flat = a if len(sa) == 2 else ctx.call("reshape", a, newshape=(rows, k))  # noqa: PLR2004
        out = ctx.call("nn.dense", flat, ctx.call("transpose", b, axes=(1, 0)))
        if len(sa) != 2:  # noqa: PLR2004
            out = ctx.call("reshape", out, newshape=(*sa[:-1], n))
    else:
        nb = math.prod(batch)

        def batched(x: Expr, shape: list[int]) -> Expr:
            if math.prod(shape[:-2]) == 1:
                return ctx.call("reshape", x, newshape=(1, *shape[-2:]))
            if shape[:-2] != batch:
                x = ctx.call("broadcast_to", x, shape=(*batch, *shape[-2:]))
            return ctx.call("reshape", x, newshape=(nb, *shape[-2:]))

        lhs, rhs = batched(a, sa), batched(b, sb)
        if ctx.config.get("use_nt_batch_matmul", True):  # TVM's default: B in (batch, n, k)
            rhs = ctx.call("transpose", rhs, axes=(0, 2, 1))
            out = ctx.call("nn.batch_matmul", lhs, rhs, transpose_a=False, transpose_b=True)
        else:
            out = ctx.call("nn.batch_matmul", lhs, rhs, transpose_a=False, transpose_b=False)
        out = ctx.call("reshape", out, newshape=(*batch, m, n))
    if squeeze:
        rank = len(batch) + 2
        out = ctx.call("squeeze", out, axis=tuple(sorted(s % rank for s in squeeze)))
    return out


def _batch_norm(ctx: NodeContext) -> list[Expr]:
    if ctx.attr("training_mode", 0):
        raise ctx.error("training_mode=1 is not supported (inference only)")
    out = ctx.call(
        "nn.batch_norm",
        *(ctx.expr(i) for i in range(5)),
        axis=1,
        epsilon=float(ctx.attr("epsilon", 1e-5)),
    )
    return [out, ctx.expr(3), ctx.expr(4)]


def _channel_vector(ctx: NodeContext, i: int, ndim: int) -> Expr:
    return ctx.call("reshape", ctx.expr(i), newshape=(-1, *([1] * (ndim - 2))))


def _instance_norm(ctx: NodeContext) -> Expr:
    x, ndim, dtype = ctx.expr(0), ctx.ndim(0), ctx.dtype(0)
    axes = tuple(range(2, ndim))
    eps = ctx.const(np.asarray(float(ctx.attr("epsilon", 1e-5)), dtype=dtype))
    centred = ctx.call("subtract", x, ctx.call("mean", x, axis=axes, keepdims=True))
    var = ctx.call("mean", ctx.call("multiply", centred, centred), axis=axes, keepdims=True)
    norm = ctx.call("multiply", centred, ctx.call("rsqrt", ctx.call("add", var, eps)))
    scaled = ctx.call("multiply", norm, _channel_vector(ctx, 1, ndim))
    return ctx.call("add", scaled, _channel_vector(ctx, 2, ndim))


def _layer_norm(ctx: NodeContext) -> list[Expr]:
    x, shape, dtype = ctx.expr(0), ctx.shape(0), ctx.dtype(0)
    ndim = len(shape)
    axis = int(ctx.attr("axis", -1))
    if not -ndim <= axis < ndim:
        raise ctx.error(f"axis {axis} is out of range for a {ndim}-d input")
    first = axis % ndim
    axes = tuple(range(first, ndim))
    norm_shape = shape[first:]
    eps = float(ctx.attr("epsilon", 1e-5))

    def fitted(i: int) -> Expr:
        if not ctx.has(i):
            ctx.check_constant(norm_shape, dtype, "the default scale or bias")
            return ctx.const(np.full(norm_shape, 0 if i == 2 else 1, dtype=dtype))  # noqa: PLR2004
        if ctx.shape(i) == norm_shape:
            return ctx.expr(i)
        return ctx.call("broadcast_to", ctx.expr(i), shape=norm_shape)

    out = ctx.call(
        "nn.layer_norm", x, fitted(1), fitted(2), axis=axes if len(axes) > 1 else first, epsilon=eps
    )
    if not (ctx.output_used(1) or ctx.output_used(2)):
        return [out]
    mean = ctx.call("mean", x, axis=axes, keepdims=True)
    centred = ctx.call("subtract", x, mean)
    var = ctx.call("mean", ctx.call("multiply", centred, centred), axis=axes, keepdims=True)
    inv_std = ctx.call("rsqrt", ctx.call("add", var, ctx.const(np.asarray(eps, dtype=dtype))))
    return [out, mean, inv_std]


def _lrn(ctx: NodeContext) -> Expr:
    return ctx.call(
        "nn.lrn",
        ctx.expr(0),
        size=int(ctx.require("size")),
        axis=1,
        alpha=float(ctx.attr("alpha", 1e-4)),
        beta=float(ctx.attr("beta", 0.75)),
        bias=float(ctx.attr("bias", 1.0)),
    )


def _softmax(op: str) -> Any:
    def convert(ctx: NodeContext) -> Expr:
        shape = ctx.shape(0)
        ndim = len(shape)
        axis = int(ctx.attr("axis", 1 if ctx.opset < 13 else -1))  # noqa: PLR2004
        if not -ndim <= axis < ndim:
            raise ctx.error(f"axis {axis} is out of range for a {ndim}-d input")
        axis %= ndim
        if ctx.opset >= 13 or axis == ndim - 1:  # noqa: PLR2004
            return ctx.call(op, ctx.expr(0), axis=axis)
        # Before opset 13 the input is coerced to 2-d: [prod(shape[:axis]), prod(shape[axis:])].
        flat = ctx.call(
            "reshape", ctx.expr(0), newshape=(math.prod(shape[:axis]), math.prod(shape[axis:]))
        )
        return ctx.call("reshape", ctx.call(op, flat, axis=1), newshape=shape)

    return convert


def _dropout(ctx: NodeContext) -> list[Expr]:
    x = ctx.expr(0)
    if not ctx.output_used(1):
        return [x]
    ctx.check_constant(ctx.shape(0), "bool", "the all-true mask")
    return [x, ctx.const(np.ones(ctx.shape(0), dtype=bool))]


NN_CONVERTERS: ConverterTable = {
    "Conv": (1, _conv),
    "ConvTranspose": (1, _conv_transpose),
    "Gemm": (1, _gemm),
    "MatMul": (1, _matmul),
    "BatchNormalization": (1, _batch_norm),
    "InstanceNormalization": (1, _instance_norm),
    "LayerNormalization": (17, _layer_norm),
    "LRN": (1, _lrn),
    "Softmax": (1, _softmax("nn.softmax")),
    "LogSoftmax": (1, _softmax("nn.log_softmax")),
    "Dropout": (1, _dropout),
}
