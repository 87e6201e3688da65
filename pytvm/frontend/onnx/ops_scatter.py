"""Converters of ONNX's scatter operators: ``Scatter`` (opset 9, deprecated), ``ScatterElements``
and ``ScatterND``, with their ``reduction`` attribute (``none``, ``add``, ``mul``, ``min``,
``max``); negative indices count from the end of their axis.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_tensor import normalize_axes

__all__ = ["SCATTER_CONVERTERS"]

#: ONNX's ``reduction`` to the graph operators' name of it (``update``, which ONNX Runtime and
#: TVM accept, is ``none``).
_REDUCTIONS = {
    "none": "update",
    "update": "update",
    "add": "add",
    "mul": "mul",
    "min": "min",
    "max": "max",
}


def _reduction(ctx: NodeContext) -> str:
    name = ctx.attr("reduction", "none")
    name = name.decode() if isinstance(name, bytes) else str(name)
    if name not in _REDUCTIONS:
        raise ctx.error(f"reduction {name!r} is not one of {sorted(_REDUCTIONS)}")
    return _REDUCTIONS[name]


def _check_types(ctx: NodeContext) -> None:
    if ctx.dtype(0) != ctx.dtype(2):
        raise ctx.error(f"updates have type {ctx.dtype(2)}, data {ctx.dtype(0)}; they must match")
    if ctx.dtype(1) not in ("int32", "int64"):
        raise ctx.error(f"indices have type {ctx.dtype(1)}; expected int32 or int64")


def _scatter_elements(ctx: NodeContext) -> Expr:
    _check_types(ctx)
    rank = ctx.ndim(0)
    if ctx.ndim(1) != rank or ctx.shape(1) != ctx.shape(2):
        raise ctx.error(
            f"indices {list(ctx.shape(1))} and updates {list(ctx.shape(2))} must have one "
            f"shape, of the rank of data {list(ctx.shape(0))}"
        )
    axis = normalize_axes(ctx, [int(ctx.attr("axis", 0))], rank)[0]
    return ctx.call(
        "scatter_elements",
        ctx.expr(0),
        ctx.expr(1),
        ctx.expr(2),
        axis=axis,
        reduction=_reduction(ctx),
    )


def _scatter_nd(ctx: NodeContext) -> Expr:
    """ONNX's indices ``[Y..., M]`` moved to the graph operator's ``[M, Y...]``, negative
    entries wrapped by the extent of the axis they index.
    """
    _check_types(ctx)
    data_shape, ind_shape = ctx.shape(0), ctx.shape(1)
    if not ind_shape or not 1 <= ind_shape[-1] <= len(data_shape):
        raise ctx.error(
            f"indices have shape {list(ind_shape)}; the last dimension must be 1.."
            f"{len(data_shape)} (the rank of data)"
        )
    m = ind_shape[-1]
    expected = (*ind_shape[:-1], *data_shape[m:])
    if ctx.shape(2) != expected:
        raise ctx.error(f"updates have shape {list(ctx.shape(2))}; expected {list(expected)}")
    indices, updates = ctx.expr(1), ctx.expr(2)
    if len(ind_shape) == 1:  # one update: a batch of one
        indices = ctx.call("expand_dims", indices, axis=0)
        updates = ctx.call("expand_dims", updates, axis=0)
        ind_shape = (1, m)
    extents = np.array(data_shape[:m], dtype=ctx.dtype(1))
    bound = ctx.const(extents.reshape((1,) * (len(ind_shape) - 1) + (m,)))
    zero = ctx.const(np.zeros((), dtype=ctx.dtype(1)))
    indices = ctx.call(
        "where", ctx.call("less", indices, zero), ctx.call("add", indices, bound), indices
    )
    order = (len(ind_shape) - 1, *range(len(ind_shape) - 1))
    indices = ctx.call("transpose", indices, axes=order)
    return ctx.call("scatter_nd", ctx.expr(0), indices, updates, mode=_reduction(ctx))


SCATTER_CONVERTERS: ConverterTable = {
    "Scatter": (9, _scatter_elements),
    "ScatterElements": (11, _scatter_elements),
    "ScatterND": (11, _scatter_nd),
}
