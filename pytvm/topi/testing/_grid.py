"""Numpy references of sampling on a grid of normalized coordinates (TVM's
``affine_grid_python`` and ``grid_sample_python``, PyTorch's semantics).

A grid point ``g`` in ``[-1, 1]`` maps to input coordinate ``(g + 1) * (n - 1) / 2``
(``align_corners``) or ``(g + 1) * n / 2 - 0.5``. ``padding_mode`` says what a point outside
reads: ``"zeros"``, the nearest ``"border"`` point, or the point mirrored back in
(``"reflection"``).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ._window import Array

__all__ = ["affine_grid_python", "grid_sample_python"]

_BICUBIC_DIMS = 2  # bicubic sampling is defined on 2-d data only


def affine_grid_python(data: Array, target_shape: Sequence[int]) -> Array:
    """The sampling grid ``[N, 2, H, W]`` (x then y) of the affine maps ``data [N, 2, 3]``
    over a ``target_shape = (H, W)`` grid of ``[-1, 1]`` coordinates.
    """
    h, w = target_shape
    ys = np.arange(h) * 2 / (h - 1) - 1 if h > 1 else np.zeros(h)
    xs = np.arange(w) * 2 / (w - 1) - 1 if w > 1 else np.zeros(w)
    yy, xx = np.meshgrid(ys, xs, indexing="ij")
    points = np.stack([xx, yy, np.ones_like(xx)]).reshape(3, -1)
    return (data.reshape(-1, 3) @ points).reshape(data.shape[0], 2, h, w)


def _unnormalize(g: Array, n: int, align_corners: bool) -> Array:
    return (g + 1) * (n - 1) / 2 if align_corners else (g + 1) * n / 2 - 0.5


def _reflect(x: Array, n: int, align_corners: bool) -> Array:
    span, start = (n - 1, 0.0) if align_corners else (n, -0.5)
    if span <= 0:
        return np.zeros_like(x)
    d = np.abs(x - start)
    flips = np.floor(d / span)
    extra = d - flips * span
    mirrored = np.where(flips % 2 == 0, extra + start, span - extra + start)
    return np.where((x >= start) & (x <= span + start), x, mirrored)


def _place(x: Array, n: int, padding_mode: str, align_corners: bool) -> Array:
    if padding_mode == "reflection":
        x = _reflect(x, n, align_corners)
    if padding_mode in ("reflection", "border"):
        x = np.clip(x, 0, n - 1)
    return x


def _read(planes: Array, idx: Sequence[Array]) -> Array:
    """``planes [C, *S]`` at integer points ``idx`` (zero outside)."""
    ok = np.ones(idx[0].shape, dtype=bool)
    clipped: list[Any] = []
    for i, n in zip(idx, planes.shape[1:], strict=True):
        ok &= (i >= 0) & (i <= n - 1)
        clipped.append(np.clip(i, 0, n - 1))
    where: tuple[Any, ...] = (slice(None), *clipped)
    return np.where(ok, planes[where], 0.0)


def _cubic_weights(t: Array, a: float = -0.75) -> list[Array]:
    def near(v: Array) -> Array:
        return ((a + 2) * v - (a + 3)) * v * v + 1

    def far(v: Array) -> Array:
        return ((a * v - 5 * a) * v + 8 * a) * v - 4 * a

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def _bicubic(planes: Array, y: Array, x: Array, padding_mode: str, align_corners: bool) -> Array:
    h, w = planes.shape[1:]
    y0, x0 = np.floor(y), np.floor(x)
    wy, wx = _cubic_weights(y - y0), _cubic_weights(x - x0)
    out = np.zeros((planes.shape[0], *y.shape))
    for i, j in itertools.product(range(4), range(4)):
        yy, xx = y0 - 1 + i, x0 - 1 + j
        if padding_mode != "zeros":
            yy, xx = (
                _place(yy, h, padding_mode, align_corners),
                _place(xx, w, padding_mode, align_corners),
            )
        out += _read(planes, [yy.astype(np.int64), xx.astype(np.int64)]) * wy[i] * wx[j]
    return out


def grid_sample_python(
    data: Array,
    grid: Array,
    method: str = "bilinear",
    layout: str = "NCHW",
    padding_mode: str = "zeros",
    align_corners: bool = True,
) -> Array:
    """Sample ``data`` (``NCHW`` or ``NCDHW``) at ``grid [N, dims, *out]`` (x first);
    ``method`` is ``"nearest"``, ``"bilinear"`` (trilinear in 3-d) or ``"bicubic"`` (2-d only).
    """
    dims = data.ndim - 2
    if dims not in (2, 3) or layout not in ("NCHW", "NCDHW") or grid.shape[1] != dims:
        raise TVMValueError(
            f"grid_sample: data {data.shape} ({layout}) and grid {grid.shape}; expected NCHW or "
            "NCDHW data and a grid with one coordinate per spatial axis"
        )
    if padding_mode not in ("zeros", "border", "reflection"):
        raise TVMValueError(f"grid_sample: padding_mode {padding_mode!r}")
    bicubic_3d = method == "bicubic" and dims != _BICUBIC_DIMS
    if method not in ("nearest", "bilinear", "bicubic") or bicubic_3d:
        raise TVMValueError(f"grid_sample: method {method!r} for {dims}-d data")
    sizes = data.shape[2:]
    out = np.zeros((data.shape[0], data.shape[1], *grid.shape[2:]))
    for b in range(data.shape[0]):
        planes = data[b].astype(np.float64)
        # grid channel 0 is x (the last axis): reverse to the data's axis order.
        coords = [
            _unnormalize(grid[b, dims - 1 - a].astype(np.float64), sizes[a], align_corners)
            for a in range(dims)
        ]
        if method == "bicubic":
            out[b] = _bicubic(planes, coords[0], coords[1], padding_mode, align_corners)
            continue
        coords = [
            _place(c, n, padding_mode, align_corners) for c, n in zip(coords, sizes, strict=True)
        ]
        if method == "nearest":
            nearest = [
                np.where(c > 0, np.trunc(c + 0.5), np.trunc(c - 0.5)).astype(np.int64)
                for c in coords
            ]
            out[b] = _read(planes, nearest)
            continue
        lows = [np.floor(c) for c in coords]
        for corner in itertools.product((0, 1), repeat=dims):
            weight = np.ones(coords[0].shape)
            for c, lo, bit in zip(coords, lows, corner, strict=True):
                weight = weight * ((c - lo) if bit else (1 - (c - lo)))
            idx = [(lo + bit).astype(np.int64) for lo, bit in zip(lows, corner, strict=True)]
            out[b] += _read(planes, idx) * weight
    return out
