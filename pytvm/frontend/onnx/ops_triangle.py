"""Converter of ONNX's ``Trilu``: the upper or lower triangle of the last two axes from the
diagonal ``k`` (optional input, default 0) on; ``k`` may be a constant or computed at run time.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["TRIANGLE_CONVERTERS"]


def _trilu(ctx: NodeContext) -> Expr:
    shape = ctx.shape(0)
    if len(shape) < 2:  # noqa: PLR2004
        raise ctx.error(f"the input must be at least 2-d, got shape {list(shape)}")
    if ctx.has(1):
        if ctx.dtype(1) != "int64" or ctx.shape(1) not in ((), (1,)):
            raise ctx.error(
                f"k must be one int64, got {ctx.dtype(1)} of shape {list(ctx.shape(1))}"
            )
        k = ctx.call("reshape", ctx.expr(1), newshape=()) if ctx.shape(1) else ctx.expr(1)
    else:
        k = ctx.const(np.int64(0))
    return ctx.call("trilu", ctx.expr(0), k, upper=bool(ctx.attr("upper", 1)))


TRIANGLE_CONVERTERS: ConverterTable = {"Trilu": (14, _trilu)}
