"""Numpy references of the operators that sample inputs at computed points (TVM's
``roi_align_nchw_python`` / ``_nhwc_python``, ``roi_pool_nchw_python``,
``deformable_conv2d_nchw_python`` / ``_nhwc_python``, ``correlation_nchw_python``).

:func:`bilinear` reads a channels-first plane stack at fractional points: the four neighbours
around each point, weighted by distance, a neighbour outside the plane counting zero.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..nn.utils import get_pad_tuple
from ._window import Array, ints

__all__ = [
    "correlation_nchw_python",
    "deformable_conv2d_nchw_python",
    "deformable_conv2d_nhwc_python",
    "roi_align_nchw_python",
    "roi_align_nhwc_python",
    "roi_pool_nchw_python",
]


def bilinear(planes: Array, y: Array, x: Array) -> Array:
    """``planes [C, H, W]`` at points ``(y, x)`` (arrays of one shape): ``[C, *y.shape]``."""
    _, h, w = planes.shape
    y0, x0 = np.floor(y).astype(np.int64), np.floor(x).astype(np.int64)
    fy, fx = y - y0, x - x0
    out = np.zeros((planes.shape[0], *y.shape))
    for dy, dx in itertools.product((0, 1), (0, 1)):
        yy, xx = y0 + dy, x0 + dx
        weight = (fy if dy else 1 - fy) * (fx if dx else 1 - fx)
        ok = (yy >= 0) & (yy < h) & (xx >= 0) & (xx < w)
        vals = planes[:, np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1)]
        out += np.where(ok, vals * weight, 0.0)
    return out


def _mode(mode: Any) -> str:
    if mode in (b"avg", "avg", 0):
        return "avg"
    if mode in (b"max", "max", 1):
        return "max"
    raise TVMValueError(f"roi_align: mode {mode!r}; expected 'avg' or 'max'")


def roi_align_nchw_python(
    a_np: Array,
    rois_np: Array,
    pooled_size: int | tuple[int, int],
    spatial_scale: float,
    sample_ratio: int,
    mode: Any = b"avg",
) -> Array:
    """ROI align: each ROI ``[batch, x1, y1, x2, y2]`` (times ``spatial_scale``, at least 1x1)
    is split into ``pooled_size`` bins, each sampled on a grid of ``sample_ratio`` points a side
    (``ceil(roi / pooled)`` when not positive) and averaged or maxed. A point more than one
    pixel outside the input counts zero; one within is clamped to the edge.
    """
    how = _mode(mode)
    _, c, h, w = a_np.shape
    ph, pw = ints(pooled_size, 2, "pooled_size")
    out = np.zeros((rois_np.shape[0], c, ph, pw), dtype=a_np.dtype)
    for i, roi in enumerate(rois_np):
        x1, y1, x2, y2 = (float(v) * spatial_scale for v in roi[1:5])
        roi_h, roi_w = max(y2 - y1, 1.0), max(x2 - x1, 1.0)
        bin_h, bin_w = roi_h / ph, roi_w / pw
        gh = int(sample_ratio) if sample_ratio > 0 else math.ceil(roi_h / ph)
        gw = int(sample_ratio) if sample_ratio > 0 else math.ceil(roi_w / pw)
        ys = y1 + np.arange(ph)[:, None] * bin_h + (np.arange(gh)[None, :] + 0.5) * bin_h / gh
        xs = x1 + np.arange(pw)[:, None] * bin_w + (np.arange(gw)[None, :] + 0.5) * bin_w / gw
        yy = np.broadcast_to(ys[:, None, :, None], (ph, pw, gh, gw))
        xx = np.broadcast_to(xs[None, :, None, :], (ph, pw, gh, gw))
        inside = (yy >= -1) & (yy <= h) & (xx >= -1) & (xx <= w)
        vals = bilinear(a_np[int(roi[0])], np.clip(yy, 0, h - 1), np.clip(xx, 0, w - 1))
        vals = np.where(inside, vals, 0.0)
        out[i] = vals.mean(axis=(3, 4)) if how == "avg" else vals.max(axis=(3, 4))
    return out


def roi_align_nhwc_python(
    a_np: Array,
    rois_np: Array,
    pooled_size: int | tuple[int, int],
    spatial_scale: float,
    sample_ratio: int,
    mode: Any = b"avg",
) -> Array:
    """:func:`roi_align_nchw_python` on an ``NHWC`` input (result ``[R, PH, PW, C]``)."""
    out = roi_align_nchw_python(
        a_np.transpose(0, 3, 1, 2), rois_np, pooled_size, spatial_scale, sample_ratio, mode
    )
    return out.transpose(0, 2, 3, 1)


def roi_pool_nchw_python(
    a_np: Array, rois_np: Array, pooled_size: int | tuple[int, int], spatial_scale: float
) -> Array:
    """ROI max pooling: each ROI ``[batch, x1, y1, x2, y2]`` (times ``spatial_scale``, rounded,
    inclusive) is split into ``pooled_size`` bins of whole pixels; an empty bin gives 0.
    """
    _, c, h, w = a_np.shape
    ph, pw = ints(pooled_size, 2, "pooled_size")
    out = np.zeros((rois_np.shape[0], c, ph, pw), dtype=a_np.dtype)
    for i, roi in enumerate(rois_np):
        x1, y1, x2, y2 = (round(float(v) * spatial_scale) for v in roi[1:5])
        bin_h, bin_w = max(y2 - y1 + 1, 1) / ph, max(x2 - x1 + 1, 1) / pw
        for py, px in itertools.product(range(ph), range(pw)):
            hs = min(max(math.floor(py * bin_h) + y1, 0), h)
            he = min(max(math.ceil((py + 1) * bin_h) + y1, 0), h)
            ws = min(max(math.floor(px * bin_w) + x1, 0), w)
            we = min(max(math.ceil((px + 1) * bin_w) + x1, 0), w)
            if he > hs and we > ws:
                out[i, :, py, px] = a_np[int(roi[0]), :, hs:he, ws:we].max(axis=(1, 2))
    return out


def deformable_conv2d_nchw_python(
    a_np: Array,
    offset_np: Array,
    w_np: Array,
    stride: Any,
    padding: Any,
    dilation: Any,
    deformable_groups: int,
    groups: int,
) -> Array:
    """Deformable convolution: kernel tap ``(kh, kw)`` of output ``(y, x)`` reads the input
    bilinearly at its regular position plus the offset ``offset_np[n, (g, kh, kw, 0 / 1), y,
    x]`` of its channel's deformable group ``g``; a point outside the input reads zero.
    """
    if groups != 1:
        raise TVMValueError(f"deformable_conv2d: groups {groups}; only 1 is supported")
    n, c, h, w = a_np.shape
    _f, _, kh, kw = w_np.shape
    oh, ow = offset_np.shape[-2:]
    sh, sw = ints(stride, 2, "stride")
    dh, dw = ints(dilation, 2, "dilation")
    top, left, _, _ = get_pad_tuple(padding, (kh, kw))
    offsets = offset_np.reshape(n, deformable_groups, kh, kw, 2, oh, ow).astype(np.float64)
    base_y = (np.arange(oh) * sh - top)[None, :] + (np.arange(kh) * dh)[:, None]
    base_x = (np.arange(ow) * sw - left)[None, :] + (np.arange(kw) * dw)[:, None]
    per_group = c // deformable_groups
    cols = np.zeros((n, c, kh, kw, oh, ow))
    for b, g in itertools.product(range(n), range(deformable_groups)):
        y = base_y[:, None, :, None] + offsets[b, g, :, :, 0]
        x = base_x[None, :, None, :] + offsets[b, g, :, :, 1]
        inside = (y >= 0) & (y < h) & (x >= 0) & (x < w)
        planes = a_np[b, g * per_group : (g + 1) * per_group].astype(np.float64)
        cols[b, g * per_group : (g + 1) * per_group] = np.where(inside, bilinear(planes, y, x), 0)
    out: Array = np.einsum("nckluv,fckl->nfuv", cols, w_np.astype(np.float64))
    return out.astype(a_np.dtype)


def deformable_conv2d_nhwc_python(
    a_np: Array,
    offset_np: Array,
    w_np: Array,
    stride: Any,
    padding: Any,
    dilation: Any,
    deformable_groups: int,
    groups: int,
) -> Array:
    """:func:`deformable_conv2d_nchw_python` on ``NHWC`` input and offsets, ``HWIO`` weight."""
    out = deformable_conv2d_nchw_python(
        a_np.transpose(0, 3, 1, 2),
        offset_np.transpose(0, 3, 1, 2),
        w_np.transpose(3, 2, 0, 1),
        stride,
        padding,
        dilation,
        deformable_groups,
        groups,
    )
    return out.transpose(0, 2, 3, 1)


def correlation_nchw_python(
    data1: Array,
    data2: Array,
    kernel_size: int,
    max_displacement: int,
    stride1: int,
    stride2: int,
    padding: int,
    is_multiply: bool,
) -> Array:
    """FlowNet's correlation: output channel ``q`` compares a ``kernel_size`` patch of
    ``data1`` at ``(y, x)`` with one of ``data2`` displaced by ``q``'s grid offset times
    ``stride2`` (products, or absolute differences), averaged over the patch and channels.
    """
    n, c, h, w = data1.shape
    pad = ((0, 0), (0, 0), (padding, padding), (padding, padding))
    p1, p2 = np.pad(data1.astype(np.float64), pad), np.pad(data2.astype(np.float64), pad)
    border = max_displacement + (kernel_size - 1) // 2
    oh = (h + 2 * padding - 2 * border) // stride1
    ow = (w + 2 * padding - 2 * border) // stride1
    radius = max_displacement // stride2
    grid = 2 * radius + 1
    out = np.zeros((n, grid * grid, oh, ow))
    y1 = np.arange(oh) * stride1 + max_displacement
    x1 = np.arange(ow) * stride1 + max_displacement
    for q in range(grid * grid):
        dy = (q // grid - radius) * stride2
        dx = (q % grid - radius) * stride2
        for ky, kx in itertools.product(range(kernel_size), range(kernel_size)):
            a = p1[:, :, (y1 + ky)[:, None], (x1 + kx)[None, :]]
            b = p2[:, :, (y1 + dy + ky)[:, None], (x1 + dx + kx)[None, :]]
            out[:, q] += (a * b if is_multiply else np.abs(a - b)).sum(axis=1)
    return out / float(kernel_size * kernel_size * c)
