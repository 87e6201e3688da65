"""Converters of ONNX's ``Resize`` and ``Upsample``: nearest, linear and cubic
(``cubic_coeff_a``, ``exclude_outside``) interpolation of the last two (or last one) axes,
with ``sizes`` or ``scales``, the coordinate transformation modes of opset 11 on, and
opset 10's (and ``Upsample``'s) asymmetric mapping.

Not supported (a clear error): ``tf_crop_and_resize``, antialiasing and
resizing the batch or channel axes.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext
from .ops_tensor import normalize_axes

__all__ = ["RESIZE_CONVERTERS"]

_MODES = {
    "nearest": "nearest_neighbor", "linear": "linear", "bilinear": "linear", "cubic": "cubic",
    "bicubic": "cubic",
}  # fmt: skip


def _resize_2d(
    ctx: NodeContext,
    out: list[int],
    scales: list[float] | None,
    mode: str,
    coord: str,
    rounding: str,
) -> Expr:
    shape = ctx.shape(0)
    ndim = len(shape)
    if ndim not in (3, 4):
        raise ctx.error(f"resizing a {ndim}-d tensor is not supported (3-d and 4-d are)")
    lead = ndim - (2 if ndim == 4 else 1)  # noqa: PLR2004
    if list(out[:lead]) != list(shape[:lead]):
        raise ctx.error(
            f"resizing the leading axes is not supported: {list(shape)} to {out} (only the "
            "spatial axes may change)"
        )
    x = ctx.expr(0)
    size, factors = list(out[lead:]), None if scales is None else list(scales[lead:])
    if ndim == 3:  # noqa: PLR2004
        x = ctx.call("expand_dims", x, axis=2, num_newaxis=1)
        size = [1, *size]
        factors = None if factors is None else [1.0, *factors]
    attrs: dict[str, Any] = {
        "size": tuple(size),
        "method": _MODES[mode],
        "coordinate_transformation_mode": coord,
    }
    if mode == "nearest":
        attrs["rounding_method"] = rounding
    if mode == "cubic":
        attrs["cubic_alpha"] = float(ctx.attr("cubic_coeff_a", -0.75))
        attrs["cubic_exclude"] = int(ctx.attr("exclude_outside", 0))
    if factors is not None:
        attrs["scales"] = tuple(float(f) for f in factors)
    result = ctx.call("image.resize2d", x, **attrs)
    return ctx.call("squeeze", result, axis=(2,)) if ndim == 3 else result  # noqa: PLR2004


def _check_mode(ctx: NodeContext, mode: str) -> str:
    if mode not in _MODES:
        raise ctx.error(f"mode {mode!r} is not one of nearest, linear, cubic")
    return {"bilinear": "linear", "bicubic": "cubic"}.get(mode, mode)


def _simple_rounding(ctx: NodeContext, scales: list[float]) -> str:
    """Opset 10's nearest pixel: ``ceil`` when shrinking, ``floor`` when growing."""
    spatial = [s for s in scales[2:] if s != 1.0] or [1.0]
    if all(s < 1 for s in spatial):
        return "ceil"
    if all(s >= 1 for s in spatial):
        return "floor"
    raise ctx.error(f"scales {scales} shrink one axis and grow another (not supported)")


def _by_scales(ctx: NodeContext, scales: list[float], mode: str, coord: str, rounding: str) -> Expr:
    shape = ctx.shape(0)
    if len(scales) != len(shape):
        raise ctx.error(f"scales {scales} should have one value per input axis ({len(shape)})")
    if any(s <= 0 for s in scales):
        raise ctx.error(f"scales {scales} must be positive")
    out = [math.floor(n * s + 1e-9) for n, s in zip(shape, scales, strict=True)]
    return _resize_2d(ctx, out, scales, mode, coord, rounding)


def _resize(ctx: NodeContext) -> Expr:
    mode = _check_mode(ctx, ctx.attr("mode", "nearest"))
    shape = list(ctx.shape(0))
    ndim = len(shape)
    if ctx.opset < 11:  # noqa: PLR2004
        scales = [float(v) for v in ctx.value(1, "scales").reshape(-1)]
        rounding = _simple_rounding(ctx, scales) if mode == "nearest" else ""
        return _by_scales(ctx, scales, mode, "asymmetric", rounding)
    coord = ctx.attr("coordinate_transformation_mode", "half_pixel")
    if coord == "tf_crop_and_resize":
        raise ctx.error("coordinate_transformation_mode 'tf_crop_and_resize' is not supported")
    if ctx.attr("antialias", 0):
        raise ctx.error("antialias=1 is not supported")
    rounding = ctx.attr("nearest_mode", "round_prefer_floor")
    axes = ctx.attr("axes")
    axes = list(range(ndim)) if axes is None else normalize_axes(ctx, [int(a) for a in axes], ndim)
    given_scales = ctx.optional_value(2, "scales")
    sizes = ctx.optional_value(3, "sizes")
    if sizes is not None:
        wanted = [int(v) for v in sizes.reshape(-1)]
        if len(wanted) != len(axes):
            raise ctx.error(f"sizes {wanted} should have one value per axis in {axes}")
        out = list(shape)
        policy = ctx.attr("keep_aspect_ratio_policy", "stretch")
        if policy == "stretch":
            for a, n in zip(axes, wanted, strict=True):
                out[a] = n
            return _resize_2d(ctx, out, None, mode, coord, rounding)
        # One scale for every axis, which also maps the coordinates.
        ratios = [n / shape[a] for a, n in zip(axes, wanted, strict=True)]
        scale = min(ratios) if policy == "not_larger" else max(ratios)
        factors = [1.0] * ndim
        for a in axes:
            out[a] = math.floor(shape[a] * scale + 0.5)
            factors[a] = scale
        return _resize_2d(ctx, out, factors, mode, coord, rounding)
    if given_scales is None:
        raise ctx.error("neither scales nor sizes is given")
    full = [1.0] * ndim
    given = [float(v) for v in np.asarray(given_scales).reshape(-1)]
    if len(given) != len(axes):
        raise ctx.error(f"scales {given} should have one value per axis in {axes}")
    for a, s in zip(axes, given, strict=True):
        full[a] = s
    return _by_scales(ctx, full, mode, coord, rounding)


def _upsample(ctx: NodeContext) -> Expr:
    mode = _check_mode(ctx, ctx.attr("mode", "nearest"))
    if ctx.opset >= 9:  # noqa: PLR2004
        scales = [float(v) for v in ctx.value(1, "scales").reshape(-1)]
    else:
        scales = [float(v) for v in ctx.require("scales")]
    rounding = _simple_rounding(ctx, scales) if mode == "nearest" else ""
    return _by_scales(ctx, scales, mode, "asymmetric", rounding)


RESIZE_CONVERTERS: ConverterTable = {
    "Resize": (10, _resize),
    "Upsample": (7, _upsample),
}
