"""Converters of ONNX's sampling grids: ``GridSample`` (2-d and 3-d; nearest, linear, cubic;
zeros, border and reflection padding; ``align_corners``) as ``image.grid_sample`` in ONNX's
convention, and ``AffineGrid`` (2-d and 3-d) as a product of ``theta`` and the constant grid
of output points.
"""

from __future__ import annotations

import math

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["GRID_CONVERTERS"]

_METHODS = {
    "linear": "bilinear",
    "bilinear": "bilinear",
    "nearest": "nearest",
    "cubic": "bicubic",
    "bicubic": "bicubic",
}
_PADDINGS = ("zeros", "border", "reflection")


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _grid_sample(ctx: NodeContext) -> Expr:
    default = "bilinear" if ctx.opset < 20 else "linear"  # noqa: PLR2004
    mode = _text(ctx.attr("mode", default))
    padding = _text(ctx.attr("padding_mode", "zeros"))
    if mode not in _METHODS:
        raise ctx.error(f"mode {mode!r} is not one of {', '.join(_METHODS)}")
    if padding not in _PADDINGS:
        raise ctx.error(f"padding_mode {padding!r} is not one of {', '.join(_PADDINGS)}")
    shape, gshape = ctx.shape(0), ctx.shape(1)
    nsp = len(shape) - 2
    if nsp not in (2, 3):
        raise ctx.error(f"X has shape {list(shape)}; expected 4-d (N, C, H, W) or 5-d data")
    if len(gshape) != nsp + 2 or gshape[0] != shape[0] or gshape[-1] != nsp:
        raise ctx.error(
            f"grid has shape {list(gshape)}; expected [{shape[0]}, ..., {nsp}] ({nsp} output "
            f"extents then {nsp} coordinates) for X of shape {list(shape)}"
        )
    if not ctx.dtype(0).startswith("float"):
        raise ctx.error(f"X has element type {ctx.dtype(0)}; expected a float type")
    grid = ctx.call("transpose", ctx.expr(1), axes=(0, nsp + 1, *range(1, nsp + 1)))
    return ctx.call(
        "image.grid_sample",
        ctx.expr(0),
        grid,
        method=_METHODS[mode],
        layout="NCHW" if nsp == 2 else "NCDHW",  # noqa: PLR2004
        padding_mode=padding,
        align_corners=bool(ctx.attr("align_corners", 0)),
        convention="onnx",
    )


def _points(extent: int, align_corners: bool) -> np.ndarray:
    """The normalized coordinates of ``extent`` output points along one axis."""
    if align_corners:
        return np.linspace(-1.0, 1.0, extent) if extent > 1 else np.zeros(1)
    return (2.0 * np.arange(extent) + 1.0) / extent - 1.0


def _affine_grid(ctx: NodeContext) -> Expr:
    theta = ctx.shape(0)
    size = ctx.ints(1, "size")
    nsp = len(size) - 2
    if nsp not in (2, 3) or tuple(theta) != (size[0], nsp, nsp + 1):
        raise ctx.error(
            f"theta has shape {list(theta)} and size is {size}; expected theta [N, 2, 3] with "
            "size (N, C, H, W), or theta [N, 3, 4] with size (N, C, D, H, W)"
        )
    spatial = size[2:]
    if any(n < 1 for n in spatial):
        raise ctx.error(f"size {size} has a spatial extent below 1")
    ctx.check_constant([math.prod(spatial), nsp + 1], ctx.dtype(0), "the grid of output points")
    align = bool(ctx.attr("align_corners", 0))
    axes = np.meshgrid(*[_points(n, align) for n in spatial], indexing="ij")
    # Each point as (x, y[, z], 1): x runs along the last axis.
    base = np.stack([*[a.reshape(-1) for a in reversed(axes)], np.ones(math.prod(spatial))], 1)
    n = size[0]
    weight = ctx.call("reshape", ctx.expr(0), newshape=(n * nsp, nsp + 1))
    flat = ctx.call("nn.dense", ctx.const(base.astype(ctx.dtype(0))), weight)  # [P, N * nsp]
    per_batch = ctx.call("reshape", flat, newshape=(math.prod(spatial), n, nsp))
    out = ctx.call("transpose", per_batch, axes=(1, 0, 2))
    return ctx.call("reshape", out, newshape=(n, *spatial, nsp))


GRID_CONVERTERS: ConverterTable = {
    "GridSample": (16, _grid_sample),
    "AffineGrid": (20, _affine_grid),
}
