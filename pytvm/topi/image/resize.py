"""Resizing images in NCHW (``topi.image.resize2d``): nearest and linear interpolation with
the coordinate transformations ONNX ``Resize`` defines.

An output coordinate ``x`` maps to an input coordinate by ``coordinate_transformation_mode``
(with ``in``/``out`` the extents): ``half_pixel``: ``(x + 0.5) * in / out - 0.5``;
``pytorch_half_pixel``: the same, or 0 when ``out == 1``; ``align_corners``:
``x * (in - 1) / (out - 1)``; ``asymmetric``: ``x * in / out``; ``tf_half_pixel_for_nn``:
``(x + 0.5) * in / out``; ``half_pixel_symmetric``: ``half_pixel`` shifted to keep the
image centred when ``out`` was rounded from a scale. Nearest picks a neighbour by
``rounding_method``; linear blends the two neighbours on each axis, clamped to the image.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ffi.errors import OpAttributeUnImplemented
from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var, const
from ...tir.op import ceil, floor, round
from ...tir.op import max as emax
from ...tir.op import min as emin
from .. import tag
from .._shape import const_int, op_error

__all__ = ["resize2d"]

COORDINATE_MODES = (
    "half_pixel",
    "pytorch_half_pixel",
    "align_corners",
    "asymmetric",
    "tf_half_pixel_for_nn",
    "half_pixel_symmetric",
)
ROUNDING_METHODS = ("round", "round_prefer_floor", "round_prefer_ceil", "floor", "ceil")
_METHODS = {"nearest_neighbor": "nearest", "nearest": "nearest", "linear": "linear"}
_METHODS["bilinear"] = "linear"
_NCHW = 4


def _source_coord(
    x: PrimExpr, size: int, out: int, mode: str, scale: float | None = None
) -> PrimExpr:
    """Input coordinate (float32) of output coordinate ``x``; ``scale`` (output over input
    extent) replaces ``out / size`` where a caller gave the scale rather than the size, as
    ONNX ``Resize`` does.
    """
    xf = x.astype("float32")
    ratio = const(1.0 / scale) if scale else const(float(size)) / const(float(out))
    if mode == "align_corners":
        span = size * scale - 1 if scale else out - 1  # ONNX: the unrounded resized length
        return xf * const((size - 1) / span) if out > 1 and span > 0 else const(0.0)
    if mode == "asymmetric":
        return xf * ratio
    if mode == "tf_half_pixel_for_nn":
        return (xf + const(0.5)) * ratio
    if mode == "pytorch_half_pixel" and out == 1:
        return const(0.0)
    if mode == "half_pixel_symmetric":
        adjust = out / ((scale or out / size) * size)
        offset = size / 2 * (1 - adjust)
        return const(offset) + (xf + const(0.5)) * ratio - const(0.5)
    return (xf + const(0.5)) * ratio - const(0.5)


def _nearest(v: PrimExpr, method: str) -> PrimExpr:
    if method == "round_prefer_floor":
        return ceil(v - const(0.5))
    if method == "round_prefer_ceil":
        return floor(v + const(0.5))
    if method == "floor":
        return floor(v)
    if method == "ceil":
        return ceil(v)
    return round(v)


def _clamp(i: PrimExpr, size: int) -> PrimExpr:
    return emin(emax(i, const(0)), const(size - 1))


def resize2d(
    data: Tensor,
    roi: Any,
    size: Sequence[int],
    layout: str = "NCHW",
    method: str = "linear",
    coordinate_transformation_mode: str = "half_pixel",
    rounding_method: str = "",
    bicubic_alpha: float = -0.75,
    bicubic_exclude: int = 0,
    extrapolation_value: float = 0.0,
    out_dtype: str | None = None,
    output_shape: Sequence[int] | None = None,
    scales: Sequence[float] | None = None,
) -> Tensor:
    """``data [N, C, H, W]`` resized to ``size = (out_h, out_w)``.

    ``method`` is ``"nearest_neighbor"`` (or ``"nearest"``) or ``"linear"``; ``roi``,
    ``bicubic_*`` and ``extrapolation_value`` are accepted for TVM compatibility (they apply
    to modes not supported here). ``rounding_method`` defaults to ``"round"`` for
    ``align_corners`` and ``tf_half_pixel_for_nn``, else ``"floor"``, as in TVM.
    ``scales`` ``(scale_h, scale_w)``, when given, map coordinates by those factors instead
    of ``size / input size`` (ONNX ``Resize`` given ``scales`` rather than ``sizes``).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 4, 4), name="x")
    >>> y = topi.image.resize2d(x, None, (8, 6), method="nearest_neighbor")
    >>> [str(d) for d in y.shape]
    ['1', '3', '8', '6']
    """
    op = "resize2d"
    if layout != "NCHW":
        raise op_error(op, "layout", layout, "'NCHW'")
    if method not in _METHODS:
        if method in ("cubic", "bicubic"):
            raise OpAttributeUnImplemented(f"resize2d: method {method!r} is not supported")
        raise op_error(op, "method", method, f"one of {sorted(_METHODS)}")
    if coordinate_transformation_mode not in COORDINATE_MODES:
        raise op_error(
            op, "coordinate_transformation_mode", coordinate_transformation_mode,
            f"one of {COORDINATE_MODES}",
        )  # fmt: skip
    if rounding_method and rounding_method not in ROUNDING_METHODS:
        raise op_error(op, "rounding_method", rounding_method, f"one of {ROUNDING_METHODS}")
    if data.ndim != _NCHW:
        raise op_error(op, "input rank", data.ndim, "4 (NCHW)")
    h, w = const_int(data.shape[2]), const_int(data.shape[3])
    if h is None or w is None:
        raise op_error(op, "input H/W", (str(data.shape[2]), str(data.shape[3])), "constants")
    out_hw = list(size) if output_shape is None else list(output_shape)[2:]
    if len(out_hw) != 2 or any(not isinstance(s, int) or s < 1 for s in out_hw):  # noqa: PLR2004
        raise op_error(op, "size", size, "two positive ints (out_h, out_w)")
    oh, ow = out_hw
    mode = coordinate_transformation_mode
    kind = _METHODS[method]
    dtype = out_dtype or data.dtype
    rounding = rounding_method or (
        "round" if mode in ("align_corners", "tf_half_pixel_for_nn") else "floor"
    )
    _ = (roi, bicubic_alpha, bicubic_exclude, extrapolation_value)

    if scales is not None and (
        len(scales) != 2 or any(not isinstance(v, (int, float)) or v <= 0 for v in scales)  # noqa: PLR2004
    ):
        raise op_error(op, "scales", scales, "two positive numbers (scale_h, scale_w)")
    scale_h, scale_w = (None, None) if scales is None else (float(scales[0]), float(scales[1]))

    def nearest(b: Var, c: Var, y: Var, x: Var) -> PrimExpr:
        iy = _nearest(_source_coord(y, h, oh, mode, scale_h), rounding).astype("int32")
        ix = _nearest(_source_coord(x, w, ow, mode, scale_w), rounding).astype("int32")
        return data(b, c, _clamp(iy, h), _clamp(ix, w)).astype(dtype)

    def linear(b: Var, c: Var, y: Var, x: Var) -> PrimExpr:
        sy = _source_coord(y, h, oh, mode, scale_h)
        sx = _source_coord(x, w, ow, mode, scale_w)
        fy, fx = floor(sy), floor(sx)
        ty, tx = sy - fy, sx - fx
        y0, x0 = fy.astype("int32"), fx.astype("int32")
        ya, yb = _clamp(y0, h), _clamp(y0 + 1, h)
        xa, xb = _clamp(x0, w), _clamp(x0 + 1, w)

        def px(yy: PrimExpr, xx: PrimExpr) -> PrimExpr:
            return data(b, c, yy, xx).astype("float32")

        top = px(ya, xa) + (px(ya, xb) - px(ya, xa)) * tx
        bottom = px(yb, xa) + (px(yb, xb) - px(yb, xa)) * tx
        return (top + (bottom - top) * ty).astype(dtype)

    body = nearest if kind == "nearest" else linear
    return compute(
        (data.shape[0], data.shape[1], oh, ow), body, name="resize", tag=f"{tag.INJECTIVE},resize"
    )
