"""Converters of ONNX's index-driven operators: ``GatherElements``, ``GatherND``, ``CumSum``,
``OneHot``, ``EyeLike``, ``Hardmax``, and ``NonZero``/``Compress`` where the
values that decide the output's shape are known at import time.
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_math import onnx_dtype
from .ops_tensor import normalize_axes

__all__ = ["INDEXING_CONVERTERS"]


def _gather_elements(ctx: NodeContext) -> Expr:
    axis = normalize_axes(ctx, [int(ctx.attr("axis", 0))], ctx.ndim(0))[0]
    return ctx.call("gather", ctx.expr(0), ctx.expr(1), axis=axis)


def _gather_nd(ctx: NodeContext) -> Expr:
    return ctx.call(
        "gather_nd", ctx.expr(0), ctx.expr(1), batch_dims=int(ctx.attr("batch_dims", 0))
    )


def _cumsum(ctx: NodeContext) -> Expr:
    axis = normalize_axes(ctx, ctx.ints(1, "axis")[:1], ctx.ndim(0))[0]
    return ctx.call(
        "cumsum",
        ctx.expr(0),
        axis=axis,
        exclusive=bool(ctx.attr("exclusive", 0)),
        reverse=bool(ctx.attr("reverse", 0)),
    )


def _iota(n: int, axis: int, rank: int, dtype: str) -> np.ndarray:
    """``0..n-1`` laid along ``axis`` of a ``rank``-d array of ones elsewhere."""
    shape = [1] * rank
    shape[axis] = n
    return np.arange(n, dtype=dtype).reshape(shape)


def _one_hot(ctx: NodeContext) -> Expr:
    depth = int(ctx.value(1, "depth").reshape(-1)[0])
    ctx.check_constant([depth], "int64", "the indices 0..depth-1")
    rank = ctx.ndim(0) + 1
    axis = normalize_axes(ctx, [int(ctx.attr("axis", -1))], rank)[0]
    idx = ctx.expr(0)
    if ctx.dtype(0) != "int64":
        idx = ctx.call("cast", idx, dtype="int64")
    zero, n = ctx.const(np.int64(0)), ctx.const(np.int64(depth))
    idx = ctx.call("where", ctx.call("less", idx, zero), ctx.call("add", idx, n), idx)
    idx = ctx.call("expand_dims", idx, axis=axis, num_newaxis=1)
    hit = ctx.call("equal", idx, ctx.const(_iota(depth, axis, rank, "int64")))
    values = ctx.expr(2)
    off = ctx.call("take", values, ctx.const(np.int64(0)), axis=0, mode="fast")
    on = ctx.call("take", values, ctx.const(np.int64(1)), axis=0, mode="fast")
    return ctx.call("where", hit, on, off)


def _eye_like(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    if len(shape) != 2:  # noqa: PLR2004
        raise ctx.error(f"the input must be 2-d, got shape {list(shape)}")
    code = ctx.attr("dtype")
    dtype = ctx.dtype(0) if code is None else onnx_dtype(ctx, int(code))
    ctx.check_constant(shape, dtype, "the identity matrix")
    return ctx.const(np.eye(shape[0], shape[1], int(ctx.attr("k", 0)), dtype=dtype))


def _hardmax(ctx: NodeContext) -> Expr:
    shape, dtype = ctx.shape(0), ctx.dtype(0)
    ndim = len(shape)
    axis = normalize_axes(ctx, [int(ctx.attr("axis", 1 if ctx.opset < 13 else -1))], ndim)[0]  # noqa: PLR2004
    x = ctx.expr(0)
    if ctx.opset < 13:  # noqa: PLR2004 - coerced to 2-d at the axis
        x = ctx.call("reshape", x, newshape=(math.prod(shape[:axis]), math.prod(shape[axis:])))
        work_shape: tuple[int, ...] = (math.prod(shape[:axis]), math.prod(shape[axis:]))
        work_axis = 1
    else:
        work_shape, work_axis = shape, axis
    best = ctx.call("argmax", x, axis=(work_axis,), keepdims=True)
    ctx.check_constant([work_shape[work_axis]], "int32", "the indices along the axis")
    iota = ctx.const(_iota(work_shape[work_axis], work_axis, len(work_shape), "int32"))
    out = ctx.call("cast", ctx.call("equal", best, iota), dtype=dtype)
    return ctx.call("reshape", out, newshape=shape) if ctx.opset < 13 else out  # noqa: PLR2004


def _non_zero(ctx: NodeContext) -> Expr:
    value = ctx.value(0, "the input (NonZero's output shape depends on its values)")
    ctx.check_constant([value.ndim, int(np.count_nonzero(value))], "int64", "the indices")
    return ctx.const(np.array(np.nonzero(value), dtype="int64").reshape(value.ndim, -1))


def _compress(ctx: NodeContext) -> Expr:
    cond = ctx.value(1, "condition (Compress's output shape depends on it)").astype(bool)
    x, shape = ctx.expr(0), ctx.shape(0)
    axis = ctx.attr("axis")
    if axis is None:
        x, extent = ctx.call("reshape", x, newshape=(math.prod(shape),)), math.prod(shape)
        axis = 0
    else:
        axis = normalize_axes(ctx, [int(axis)], len(shape))[0]
        extent = shape[axis]
    ctx.check_constant([int(np.count_nonzero(cond.reshape(-1)[:extent]))], "int64", "the indices")
    picked = np.nonzero(cond.reshape(-1)[:extent])[0].astype("int64")
    return ctx.call("take", x, ctx.const(picked), axis=axis, mode="fast")


def _reverse_sequence(ctx: NodeContext) -> Expr:
    """Each batch entry's first ``sequence_lens[b]`` time steps reversed: a gather along the
    time axis at ``lens - 1 - t`` where ``t < lens``, else ``t`` (the lengths may be given at
    run time; the shapes do not depend on them).
    """
    shape = ctx.shape(0)
    if len(shape) < 2:  # noqa: PLR2004
        raise ctx.error(f"the input has rank {len(shape)}; ReverseSequence needs rank >= 2")
    batch_axis, time_axis = int(ctx.attr("batch_axis", 1)), int(ctx.attr("time_axis", 0))
    if {batch_axis, time_axis} != {0, 1}:
        raise ctx.error(f"batch_axis {batch_axis} and time_axis {time_axis}: expected 0 and 1")
    ones = [1] * len(shape)
    steps = np.arange(shape[time_axis], dtype="int64").reshape(
        [shape[time_axis] if k == time_axis else 1 for k in range(len(shape))]
    )
    t = ctx.const(steps)
    lens_shape = list(ones)
    lens_shape[batch_axis] = shape[batch_axis]
    lens = ctx.call(
        "reshape", ctx.call("cast", ctx.expr(1), dtype="int64"), newshape=tuple(lens_shape)
    )
    one = ctx.const(np.int64(1))
    reversed_t = ctx.call("subtract", ctx.call("subtract", lens, one), t)
    index = ctx.call("where", ctx.call("less", t, lens), reversed_t, t)
    index = ctx.call("broadcast_to", index, shape=tuple(shape))
    return ctx.call("gather", ctx.expr(0), index, axis=time_axis)


INDEXING_CONVERTERS: ConverterTable = {
    "ReverseSequence": (10, _reverse_sequence),
    "GatherElements": (11, _gather_elements),
    "GatherND": (11, _gather_nd),
    "CumSum": (11, _cumsum),
    "OneHot": (9, _one_hot),
    "EyeLike": (9, _eye_like),
    "Hardmax": (1, _hardmax),
    "NonZero": (9, _non_zero),
    "Compress": (9, _compress),
}
