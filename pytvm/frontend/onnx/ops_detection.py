"""Converters of ONNX's detection operators: ``RoiAlign`` (opsets 10 and 16: ``avg``/``max``,
``half_pixel``/``output_half_pixel`` coordinates, adaptive or fixed sampling) and
``NonMaxSuppression``.

``NonMaxSuppression``'s output shape (how many boxes it selects) depends on the values of the
boxes and scores, and pytvm's graphs have static shapes: its inputs must be known at import
time (constants, or values the caller binds), and the selection is computed then, as ONNX
Runtime computes it (greedy by descending score, ties by the lower index; a box is dropped when
its IoU with a kept box of its class exceeds ``iou_threshold``; only scores above
``score_threshold`` take part).
"""

from __future__ import annotations

import numpy as np

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


def _corners(boxes: np.ndarray, center_point_box: bool) -> np.ndarray:
    """``[..., 4]`` boxes as ``(y_min, x_min, y_max, x_max)`` in float32."""
    b = boxes.astype(np.float32)
    if center_point_box:  # (x_center, y_center, width, height)
        half_w, half_h = b[..., 2] / 2, b[..., 3] / 2
        return np.stack(
            [b[..., 1] - half_h, b[..., 0] - half_w, b[..., 1] + half_h, b[..., 0] + half_w], -1
        )
    y1, y2 = np.minimum(b[..., 0], b[..., 2]), np.maximum(b[..., 0], b[..., 2])
    x1, x2 = np.minimum(b[..., 1], b[..., 3]), np.maximum(b[..., 1], b[..., 3])
    return np.stack([y1, x1, y2, x2], -1)


def _overlaps(a: np.ndarray, b: np.ndarray, threshold: np.float32) -> bool:
    """Whether corner boxes ``a`` and ``b`` overlap by an IoU above ``threshold``."""
    inter_h = min(a[2], b[2]) - max(a[0], b[0])
    inter_w = min(a[3], b[3]) - max(a[1], b[1])
    if inter_h <= 0 or inter_w <= 0:
        return False
    inter = np.float32(inter_h * inter_w)
    area_a = np.float32((a[2] - a[0]) * (a[3] - a[1]))
    area_b = np.float32((b[2] - b[0]) * (b[3] - b[1]))
    union = np.float32(area_a + area_b - inter)
    if area_a <= 0 or area_b <= 0 or union <= 0:
        return False
    return bool(np.float32(inter / union) > threshold)


def non_max_suppression(
    boxes: np.ndarray,
    scores: np.ndarray,
    max_output_boxes_per_class: int,
    iou_threshold: float,
    score_threshold: float | None,
    center_point_box: bool,
) -> np.ndarray:
    """ONNX's ``NonMaxSuppression`` of ``boxes`` ``[B, N, 4]`` and ``scores`` ``[B, C, N]``:
    the ``[selected, 3]`` int64 rows ``(batch, class, box)``.
    """
    corners = _corners(boxes, center_point_box)
    threshold = np.float32(iou_threshold)
    rows: list[tuple[int, int, int]] = []
    for b in range(scores.shape[0]):
        for c in range(scores.shape[1]):
            s = scores[b, c].astype(np.float32)
            order = np.argsort(-s, kind="stable")
            if score_threshold is not None:
                order = order[s[order] > np.float32(score_threshold)]
            kept: list[int] = []
            for i in order:
                if len(kept) >= max_output_boxes_per_class:
                    break
                if not any(_overlaps(corners[b, k], corners[b, i], threshold) for k in kept):
                    kept.append(int(i))
            rows.extend((b, c, k) for k in kept)
    return np.array(rows, dtype=np.int64).reshape(len(rows), 3)


def _scalar(ctx: NodeContext, i: int, what: str) -> float | None:
    value = ctx.optional_value(i, what)
    if value is None:
        return None
    if value.size != 1:
        raise ctx.error(f"{what} must hold one value, got shape {list(value.shape)}")
    return float(value.reshape(-1)[0])


def _non_max_suppression(ctx: NodeContext) -> Expr:
    boxes_shape, scores_shape = ctx.shape(0), ctx.shape(1)
    if (
        len(boxes_shape) != 3  # noqa: PLR2004
        or boxes_shape[2] != 4  # noqa: PLR2004
        or len(scores_shape) != 3  # noqa: PLR2004
        or (scores_shape[0], scores_shape[2]) != boxes_shape[:2]
    ):
        raise ctx.error(
            f"boxes {list(boxes_shape)} and scores {list(scores_shape)}: expected [B, N, 4] "
            "and [B, C, N]"
        )
    max_out = _scalar(ctx, 2, "max_output_boxes_per_class")
    iou = _scalar(ctx, 3, "iou_threshold")
    score = _scalar(ctx, 4, "score_threshold")
    if iou is not None and not 0.0 <= iou <= 1.0:
        raise ctx.error(f"iou_threshold {iou} is outside [0, 1]")
    what = "{} (NonMaxSuppression's output shape depends on the boxes and scores)"
    boxes = ctx.value(0, what.format("boxes"))
    scores = ctx.value(1, what.format("scores"))
    limit = max(int(max_out), 0) if max_out is not None else 0
    count = scores_shape[0] * scores_shape[1] * min(limit, boxes_shape[1])
    ctx.check_constant([count, 3], "int64", "the selected indices")
    rows = non_max_suppression(
        boxes, scores, limit, iou or 0.0, score, bool(ctx.attr("center_point_box", 0))
    )
    return ctx.const(rows)


DETECTION_CONVERTERS: ConverterTable = {
    "RoiAlign": (10, _roi_align),
    "NonMaxSuppression": (10, _non_max_suppression),
}
