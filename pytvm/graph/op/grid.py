"""Grid operators: ``image.affine_grid`` and ``image.grid_sample`` (``topi.image``'s, with
its two conventions of placing a point: TVM's/PyTorch's and ONNX's).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _affine_grid(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    return topi.image.affine_grid(args[0], attrs["target_shape"])


def _affine_grid_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    theta = args[0]
    h, w = attrs["target_shape"]
    ys = np.arange(h) * 2.0 / (h - 1) - 1 if h > 1 else np.zeros(1)
    xs = np.arange(w) * 2.0 / (w - 1) - 1 if w > 1 else np.zeros(1)
    yy, xx = np.meshgrid(ys, xs, indexing="ij")
    points = np.stack([xx, yy, np.ones_like(xx)]).reshape(3, -1)
    out = np.einsum("nkj,jp->nkp", theta.astype(np.float64), points)
    return np.asarray(out.reshape(theta.shape[0], 2, h, w), dtype=theta.dtype)


def _grid_sample(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    return topi.image.grid_sample(
        args[0],
        args[1],
        attrs.get("method", "bilinear"),
        attrs.get("layout", "NCHW"),
        attrs.get("padding_mode", "zeros"),
        bool(attrs.get("align_corners", True)),
        attrs.get("convention", "pytorch"),
    )


def _reflect(x: np.ndarray, lo: float, hi: float) -> np.ndarray:
    span = hi - lo
    if span <= 0:
        return np.asarray(np.full_like(x, lo))
    d = np.abs(x - lo)
    flips = np.floor(d / span)
    extra = d - flips * span
    return np.where(flips % 2 == 1, hi - extra, lo + extra)


def _cubic(t: np.ndarray, a: float = -0.75) -> list[np.ndarray]:
    def near(v: np.ndarray) -> np.ndarray:
        return np.asarray(((a + 2) * v - (a + 3)) * v * v + 1)

    def far(v: np.ndarray) -> np.ndarray:
        return np.asarray(((a * v - 5 * a) * v + 8 * a) * v - 4 * a)

    return [far(t + 1), near(t), near(1 - t), far(2 - t)]


def grid_sample_np(
    data: np.ndarray,
    grid: np.ndarray,
    method: str = "bilinear",
    padding_mode: str = "zeros",
    align_corners: bool = True,
    convention: str = "pytorch",
) -> np.ndarray:
    """Numpy ``image.grid_sample``: ``data [N, C, *S]`` at ``grid [N, len(S), *O]``."""
    sizes = data.shape[2:]
    nsp = len(sizes)
    bounds = [(0.0, n - 1.0) if align_corners else (-0.5, n - 0.5) for n in sizes]
    coords = []
    for a, n in enumerate(sizes):
        g = grid[:, nsp - 1 - a].astype(np.float64)
        x = (g + 1) * (n - 1) / 2 if align_corners else ((g + 1) * n - 1) / 2
        if convention == "onnx" and method == "nearest":
            x = np.round(x)
        lo, hi = bounds[a]
        keep = method == "bicubic" and (convention == "pytorch" or padding_mode == "border")
        if padding_mode == "zeros" or keep:
            pass
        elif convention == "pytorch":
            if padding_mode == "reflection":
                x = np.where((x >= lo) & (x <= hi), x, _reflect(x, lo, hi))
            x = np.clip(x, 0, n - 1)
        else:
            moved = np.clip(x, 0, n - 1) if padding_mode == "border" else _reflect(x, lo, hi)
            x = np.where((x >= lo) & (x <= hi), x, moved)
        coords.append(x)

    def tap(i: np.ndarray, a: int) -> tuple[np.ndarray, np.ndarray]:
        n = sizes[a]
        if padding_mode == "reflection":
            i = _reflect(i.astype(np.float64), *bounds[a]).astype(np.int64)
        return np.clip(i, 0, n - 1), (i >= 0) & (i <= n - 1) | (padding_mode != "zeros")

    batch = np.arange(data.shape[0]).reshape(-1, *([1] * (grid.ndim - 2)))

    def read(idx: list[tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
        ok = np.logical_and.reduce([m for _, m in idx])
        where: tuple[Any, ...] = (batch, slice(None), *[i for i, _ in idx])
        values = data[where]  # [N, *O, C]
        return np.where(ok[..., None], values, 0).astype(np.float64)

    if method == "nearest":
        out = read([tap(np.round(x).astype(np.int64), a) for a, x in enumerate(coords)])
    else:
        bases = [np.floor(x) for x in coords]
        fracs = [x - b for x, b in zip(coords, bases, strict=True)]
        offsets = (0, 1) if method == "bilinear" else (-1, 0, 1, 2)
        weights = [[1 - t, t] if method == "bilinear" else _cubic(t) for t in fracs]
        out = np.zeros((*grid.shape[:1], *grid.shape[2:], data.shape[1]))
        for pick in itertools.product(range(len(offsets)), repeat=nsp):
            idx = [
                tap(b.astype(np.int64) + offsets[k], a)
                for a, (b, k) in enumerate(zip(bases, pick, strict=True))
            ]
            w = np.prod([weights[a][k] for a, k in enumerate(pick)], axis=0)
            out += read(idx) * w[..., None]
    return np.moveaxis(out, -1, 1).astype(data.dtype)


def _grid_sample_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    return grid_sample_np(
        args[0],
        args[1],
        attrs.get("method", "bilinear"),
        attrs.get("padding_mode", "zeros"),
        bool(attrs.get("align_corners", True)),
        attrs.get("convention", "pytorch"),
    )


define_op("image.affine_grid", 1, OpPattern.INJECTIVE, _affine_grid, _affine_grid_np)
define_op("image.grid_sample", 2, OpPattern.INJECTIVE, _grid_sample, _grid_sample_np)
