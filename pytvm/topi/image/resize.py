"""Resizing images (TVM's ``topi.image``): ``resize1d``, ``resize2d``, ``resize3d`` in any
layout whose spatial axes are ``D``/``H``/``W`` (``NCW``, ``NHWC``, ``NCHW16c``, ``NDHWC``...),
and ``crop_and_resize``. The coordinate modes and interpolation are :mod:`.resize_core`'s.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import ExprLike, PrimExpr, Var, const, convert
from ...tir.op import any as _any
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_int, op_error
from .resize_core import COORDINATE_MODES, ROUNDING_METHODS, AxisMap, interpolate, source_coord

__all__ = ["crop_and_resize", "resize1d", "resize2d", "resize3d"]

_METHODS = {
    "nearest_neighbor": "nearest",
    "nearest": "nearest",
    "linear": "linear",
    "bilinear": "linear",
    "trilinear": "linear",
    "cubic": "cubic",
    "bicubic": "cubic",
}
_SPATIAL = {1: "W", 2: "HW", 3: "DHW"}


def _axes(op: str, data: Tensor, layout: str, ndim: int) -> tuple[list[int], int]:
    """Positions of the spatial axes and of the batch axis ``N``."""
    letters = [ch for ch in layout if ch.isalpha()]
    if len(letters) != data.ndim or "N" not in letters:
        raise op_error(op, "layout", layout, f"one letter per axis of the {data.ndim}-d input")
    axes = []
    for name in _SPATIAL[ndim]:
        if letters.count(name) != 1 or name.lower() in letters:
            raise op_error(op, "layout", layout, f"one unsplit {name} axis")
        axes.append(letters.index(name))
    return axes, letters.index("N")


def _check(op: str, method: str, mode: str, rounding: str) -> str:
    if method not in _METHODS:
        raise op_error(op, "method", method, f"one of {sorted(_METHODS)}")
    if mode not in COORDINATE_MODES:
        raise op_error(op, "coordinate_transformation_mode", mode, f"one of {COORDINATE_MODES}")
    if rounding and rounding not in ROUNDING_METHODS:
        raise op_error(op, "rounding_method", rounding, f"one of {ROUNDING_METHODS}")
    kind = _METHODS[method]
    if rounding:
        return rounding
    if kind == "nearest" and mode in ("align_corners", "tf_half_pixel_for_nn"):
        return "round"
    return "floor" if kind == "nearest" else "round"


def _resize_nd(
    op: str,
    data: Tensor,
    roi: Any,
    size: Sequence[ExprLike],
    layout: str,
    method: str,
    mode: str,
    rounding_method: str,
    alpha: float,
    exclude: int,
    extrapolation_value: float | None,
    out_dtype: str | None,
    output_shape: Sequence[ExprLike] | None,
    scales: Sequence[float] | None,
    ndim: int,
) -> Tensor:
    rounding = _check(op, method, mode, rounding_method)
    kind = _METHODS[method]
    axes, _ = _axes(op, data, layout, ndim)
    if output_shape is not None:
        shape = [convert(d) for d in output_shape]
        targets = [shape[a] for a in axes]
    else:
        if len(size) != ndim:
            raise op_error(op, "size", list(size), f"{ndim} output extents")
        targets = [convert(s) for s in size]
        shape = list(data.shape)
        for a, t in zip(axes, targets, strict=True):
            shape[a] = t
    for t in targets:
        v = const_int(t)
        if v is not None and v < 1:
            raise op_error(op, "size", list(size), "positive extents")
    if scales is not None and (
        len(scales) != ndim or any(not isinstance(v, (int, float)) or v <= 0 for v in scales)
    ):
        raise op_error(op, "scales", scales, f"{ndim} positive numbers")
    rois = list(roi) if roi is not None else [0.0] * ndim + [1.0] * ndim
    maps = [
        AxisMap(
            data.shape[a],
            targets[i],
            mode,
            rois[i],
            rois[i + ndim],
            float(scales[i]) if scales is not None else None,
        )
        for i, a in enumerate(axes)
    ]
    int_div = [
        m.integer_ratio() if (kind, mode, rounding) == ("nearest", "asymmetric", "floor") else None
        for m in maps
    ]
    dtype = out_dtype or data.dtype
    sizes = [data.shape[a] for a in axes]

    def body(*idx: Var) -> PrimExpr:
        coords = [source_coord(idx[a], m) for a, m in zip(axes, maps, strict=True)]

        def read(at: Sequence[PrimExpr]) -> PrimExpr:
            full: list[PrimExpr] = list(idx)
            for a, v in zip(axes, at, strict=True):
                full[a] = v
            return data(*full)

        value = interpolate(
            read, coords, sizes, kind, rounding, alpha, bool(exclude), int_div,
            [idx[a] for a in axes],
        )  # fmt: skip
        if mode == "tf_crop_and_resize" and extrapolation_value is not None:
            outside = _any(
                *[c < const(0.0, "float32") for c in coords],
                *[
                    c > convert(s).astype("float32") - 1.0
                    for c, s in zip(coords, sizes, strict=True)
                ],
            )
            value = if_then_else(outside, const(extrapolation_value, "float32"), value)
        return value.astype(dtype)

    return compute(shape, body, name="resize", tag=tag.INJECTIVE)


def resize1d(
    data: Tensor,
    roi: Any,
    size: Sequence[ExprLike],
    layout: str = "NCW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Sequence[ExprLike] | None = None,
) -> Tensor:
    """``data`` resized along W to ``size = (out_w,)``; see :func:`resize2d`."""
    return _resize_nd(
        "resize1d", data, roi, size, layout, method, coordinate_transformation_mode,
        rounding_method, bicubic_alpha, bicubic_exclude, extrapolation_value, out_dtype,
        output_shape, None, 1,
    )  # fmt: skip


def resize2d(
    data: Tensor,
    roi: Any,
    size: Sequence[ExprLike],
    layout: str = "NCHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Sequence[ExprLike] | None = None,
    scales: Sequence[float] | None = None,
) -> Tensor:
    """``data`` resized along H and W to ``size = (out_h, out_w)``.

    ``method`` is ``"nearest_neighbor"``, ``"linear"`` or ``"cubic"`` (``bicubic_alpha``,
    and ``bicubic_exclude`` to renormalize the weights of taps outside the image).
    ``rounding_method`` defaults to ``"round"`` for ``align_corners`` and
    ``tf_half_pixel_for_nn``, else ``"floor"``, as in TVM. ``roi`` is
    ``(start_h, start_w, end_h, end_w)`` for ``tf_crop_and_resize``, whose points outside the
    image take ``extrapolation_value``. ``scales`` ``(scale_h, scale_w)``, when given, map
    coordinates by those factors instead of ``size / input size`` (ONNX ``Resize`` given
    ``scales`` rather than ``sizes``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 4, 4), name="x")
    >>> y = topi.image.resize2d(x, None, (8, 6), method="nearest_neighbor")
    >>> [str(d) for d in y.shape]
    ['1', '3', '8', '6']
    """
    return _resize_nd(
        "resize2d", data, roi, size, layout, method, coordinate_transformation_mode,
        rounding_method, bicubic_alpha, bicubic_exclude, extrapolation_value, out_dtype,
        output_shape, scales, 2,
    )  # fmt: skip


def resize3d(
    data: Tensor,
    roi: Any,
    size: Sequence[ExprLike],
    layout: str = "NCDHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.5,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Sequence[ExprLike] | None = None,
) -> Tensor:
    """``data`` resized along D, H and W to ``size = (out_d, out_h, out_w)``; see
    :func:`resize2d`.
    """
    return _resize_nd(
        "resize3d", data, roi, size, layout, method, coordinate_transformation_mode,
        rounding_method, bicubic_alpha, bicubic_exclude, extrapolation_value, out_dtype,
        output_shape, None, 3,
    )  # fmt: skip


def crop_and_resize(
    data: Tensor,
    boxes: Tensor,
    box_indices: Tensor,
    crop_size: Sequence[int],
    layout: str = "NCHW",
    method: str = "bilinear",
    extrapolation_value: float | None = None,
    out_dtype: str | None = None,
) -> Tensor:
    """For each box ``[y1, x1, y2, x2]`` (fractions of the image) of ``boxes [B, 4]``, the crop
    of image ``box_indices[b]`` resized to ``crop_size`` (``"bilinear"`` or
    ``"nearest_neighbor"``, which rounds); points outside the image take
    ``extrapolation_value`` when given, else the nearest edge.
    """
    op = "crop_and_resize"
    kind = _METHODS.get(method)
    if kind not in ("linear", "nearest"):
        raise op_error(op, "method", method, "bilinear or nearest_neighbor")
    (ha, wa), na = _axes(op, data, layout, 2)
    th, tw = (int(v) for v in crop_size)
    shape = list(data.shape)
    shape[na], shape[ha], shape[wa] = boxes.shape[0], const(th), const(tw)
    dtype = out_dtype or data.dtype
    h, w = data.shape[ha], data.shape[wa]

    def body(*idx: Var) -> PrimExpr:
        b = idx[na]
        coords = []
        for k, (size, target, o) in enumerate(((h, th, idx[ha]), (w, tw, idx[wa]))):
            start, end = boxes(b, k).astype("float32"), boxes(b, k + 2).astype("float32")
            last = convert(size).astype("float32") - 1.0
            if target > 1:
                step = (end - start) * last / float(target - 1)
                coords.append(start * last + step * o.astype("float32"))
            else:  # one output point: the box's centre
                coords.append((start + end) * last * 0.5)

        def read(at: Sequence[PrimExpr]) -> PrimExpr:
            full: list[PrimExpr] = list(idx)
            full[na], full[ha], full[wa] = box_indices(b), at[0], at[1]
            return data(*full)

        value = interpolate(read, coords, [h, w], kind, "round")
        if extrapolation_value is not None:
            outside = _any(
                *[c < const(0.0, "float32") for c in coords],
                coords[0] > convert(h).astype("float32") - 1.0,
                coords[1] > convert(w).astype("float32") - 1.0,
            )
            value = if_then_else(outside, const(float(extrapolation_value), "float32"), value)
        return value.astype(dtype)

    return compute(shape, body, name="crop_and_resize", tag=tag.INJECTIVE)
