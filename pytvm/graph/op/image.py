"""Image operators: ``image.resize2d`` (NCHW; nearest, linear, cubic; ONNX's coordinate modes)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

_CUBIC_SUPPORT = 2  # Keys' cubic kernel is zero from distance 2 on


def _resize(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    return topi.image.resize2d(
        args[0],
        None,
        attrs["size"],
        attrs.get("layout", "NCHW"),
        attrs.get("method", "linear"),
        attrs.get("coordinate_transformation_mode", "half_pixel"),
        attrs.get("rounding_method", ""),
        bicubic_alpha=attrs.get("cubic_alpha", -0.75),
        bicubic_exclude=int(attrs.get("cubic_exclude", 0)),
        out_dtype=attrs.get("out_dtype") or None,
        scales=attrs.get("scales"),
    )


def _source(out: int, size: int, mode: str, scale: float | None) -> np.ndarray:
    """Input coordinates of output positions ``0..out-1`` (float64), as topi maps them."""
    x = np.arange(out, dtype=np.float64)
    ratio = 1.0 / scale if scale else size / out
    if mode == "align_corners":
        span = size * scale - 1 if scale else out - 1
        return x * ((size - 1) / span) if out > 1 and span > 0 else np.zeros(out)
    if mode == "asymmetric":
        return x * ratio
    if mode == "tf_half_pixel_for_nn":
        return (x + 0.5) * ratio
    if mode == "pytorch_half_pixel" and out == 1:
        return np.zeros(out)
    if mode == "half_pixel_symmetric":
        adjust = out / ((scale or out / size) * size)
        return size / 2 * (1 - adjust) + (x + 0.5) * ratio - 0.5
    return (x + 0.5) * ratio - 0.5


def _round(v: np.ndarray, method: str) -> Any:
    if method == "round_prefer_floor":
        return np.ceil(v - 0.5)
    if method == "round_prefer_ceil":
        return np.floor(v + 0.5)
    if method == "floor":
        return np.floor(v)
    if method == "ceil":
        return np.ceil(v)
    return np.round(v)


def _cubic_weights(src: np.ndarray, size: int, alpha: float, exclude: bool) -> np.ndarray:
    """``[out, size]`` weights of Keys' cubic convolution (coefficient ``alpha``) at the source
    coordinates ``src``: taps past the edge read the edge pixel, or with ``exclude`` get no
    weight and the others are renormalized (ONNX's ``exclude_outside``).
    """
    weights = np.zeros((src.size, size))
    base = np.floor(src.astype(np.float64))
    t = src.astype(np.float64) - base
    for k in (-1, 0, 1, 2):
        d = np.abs(t - k)
        w = np.where(
            d <= 1,
            ((alpha + 2) * d - (alpha + 3)) * d * d + 1,
            np.where(
                d < _CUBIC_SUPPORT, ((alpha * d - 5 * alpha) * d + 8 * alpha) * d - 4 * alpha, 0.0
            ),
        )
        idx = base.astype(np.int64) + k
        inside = (idx >= 0) & (idx < size)
        if exclude:
            w = np.where(inside, w, 0.0)
        np.add.at(weights, (np.arange(src.size), np.clip(idx, 0, size - 1)), w)
    if exclude:
        weights /= weights.sum(axis=1, keepdims=True)
    return weights


def _resize_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = args[0]
    _, _, h, w = x.shape
    oh, ow = attrs["size"]
    mode = attrs.get("coordinate_transformation_mode", "half_pixel")
    scales = attrs.get("scales") or (None, None)
    # topi computes coordinates in float32: do the same so nearest picks the same pixels.
    sy = _source(oh, h, mode, scales[0]).astype(np.float32)
    sx = _source(ow, w, mode, scales[1]).astype(np.float32)
    dtype = attrs.get("out_dtype") or x.dtype
    if attrs.get("method", "linear") in ("nearest_neighbor", "nearest"):
        default = "round" if mode in ("align_corners", "tf_half_pixel_for_nn") else "floor"
        method = attrs.get("rounding_method", "") or default
        iy = np.clip(_round(sy, method).astype(np.int64), 0, h - 1)
        ix = np.clip(_round(sx, method).astype(np.int64), 0, w - 1)
        return x[:, :, iy][:, :, :, ix].astype(dtype)
    if attrs.get("method", "linear") == "cubic":
        alpha, exclude = attrs.get("cubic_alpha", -0.75), bool(attrs.get("cubic_exclude", 0))
        wy, wx = _cubic_weights(sy, h, alpha, exclude), _cubic_weights(sx, w, alpha, exclude)
        out: np.ndarray = np.einsum("ph,nchw,qw->ncpq", wy, x.astype(np.float64), wx)
        return out.astype(dtype)
    fy, fx = np.floor(sy), np.floor(sx)
    ty, tx = (sy - fy)[:, None], (sx - fx)[None, :]
    y0, x0 = fy.astype(np.int64), fx.astype(np.int64)
    ya, yb = np.clip(y0, 0, h - 1), np.clip(y0 + 1, 0, h - 1)
    xa, xb = np.clip(x0, 0, w - 1), np.clip(x0 + 1, 0, w - 1)
    v = x.astype(np.float64)
    top = v[:, :, ya][:, :, :, xa] + (v[:, :, ya][:, :, :, xb] - v[:, :, ya][:, :, :, xa]) * tx
    bot = v[:, :, yb][:, :, :, xa] + (v[:, :, yb][:, :, :, xb] - v[:, :, yb][:, :, :, xa]) * tx
    return (top + (bot - top) * ty).astype(dtype)


define_op("image.resize2d", 1, OpPattern.INJECTIVE, _resize, _resize_np)
