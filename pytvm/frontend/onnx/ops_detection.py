"""Converters of ONNX's detection operators: ``RoiAlign`` (opsets 10 and 16: ``avg``/``max``,
``half_pixel``/``output_half_pixel`` coordinates, adaptive or fixed sampling).
"""

from __future__ import annotations

from ...graph import Expr, Tuple
from .node import ConverterTable, NodeContext

__all__ = ["DETECTION_CONVERTERS"]


def _text(value: object) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _roi_align(ctx: NodeContext) -> Expr:
    shape, rois = ctx.shape(0), ctx.shape(1)
    if len(shape) != 4 or len(rois) != 2 or rois[1] != 4:  # noqa: PLR2004
        raise ctx.error(f"X {list(shape)} and rois {list(rois)}: expected [N, C, H, W] and [R, 4]")
    if ctx.shape(2) != (rois[0],):
        raise ctx.error(f"batch_indices has shape {list(ctx.shape(2))}; expected [{rois[0]}]")
    mode = _text(ctx.attr("mode", "avg"))
    if mode not in ("avg", "max"):
        raise ctx.error(f"mode {mode!r} is not 'avg' or 'max'")
    default = "half_pixel" if ctx.opset >= 16 else "output_half_pixel"  # noqa: PLR2004
    coords = _text(ctx.attr("coordinate_transformation_mode", default))
    if coords not in ("half_pixel", "output_half_pixel"):
        raise ctx.error(f"coordinate_transformation_mode {coords!r} is not supported")
    dtype = ctx.dtype(0)
    index = ctx.call("cast", ctx.expr(2), dtype=dtype)
    index = ctx.call("reshape", index, newshape=(rois[0], 1))
    boxes = ctx.expr(1) if ctx.dtype(1) == dtype else ctx.call("cast", ctx.expr(1), dtype=dtype)
    table = ctx.call("concatenate", Tuple((index, boxes)), axis=1)
    return ctx.call(
        "vision.roi_align",
        ctx.expr(0),
        table,
        pooled_size=(int(ctx.attr("output_height", 1)), int(ctx.attr("output_width", 1))),
        spatial_scale=float(ctx.attr("spatial_scale", 1.0)),
        sample_ratio=int(ctx.attr("sampling_ratio", 0)),
        mode=mode,
        layout="NCHW",
        aligned=coords == "half_pixel",
    )


DETECTION_CONVERTERS: ConverterTable = {"RoiAlign": (10, _roi_align)}
