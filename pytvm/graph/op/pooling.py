"""Pooling in NCHW: ``nn.max_pool2d``, ``nn.avg_pool2d``, ``nn.global_avg_pool2d``,
``nn.global_max_pool2d`` (Relay's attributes: ``pool_size``, ``strides``, ``dilation``,
``padding`` as ``(top, left, bottom, right)``, ``ceil_mode``, ``count_include_pad``), and
``nn.max_pool2d_with_argmax`` (a tuple: the maxima and their int64 indices into the flattened
input, ``storage_order`` 0 or 1 as ONNX's ``MaxPool`` gives them).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ...topi._shape import const_ints
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _out_size(size: int, before: int, after: int, k: int, d: int, s: int, ceil: bool) -> int:
    span = size + before + after - ((k - 1) * d + 1)
    out = (-(-span // s) if ceil else span // s) + 1
    if ceil and (out - 1) * s >= size + before:
        out -= 1
    return out


def _window(attrs: Attrs) -> tuple[Any, Any, Any, Any]:
    """``(pool_size, strides, dilation, padding)`` of a pooling call, with their defaults."""
    return (
        attrs["pool_size"],
        attrs.get("strides", (1, 1)),
        attrs.get("dilation", (1, 1)),
        attrs.get("padding", (0, 0, 0, 0)),
    )


def _window_np(x: np.ndarray, attrs: Attrs) -> tuple[tuple[int, ...], ...]:
    """``(kernel, strides, dilation, padding, output size)`` of a pooling call on ``x``."""
    (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right) = _window(attrs)
    ceil = bool(attrs.get("ceil_mode", False))
    _, _, h, w = x.shape
    oh = _out_size(h, top, bottom, kh, dh, sh, ceil)
    ow = _out_size(w, left, right, kw, dw, sw, ceil)
    return (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right), (oh, ow)


def _pool_np(x: np.ndarray, attrs: Attrs, kind: str) -> np.ndarray:
    (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right), (oh, ow) = _window_np(x, attrs)
    n, c, h, w = x.shape
    need_h, need_w = (oh - 1) * sh + (kh - 1) * dh + 1, (ow - 1) * sw + (kw - 1) * dw + 1
    extra_h, extra_w = max(0, need_h - top - h), max(0, need_w - left - w)
    pads = ((0, 0), (0, 0), (top, extra_h), (left, extra_w))
    if kind == "max":
        fill = -np.inf if np.issubdtype(x.dtype, np.floating) else np.iinfo(x.dtype).min
        xp = np.pad(x, pads, constant_values=fill)
        out = np.full((n, c, oh, ow), fill, dtype=x.dtype)
        for i in range(kh):
            for j in range(kw):
                tap = xp[:, :, i * dh : i * dh + sh * oh : sh, j * dw : j * dw + sw * ow : sw]
                out = np.maximum(out, tap)
        return out
    xp = np.pad(x.astype(np.float64), pads)
    # Which padded positions count toward a window's size.
    counted = np.zeros(xp.shape[2:], dtype=np.float64)
    if attrs.get("count_include_pad", False):
        counted[: top + h + bottom, : left + w + right] = 1
    else:
        counted[top : top + h, left : left + w] = 1
    total = np.zeros((n, c, oh, ow), dtype=np.float64)
    count = np.zeros((oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            rows, cols = slice(i * dh, i * dh + sh * oh, sh), slice(j * dw, j * dw + sw * ow, sw)
            total += xp[:, :, rows, cols]
            count += counted[rows, cols]
    return (total / np.maximum(count, 1)).astype(x.dtype)


def _argmax_pool_np(args: Sequence[np.ndarray], attrs: Attrs) -> tuple[np.ndarray, np.ndarray]:
    x = args[0]
    (kh, kw), (sh, sw), (dh, dw), (top, left, _, _), (oh, ow) = _window_np(x, attrs)
    n, c, h, w = x.shape
    plane = (np.arange(n)[:, None] * c + np.arange(c)[None, :]).astype(np.int64) * (h * w)
    best = np.zeros((n, c, oh, ow), dtype=x.dtype)
    index = np.full((n, c, oh, ow), -1, dtype=np.int64)
    for i in range(kh):
        for j in range(kw):
            iy = np.arange(oh) * sh - top + i * dh
            ix = np.arange(ow) * sw - left + j * dw
            inside = ((iy >= 0) & (iy < h))[:, None] & ((ix >= 0) & (ix < w))[None, :]
            tap = x[:, :, np.clip(iy, 0, h - 1)][:, :, :, np.clip(ix, 0, w - 1)]
            if attrs.get("storage_order", 0) == 0:
                offset = iy[:, None] * w + ix[None, :]
            else:
                offset = iy[:, None] + ix[None, :] * h
            take = inside & ((index < 0) | (tap > best))
            best = np.where(take, tap, best)
            index = np.where(take, plane[:, :, None, None] + offset, index)
    return best, index


def _argmax_pool(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    return topi.nn.max_pool2d_with_argmax(
        args[0],
        *_window(attrs),
        bool(attrs.get("ceil_mode", False)),
        int(attrs.get("storage_order", 0)),
    )


define_op("nn.max_pool2d_with_argmax", 1, OpPattern.OPAQUE, _argmax_pool, _argmax_pool_np)


def _pool(kind: str) -> Any:
    def compute(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
        out = topi.nn.pool2d(
            args[0],
            *_window(attrs),
            kind,
            bool(attrs.get("ceil_mode", False)),
            attrs.get("layout", "NCHW"),
            bool(attrs.get("count_include_pad", False)),
        )
        # topi sizes a ceil-mode output by TVM's rule; this operator's (ONNX's and PyTorch's)
        # drops a last window that would start in the trailing padding.
        dims = const_ints("pool2d", "output shape", out.shape)
        (kh, kw), (sh, sw), (dh, dw), (top, left, bottom, right) = _window(attrs)
        ceil = bool(attrs.get("ceil_mode", False))
        h, w = const_ints("pool2d", "input shape", args[0].shape[2:])
        want = [*dims[:2], _out_size(h, top, bottom, kh, dh, sh, ceil)]
        want.append(_out_size(w, left, right, kw, dw, sw, ceil))
        return out if want == dims else topi.strided_slice(out, [0, 0, 0, 0], want)

    return compute


define_op(
    "nn.max_pool2d",
    1,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    _pool("max"),
    lambda args, attrs: _pool_np(args[0], attrs, "max"),
)
define_op(
    "nn.avg_pool2d",
    1,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    _pool("avg"),
    lambda args, attrs: _pool_np(args[0], attrs, "avg"),
)


def _global_np(kind: str) -> Any:
    def run(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
        x = args[0]
        if kind == "max":
            return np.max(x, axis=(2, 3), keepdims=True)
        return np.mean(x, axis=(2, 3), keepdims=True, dtype=np.float64).astype(x.dtype)

    return run


define_op(
    "nn.global_avg_pool2d",
    1,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    lambda args, attrs, ty: topi.nn.global_pool(args[0], "avg", attrs.get("layout", "NCHW")),
    _global_np("avg"),
)
define_op(
    "nn.global_max_pool2d",
    1,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    lambda args, attrs, ty: topi.nn.global_pool(args[0], "max", attrs.get("layout", "NCHW")),
    _global_np("max"),
)
