"""Converter of ONNX's ``TopK``: the ``K`` largest (``largest=0``: smallest) elements along
``axis`` and their int64 indices, in order, the lower index first among equal elements.
``K`` (an attribute before opset 10, an input after) decides the output shape, so it must be
known at import time.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_tensor import normalize_axes

__all__ = ["SORTING_CONVERTERS"]


def _topk(ctx: NodeContext) -> list[Expr]:
    shape = ctx.shape(0)
    if not shape:
        raise ctx.error("the input is 0-d; TopK needs at least one axis")
    axis = normalize_axes(ctx, [int(ctx.attr("axis", -1))], len(shape))[0]
    if ctx.opset < 10:  # noqa: PLR2004
        k = int(ctx.require("k"))
    else:
        ks = ctx.ints(1, "K")
        if len(ks) != 1:
            raise ctx.error(f"K must hold one value, got {ks}")
        k = ks[0]
    if not 0 <= k <= shape[axis]:
        raise ctx.error(f"K={k} is outside 0..{shape[axis]} (the extent of axis {axis})")
    if k == 0:  # empty outputs
        empty = tuple(0 if d == axis else n for d, n in enumerate(shape))
        return [ctx.const(np.zeros(empty, ctx.dtype(0))), ctx.const(np.zeros(empty, "int64"))]
    out = ctx.call(
        "topk",
        ctx.expr(0),
        k=k,
        axis=axis,
        ret_type="both",
        is_ascend=not bool(ctx.attr("largest", 1)),
        dtype="int64",
    )
    return [ctx.item(out, 0), ctx.item(out, 1)]


SORTING_CONVERTERS: ConverterTable = {"TopK": (1, _topk)}
