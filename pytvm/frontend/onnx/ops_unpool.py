"""Converter of ONNX's ``MaxUnpool``: each value of ``X`` written at its flat index ``I`` (as
``MaxPool`` returns them, over the whole output tensor) into zeros of the output shape: the
given ``output_shape``, else ``(in - 1) * stride + kernel - pad_begin - pad_end`` per axis.
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["UNPOOL_CONVERTERS"]


def _output_shape(ctx: NodeContext, shape: tuple[int, ...]) -> list[int]:
    spatial = len(shape) - 2
    kernel = [int(k) for k in ctx.require("kernel_shape")]
    strides = [int(s) for s in ctx.attr("strides", [1] * spatial)]
    pads = [int(p) for p in ctx.attr("pads", [0] * (2 * spatial))]
    if len(kernel) != spatial or len(strides) != spatial or len(pads) != 2 * spatial:
        raise ctx.error(
            f"kernel_shape {kernel}, strides {strides} and pads {pads} do not fit the "
            f"{spatial} spatial axes of input shape {list(shape)}"
        )
    out = list(shape[:2])
    for d in range(spatial):
        out.append((shape[2 + d] - 1) * strides[d] + kernel[d] - pads[d] - pads[spatial + d])
    if ctx.has(2):
        given = ctx.ints(2, "output_shape")
        if len(given) != len(shape) or given[:2] != out[:2]:
            raise ctx.error(f"output_shape {given} does not fit input shape {list(shape)}")
        return given
    return out


def _max_unpool(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    if len(shape) < 3 or ctx.shape(1) != shape:  # noqa: PLR2004
        raise ctx.error(
            f"X has shape {list(shape)} and I {list(ctx.shape(1))}; expected one shape of rank >= 3"
        )
    out_shape = _output_shape(ctx, shape)
    if any(d < 1 for d in out_shape):
        raise ctx.error(f"the output shape {out_shape} has an empty axis")
    total = math.prod(out_shape)
    ctx.check_constant([total], ctx.dtype(0), "the zeros of the output")
    zeros = ctx.const(np.zeros((total,), dtype=ctx.dtype(0)))
    flat = (math.prod(shape),)
    values = ctx.call("reshape", ctx.expr(0), newshape=flat)
    where = ctx.call("reshape", ctx.expr(1), newshape=flat)
    out = ctx.call("scatter_elements", zeros, where, values, axis=0, reduction="update")
    return ctx.call("reshape", out, newshape=tuple(out_shape))


UNPOOL_CONVERTERS: ConverterTable = {"MaxUnpool": (9, _max_unpool)}
