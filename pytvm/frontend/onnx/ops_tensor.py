"""Converters of ONNX's shape, layout and indexing operators: ``Shape``, ``Reshape``,
``Flatten``, ``Transpose``, ``Squeeze``/``Unsqueeze``, ``Concat``, ``Split``, ``Slice``,
``Gather``, ``Pad``, ``Expand``, ``Tile``, ``Constant``, ``ConstantOfShape``, ``Range``,
``DepthToSpace``/``SpaceToDepth``.

Shapes, axes, pads and slice bounds must be known at import time (``ctx.value``); computed
ones are, since shape arithmetic on static shapes folds to constants.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...graph import Expr, Tuple
from .errors import DynamicValueError
from .node import ConverterTable, NodeContext

__all__ = ["TENSOR_CONVERTERS", "axes_of", "normalize_axes"]


def normalize_axes(ctx: NodeContext, axes: Sequence[int], ndim: int) -> list[int]:
    """``axes`` in ``[0, ndim)``; raises naming the node on a bad or repeated axis."""
    out = []
    for a in axes:
        if not -ndim <= a < ndim:
            raise ctx.error(f"axis {a} is out of range for a {ndim}-d tensor")
        out.append(a % ndim)
    if len(set(out)) != len(out):
        raise ctx.error(f"axes {list(axes)} repeat an axis")
    return out


def axes_of(ctx: NodeContext, input_from: int, index: int) -> list[int] | None:
    """The ``axes`` of a node: an attribute before opset ``input_from``, input ``index`` from
    it on; None when not given.
    """
    if ctx.opset < input_from:
        axes = ctx.attr("axes")
        return None if axes is None else [int(a) for a in axes]
    if not ctx.has(index):
        return None
    return ctx.ints(index, "axes")


def _shape(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    n = len(shape)
    start, end = int(ctx.attr("start", 0)), ctx.attr("end")
    start = min(max(start + n if start < 0 else start, 0), n)
    stop = n if end is None else min(max(int(end) + n if end < 0 else int(end), 0), n)
    return ctx.const(np.array(shape[start:stop], dtype="int64"))


def _size(ctx: NodeContext) -> Expr:
    return ctx.const(np.array(math.prod(ctx.shape(0)), dtype="int64"))


def _reshape(ctx: NodeContext) -> Expr:
    shape = ctx.ints(1, "shape") if ctx.opset >= 5 else [int(v) for v in ctx.require("shape")]  # noqa: PLR2004
    in_shape = ctx.shape(0)
    allowzero = bool(ctx.attr("allowzero", 0))
    out = []
    for k, d in enumerate(shape):
        if d == 0 and not allowzero:
            if k >= len(in_shape):
                raise ctx.error(f"shape {shape} copies dimension {k} the input lacks")
            out.append(in_shape[k])
        else:
            out.append(d)
    if out.count(-1) > 1:
        raise ctx.error(f"shape {shape} has more than one -1")
    total = math.prod(in_shape)
    if -1 in out:
        rest = math.prod(d for d in out if d != -1)
        if rest == 0 or total % rest:
            raise ctx.error(f"cannot reshape {list(in_shape)} to {shape}")
        out[out.index(-1)] = total // rest
    if math.prod(out) != total:
        raise ctx.error(f"cannot reshape {list(in_shape)} ({total} elements) to {shape}")
    if tuple(out) == in_shape:
        return ctx.expr(0)
    return ctx.call("reshape", ctx.expr(0), newshape=tuple(out))


def _flatten(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    axis = int(ctx.attr("axis", 1))
    if not -len(shape) <= axis <= len(shape):
        raise ctx.error(f"axis {axis} is out of range for a {len(shape)}-d input")
    axis = axis + len(shape) if axis < 0 else axis
    newshape = (math.prod(shape[:axis]), math.prod(shape[axis:]))
    return ctx.call("reshape", ctx.expr(0), newshape=newshape)


def _transpose(ctx: NodeContext) -> Expr:
    ndim = ctx.ndim(0)
    perm = ctx.attr("perm")
    axes = list(range(ndim))[::-1] if perm is None else [int(p) for p in perm]
    if axes == list(range(ndim)):
        return ctx.expr(0)
    return ctx.call("transpose", ctx.expr(0), axes=tuple(normalize_axes(ctx, axes, ndim)))


def _squeeze(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    axes = axes_of(ctx, 13, 1)
    if axes is None:
        axes = [k for k, d in enumerate(shape) if d == 1]
    axes = normalize_axes(ctx, axes, len(shape))
    for a in axes:
        if shape[a] != 1:
            raise ctx.error(f"cannot squeeze axis {a} of extent {shape[a]} (shape {list(shape)})")
    if not axes:
        return ctx.expr(0)
    return ctx.call("squeeze", ctx.expr(0), axis=tuple(sorted(axes)))


def _unsqueeze(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    axes = axes_of(ctx, 13, 1)
    if axes is None:
        raise ctx.error("the axes to insert are not given")
    rank = len(shape) + len(axes)
    axes = sorted(normalize_axes(ctx, axes, rank))
    if len(axes) == 1:
        return ctx.call("expand_dims", ctx.expr(0), axis=axes[0], num_newaxis=1)
    dims = iter(shape)
    newshape = tuple(1 if k in axes else next(dims) for k in range(rank))
    return ctx.call("reshape", ctx.expr(0), newshape=newshape)


def _concat(ctx: NodeContext) -> Expr:
    ndim = ctx.ndim(0)
    axis = normalize_axes(ctx, [int(ctx.require("axis"))], ndim)[0]
    parts = [i for i in range(ctx.num_inputs) if ctx.has(i)]
    nonempty = [i for i in parts if math.prod(ctx.shape(i)) > 0] or parts[:1]
    if len(nonempty) == 1:
        return ctx.expr(nonempty[0])
    return ctx.call("concatenate", Tuple(tuple(ctx.expr(i) for i in nonempty)), axis=axis)


def _split(ctx: NodeContext) -> list[Expr]:
    shape = ctx.shape(0)
    axis = normalize_axes(ctx, [int(ctx.attr("axis", 0))], len(shape))[0]
    dim = shape[axis]
    if ctx.opset >= 13:  # noqa: PLR2004
        sizes = ctx.ints(1, "split") if ctx.has(1) else None
    else:
        sizes = [int(v) for v in ctx.attr("split")] if ctx.attr("split") is not None else None
    n = ctx.num_outputs
    if sizes is None:
        n = int(ctx.attr("num_outputs", n))
        if n < 1 or n != ctx.num_outputs:
            raise ctx.error(
                f"num_outputs={n}, but the node has {ctx.num_outputs} outputs; they must agree"
            )
        if dim % n == 0:
            sizes = [dim // n] * n
        else:
            chunk = -(-dim // n)
            sizes = [chunk] * (n - 1) + [dim - chunk * (n - 1)]
            if sizes[-1] < 0:
                raise ctx.error(f"cannot split extent {dim} into {n} outputs")
    if sum(sizes) != dim or any(s < 0 for s in sizes):
        raise ctx.error(f"split sizes {sizes} do not add up to the axis extent {dim}")
    if len(sizes) == 1:
        return [ctx.expr(0)]
    indices = tuple(int(v) for v in np.cumsum(sizes)[:-1])
    out = ctx.call("split", ctx.expr(0), indices_or_sections=indices, axis=axis)
    return [ctx.item(out, i) for i in range(len(sizes))]


def _slice(ctx: NodeContext) -> Expr:
    ndim = ctx.ndim(0)
    if ctx.opset < 10:  # noqa: PLR2004
        starts = [int(v) for v in ctx.require("starts")]
        ends = [int(v) for v in ctx.require("ends")]
        axes = ctx.attr("axes")
        steps = None
    else:
        starts, ends = ctx.ints(1, "starts"), ctx.ints(2, "ends")
        axes = ctx.ints(3, "axes") if ctx.has(3) else None
        steps = ctx.ints(4, "steps") if ctx.has(4) else None
    axes = list(range(len(starts))) if axes is None else [int(a) for a in axes]
    steps = [1] * len(starts) if steps is None else steps
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise ctx.error(
            f"starts {starts}, ends {ends}, axes {axes}, steps {steps} differ in length"
        )
    if 0 in steps:
        raise ctx.error(f"steps {steps} include 0")
    return ctx.call(
        "strided_slice",
        ctx.expr(0),
        begin=tuple(starts),
        end=tuple(ends),
        strides=tuple(steps),
        axes=tuple(normalize_axes(ctx, axes, ndim)),
    )


def _gather(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    axis = normalize_axes(ctx, [int(ctx.attr("axis", 0))], len(shape))[0]
    dim = shape[axis]
    try:
        idx = ctx.value(1, "indices")
    except DynamicValueError:  # computed at run time: wrap negative indices there
        return ctx.call("take", ctx.expr(0), ctx.expr(1), axis=axis, mode="wrap")
    if idx.size and (idx.min() < -dim or idx.max() >= dim):
        raise ctx.error(f"indices {idx.tolist()} out of range for axis {axis} of extent {dim}")
    fixed = np.where(idx < 0, idx + dim, idx).astype(idx.dtype)
    return ctx.call("take", ctx.expr(0), ctx.const(fixed), axis=axis, mode="fast")


def _pad(ctx: NodeContext) -> Expr:
    ndim = ctx.ndim(0)
    dtype = ctx.dtype(0)
    mode = ctx.attr("mode", "constant")
    if mode not in ("constant", "reflect", "edge", "wrap"):
        raise ctx.error(f"mode {mode!r} is not one of constant, reflect, edge, wrap")
    if ctx.opset < 11:  # noqa: PLR2004
        pads = [int(v) for v in (ctx.attr("pads") or ctx.require("paddings"))]
        value: Any = float(ctx.attr("value", 0.0))
        axes = list(range(ndim))
    else:
        pads = ctx.ints(1, "pads")
        given = ctx.optional_value(2, "constant_value")
        value = 0 if given is None else given.reshape(-1)[0].item()
        axes = ctx.ints(3, "axes") if ctx.has(3) else list(range(ndim))
    axes = normalize_axes(ctx, axes, ndim)
    if len(pads) != 2 * len(axes):
        raise ctx.error(f"pads {pads} should hold 2 values for each of the {len(axes)} axes")
    before, after = [0] * ndim, [0] * ndim
    for k, a in enumerate(axes):
        before[a], after[a] = pads[k], pads[k + len(axes)]
    x = ctx.expr(0)
    if any(p < 0 for p in before + after):  # negative pads crop
        shape = ctx.shape(0)
        x = ctx.call(
            "strided_slice",
            x,
            begin=tuple(-min(b, 0) for b in before),
            end=tuple(d + min(a, 0) for d, a in zip(shape, after, strict=True)),
            strides=(1,) * ndim,
        )
        before, after = [max(b, 0) for b in before], [max(a, 0) for a in after]
    if not any(before + after):
        return x
    if np.issubdtype(np.dtype(dtype), np.integer):
        value = int(value)
    elif dtype == "bool":
        value = bool(value)
    else:
        value = float(value)
    width = tuple(zip(before, after, strict=True))
    return ctx.call("nn.pad", x, pad_width=width, pad_value=value, pad_mode=mode)


def _expand(ctx: NodeContext) -> Expr:
    shape, have = ctx.ints(1, "shape"), ctx.shape(0)
    if any(d < 0 for d in shape):
        raise ctx.error(f"shape {shape} has a negative dimension")
    rank = max(len(have), len(shape))
    out = []
    for a, b in zip(
        (1,) * (rank - len(have)) + have, (1,) * (rank - len(shape)) + tuple(shape), strict=True
    ):
        if a != b and 1 not in (a, b):
            raise ctx.error(f"cannot broadcast {list(have)} to {shape}")
        out.append(a if b == 1 else b)
    if tuple(out) == have:
        return ctx.expr(0)
    return ctx.call("broadcast_to", ctx.expr(0), shape=tuple(out))


def _tile(ctx: NodeContext) -> Expr:
    reps = ctx.ints(1, "repeats")
    if len(reps) != ctx.ndim(0):
        raise ctx.error(f"repeats {reps} should have one value per input axis ({ctx.ndim(0)})")
    return ctx.call("tile", ctx.expr(0), reps=tuple(reps))


def _constant_of_shape(ctx: NodeContext) -> Expr:
    shape = ctx.ints(0, "shape")
    fill = ctx.attr("value")
    fill = np.zeros(1, "float32") if fill is None else np.asarray(fill).reshape(-1)
    if fill.size != 1:
        raise ctx.error(f"the value attribute has {fill.size} elements, expected one")
    ctx.check_constant(shape, str(fill.dtype), "the filled tensor")
    return ctx.const(np.full(shape, fill[0], dtype=fill.dtype))


def _constant(ctx: NodeContext) -> Expr:
    for key in ("sparse_value", "value_string", "value_strings"):
        if key in ctx.attrs:
            raise ctx.error(f"Constant with {key} is not supported")
    if "value" in ctx.attrs:
        return ctx.const(np.asarray(ctx.attrs["value"]))
    table = {
        "value_float": "float32",
        "value_floats": "float32",
        "value_int": "int64",
        "value_ints": "int64",
    }
    for key, dtype in table.items():
        if key in ctx.attrs:
            return ctx.const(np.asarray(ctx.attrs[key], dtype=dtype))
    raise ctx.error("the node has no value attribute")


def _range_count(ctx: NodeContext, start: Any, limit: Any, delta: Any) -> int:
    """``max(ceil((limit - start) / delta), 0)``, exact for integers."""
    if delta == 0:
        raise ctx.error(
            f"delta is 0 (start {start}, limit {limit}): the range never reaches its limit; "
            "delta must be nonzero"
        )
    if isinstance(start, int):
        return max(int(-((start - limit) // delta)), 0)
    quotient: float = (limit - start) / delta
    if not math.isfinite(quotient):
        raise ctx.error(
            f"start {start}, limit {limit}, delta {delta} give {quotient} elements; expected "
            "finite values and a finite count"
        )
    return max(math.ceil(quotient), 0)


def _range(ctx: NodeContext) -> Expr:
    start, limit, delta = (ctx.value(i, n) for i, n in enumerate(("start", "limit", "delta")))
    for name, v in (("start", start), ("limit", limit), ("delta", delta)):
        if v.size != 1:
            raise ctx.error(f"{name} has shape {list(v.shape)}, expected a scalar")
    dtype = start.dtype
    first, last, step = (v.reshape(-1)[0].item() for v in (start, limit, delta))
    count = _range_count(ctx, first, last, step)
    ctx.check_constant([count], str(dtype), "the range")
    return ctx.const((start + delta * np.arange(count)).astype(dtype))


def _depth_to_space(ctx: NodeContext) -> Expr:
    n, c, h, w = ctx.shape(0)
    b = int(ctx.require("blocksize"))
    if c % (b * b):
        raise ctx.error(f"channels {c} are not a multiple of blocksize**2 = {b * b}")
    if ctx.attr("mode", "DCR") == "CRD":
        inner: tuple[int, ...] = (n, c // (b * b), b, b, h, w)
        perm: tuple[int, ...] = (0, 1, 4, 2, 5, 3)
    else:
        inner, perm = (n, b, b, c // (b * b), h, w), (0, 3, 4, 1, 5, 2)
    x = ctx.call("reshape", ctx.expr(0), newshape=inner)
    x = ctx.call("transpose", x, axes=perm)
    return ctx.call("reshape", x, newshape=(n, c // (b * b), h * b, w * b))


def _space_to_depth(ctx: NodeContext) -> Expr:
    n, c, h, w = ctx.shape(0)
    b = int(ctx.require("blocksize"))
    if h % b or w % b:
        raise ctx.error(f"height {h} and width {w} must be multiples of blocksize {b}")
    x = ctx.call("reshape", ctx.expr(0), newshape=(n, c, h // b, b, w // b, b))
    perm = (0, 1, 3, 5, 2, 4) if ctx.attr("mode", "DCR") == "CRD" else (0, 3, 5, 1, 2, 4)
    x = ctx.call("transpose", x, axes=perm)
    return ctx.call("reshape", x, newshape=(n, c * b * b, h // b, w // b))


TENSOR_CONVERTERS: ConverterTable = {
    "Shape": (1, _shape),
    "Size": (1, _size),
    "Reshape": (1, _reshape),
    "Flatten": (1, _flatten),
    "Transpose": (1, _transpose),
    "Squeeze": (1, _squeeze),
    "Unsqueeze": (1, _unsqueeze),
    "Concat": (1, _concat),
    "Split": (1, _split),
    "Slice": (1, _slice),
    "Gather": (1, _gather),
    "Pad": (1, _pad),
    "Expand": (8, _expand),
    "Tile": (6, _tile),
    "ConstantOfShape": (9, _constant_of_shape),
    "Constant": (1, _constant),
    "Range": (11, _range),
    "DepthToSpace": (1, _depth_to_space),
    "SpaceToDepth": (1, _space_to_depth),
}
