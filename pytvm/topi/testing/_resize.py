"""Numpy references of resizing (TVM's ``resize1d_python`` / ``resize2d_python`` /
``resize3d_python`` and ``crop_and_resize_python``).

Resizing is separable: each spatial axis is resampled on its own. Output point ``x`` of an axis
resized from ``n`` to ``m`` points reads input coordinate ``(x + 0.5) * n / m - 0.5``
(``"half_pixel"``), ``x * (n - 1) / (m - 1)`` (``"align_corners"``) or ``x * n / m``
(``"asymmetric"``). ``"nearest_neighbor"`` takes the point below (rounding to nearest under
``align_corners``), ``"linear"`` blends the two neighbours, ``"cubic"`` four (Keys, a = -0.5);
neighbours past the edge repeat the edge.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..utils import nchw_pack_layout
from ._window import Array

__all__ = ["crop_and_resize_python", "resize1d_python", "resize2d_python", "resize3d_python"]


def _source(m: int, n: int, mode: str) -> Array:
    x = np.arange(m, dtype=np.float64)
    if mode == "half_pixel":
        return (x + 0.5) * (n / m) - 0.5
    if mode == "align_corners":
        return x * ((n - 1) / (m - 1)) if m > 1 else np.zeros(m)
    if mode == "asymmetric":
        return x * (n / m)
    raise TVMValueError(
        f"resize: coordinate_transformation_mode {mode!r}; expected half_pixel, align_corners "
        "or asymmetric"
    )


def _cubic(t: Array, a: float = -0.5) -> Array:
    """Weights of the taps at offsets -1, 0, 1, 2 for fraction ``t``: shape ``[4, *t.shape]``."""
    t2, t3 = t * t, t * t * t
    return np.stack(
        [
            a * (t3 - 2 * t2 + t),
            (a + 2) * t3 - (a + 3) * t2 + 1,
            -(a + 2) * t3 + (3 + 2 * a) * t2 - a * t,
            -a * t3 + a * t2,
        ]
    )


def _resample(x: Array, axis: int, m: int, method: str, mode: str) -> Array:
    """``x`` resampled to ``m`` points along ``axis``."""
    n = x.shape[axis]
    src = _source(m, n, mode)
    if method == "nearest_neighbor":
        idx = np.floor(src + 0.5) if mode == "align_corners" else np.floor(src)
        return np.take(x, np.clip(idx.astype(np.int64), 0, n - 1), axis=axis)
    base = np.floor(src)
    frac = src - base
    offsets: tuple[int, ...]
    if method == "linear":
        offsets, weights = (0, 1), np.stack([1 - frac, frac])
    elif method == "cubic":
        offsets, weights = (-1, 0, 1, 2), _cubic(frac)
    else:
        raise TVMValueError(
            f"resize: method {method!r}; expected nearest_neighbor, linear or cubic"
        )
    shape = [1] * x.ndim
    shape[axis] = m
    out = np.zeros((*x.shape[:axis], m, *x.shape[axis + 1 :]))
    for off, w in zip(offsets, weights, strict=True):
        idx = np.clip(base.astype(np.int64) + off, 0, n - 1)
        out += np.take(x, idx, axis=axis) * w.reshape(shape)
    return out


def _resize_nc(data: Array, scale: Sequence[float], method: str, mode: str) -> Array:
    """Resize the spatial axes (from 2 on) of channels-first ``data`` by ``scale``."""
    out = data.astype(np.float64)
    for i, s in enumerate(scale):
        axis = 2 + i
        out = _resample(out, axis, round(data.shape[axis] * s), method, mode)
    return out.astype(data.dtype)


def _scales(scale: Any, n: int) -> tuple[float, ...]:
    vals = (scale,) * n if isinstance(scale, (int, float)) else tuple(scale)
    if len(vals) != n:
        raise TVMValueError(f"resize: {len(vals)} scales for {n} spatial axes")
    return vals


def resize1d_python(
    data: Array,
    scale: Any,
    layout: str = "NCW",
    method: str = "nearest_neighbor",
    coordinate_transformation_mode: str = "align_corners",
) -> Array:
    """Resize ``data`` (``NCW`` or ``NWC``) by ``scale`` (one factor)."""
    x = data.transpose(0, 2, 1) if layout == "NWC" else data
    out = _resize_nc(x, _scales(scale, 1), method, coordinate_transformation_mode)
    return out.transpose(0, 2, 1) if layout == "NWC" else out


def resize2d_python(
    data: Array,
    scale: Any,
    layout: str = "NCHW",
    method: str = "nearest_neighbor",
    coordinate_transformation_mode: str = "align_corners",
) -> Array:
    """Resize ``data`` (``NCHW``, ``NHWC`` or ``NCHW<n>n<c>c``) by ``scale = (sh, sw)``."""
    scales = _scales(scale, 2)
    if layout == "NHWC":
        out = _resize_nc(data.transpose(0, 3, 1, 2), scales, method, coordinate_transformation_mode)
        return out.transpose(0, 2, 3, 1)
    if nchw_pack_layout(layout):
        n, c, h, w, nb, cb = data.shape
        plain = data.transpose(0, 4, 1, 5, 2, 3).reshape(n * nb, c * cb, h, w)
        out = _resize_nc(plain, scales, method, coordinate_transformation_mode)
        oh, ow = out.shape[2:]
        return out.reshape(n, nb, c, cb, oh, ow).transpose(0, 2, 4, 5, 1, 3)
    return _resize_nc(data, scales, method, coordinate_transformation_mode)


def resize3d_python(
    data: Array,
    scale: Any,
    layout: str = "NCDHW",
    method: str = "nearest_neighbor",
    coordinate_transformation_mode: str = "align_corners",
) -> Array:
    """Resize ``data`` (``NCDHW`` or ``NDHWC``) by ``scale = (sd, sh, sw)``."""
    x = data.transpose(0, 4, 1, 2, 3) if layout == "NDHWC" else data
    out = _resize_nc(x, _scales(scale, 3), method, coordinate_transformation_mode)
    return out.transpose(0, 2, 3, 4, 1) if layout == "NDHWC" else out


def _crop_coords(start: float, end: float, size: int, target: int) -> Array:
    if target > 1:
        return start * (size - 1) + np.arange(target) * ((end - start) * (size - 1) / (target - 1))
    return np.full(target, 0.5 * (start + end) * (size - 1))


def crop_and_resize_python(
    image: Array,
    boxes: Array,
    box_indices: Array,
    crop_size: Sequence[int],
    layout: str,
    method: str = "bilinear",
    extrapolation_value: float = 0,
) -> Array:
    """Crop box ``[y1, x1, y2, x2]`` (fractions of the image) of image ``box_indices[i]`` for
    each box and resize it to ``crop_size``; points outside the image get
    ``extrapolation_value``. ``method`` is ``"bilinear"`` or ``"nearest_neighbor"``.
    """
    if method not in ("bilinear", "nearest_neighbor"):
        raise TVMValueError(
            f"crop_and_resize: method {method!r}; expected bilinear or nearest_neighbor"
        )
    img = image.transpose(0, 3, 1, 2) if layout == "NHWC" else image
    _, c, h, w = img.shape
    th, tw = crop_size
    out = np.zeros((boxes.shape[0], c, th, tw))
    for i, (y1, x1, y2, x2) in enumerate(boxes):
        src = img[int(box_indices[i])].astype(np.float64)
        ys, xs = _crop_coords(y1, y2, h, th), _crop_coords(x1, x2, w, tw)
        inside = ((ys >= 0) & (ys <= h - 1))[:, None] & ((xs >= 0) & (xs <= w - 1))[None, :]
        yc, xc = np.clip(ys, 0, h - 1), np.clip(xs, 0, w - 1)
        if method == "nearest_neighbor":
            vals = src[
                :, np.round(yc).astype(np.int64)[:, None], np.round(xc).astype(np.int64)[None, :]
            ]
        else:
            y0, x0 = np.floor(yc).astype(np.int64), np.floor(xc).astype(np.int64)
            y1i, x1i = np.ceil(yc).astype(np.int64), np.ceil(xc).astype(np.int64)
            fy, fx = (yc - y0)[:, None], (xc - x0)[None, :]
            top = (
                src[:, y0[:, None], x0] + (src[:, y0[:, None], x1i] - src[:, y0[:, None], x0]) * fx
            )
            bottom = (
                src[:, y1i[:, None], x0]
                + (src[:, y1i[:, None], x1i] - src[:, y1i[:, None], x0]) * fx
            )
            vals = top + (bottom - top) * fy
        out[i] = np.where(inside, vals, extrapolation_value)
    return out.transpose(0, 2, 3, 1) if layout == "NHWC" else out
