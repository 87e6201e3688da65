"""Numpy references of the operators that move elements between space, depth and batch
(TVM's ``reorg_python``, ``depth_to_space_python``, ``space_to_depth_python``,
``space_to_batch_nd_python``, ``batch_to_space_nd_python``).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ffi.errors import TVMValueError
from ._window import Array

__all__ = [
    "batch_to_space_nd_python",
    "depth_to_space_python",
    "reorg_python",
    "space_to_batch_nd_python",
    "space_to_depth_python",
]


def _blocks(n: int, block: int, what: str) -> int:
    if block < 1 or n % block:
        raise TVMValueError(f"{what} {n} is not divisible by the block size {block}")
    return n // block


def reorg_python(a_np: Array, stride: int) -> Array:
    """YOLO's reorg of ``a_np [N, C, H, W]``: read as ``[N, C // s², H * s, W * s]``, input
    element ``(n, k, j, i)`` takes the value at ``(n, k % (C // s²), j * s + k' // s,
    i * s + k' % s)`` with ``k' = k // (C // s²)``; the result is ``[N, C * s², H // s, W // s]``.
    """
    n, c, h, w = a_np.shape
    oc = _blocks(c, stride * stride, "reorg: channels")
    src = a_np.reshape(n, oc, h * stride, w * stride)
    k = np.arange(c)
    rows = np.arange(h)[:, None] * stride + (k // oc)[:, None, None] // stride
    cols = np.arange(w)[None, :] * stride + (k // oc)[:, None, None] % stride
    out = src[:, (k % oc)[:, None, None], rows, cols]
    return out.reshape(n, c * stride * stride, h // stride, w // stride)


def depth_to_space_python(data: Array, block_size: int, mode: str = "DCR") -> Array:
    """``[N, C, H, W]`` to ``[N, C // b², H * b, W * b]``; ``"DCR"`` reads the channels as
    ``(b, b, C // b²)``, ``"CRD"`` (also spelt ``"CDR"``, as TVM's tests and topi do) as
    ``(C // b², b, b)``.
    """
    n, c, h, w = data.shape
    b = block_size
    nc = _blocks(c, b * b, "depth_to_space: channels")
    if mode == "DCR":
        out = data.reshape(n, b, b, nc, h, w).transpose(0, 3, 4, 1, 5, 2)
    elif mode in ("CRD", "CDR"):
        out = data.reshape(n, nc, b, b, h, w).transpose(0, 1, 4, 2, 5, 3)
    else:
        raise TVMValueError(f"depth_to_space: mode {mode!r}; expected 'DCR' or 'CRD'")
    return out.reshape(n, nc, h * b, w * b)


def space_to_depth_python(data: Array, block_size: int) -> Array:
    """``[N, C, H, W]`` to ``[N, C * b², H // b, W // b]``, the block offsets outermost."""
    n, c, h, w = data.shape
    b = block_size
    nh, nw = _blocks(h, b, "space_to_depth: height"), _blocks(w, b, "space_to_depth: width")
    out = data.reshape(n, c, nh, b, nw, b).transpose(0, 3, 5, 1, 2, 4)
    return out.reshape(n, c * b * b, nh, nw)


def space_to_batch_nd_python(
    data: Array,
    block_shape: Sequence[int],
    pad_before: Sequence[int],
    pad_after: Sequence[int],
    pad_value: float = 0,
) -> Array:
    """Pad spatial axes ``1..M`` then move each block offset into the batch:
    ``[N, *S, *R]`` to ``[N * prod(block), *(S_padded // block), *R]``.
    """
    m = len(block_shape)
    pads = [(0, 0), *zip(pad_before, pad_after, strict=True)] + [(0, 0)] * (data.ndim - 1 - m)
    padded = np.pad(data, pads, constant_values=pad_value)
    n, rest = data.shape[0], data.shape[1 + m :]
    outer = [
        _blocks(padded.shape[1 + i], b, "space_to_batch_nd: padded axis")
        for i, b in enumerate(block_shape)
    ]
    split = [n] + [d for o, b in zip(outer, block_shape, strict=True) for d in (o, b)] + list(rest)
    block_axes = [2 + 2 * i for i in range(m)]
    outer_axes = [1 + 2 * i for i in range(m)]
    tail = list(range(1 + 2 * m, len(split)))
    out = padded.reshape(split).transpose([*block_axes, 0, *outer_axes, *tail])
    return out.reshape(n * int(np.prod(block_shape)), *outer, *rest)


def batch_to_space_nd_python(
    data: Array,
    block_shape: Sequence[int],
    crop_begin_list: Sequence[int],
    crop_end_list: Sequence[int],
) -> Array:
    """The inverse of :func:`space_to_batch_nd_python`, then crop each spatial axis."""
    m = len(block_shape)
    blocks = int(np.prod(block_shape))
    n = _blocks(data.shape[0], blocks, "batch_to_space_nd: batch")
    spatial, rest = data.shape[1 : 1 + m], data.shape[1 + m :]
    x = data.reshape(*block_shape, n, *spatial, *rest)
    order = [m] + [a for i in range(m) for a in (m + 1 + i, i)] + list(range(2 * m + 1, x.ndim))
    full = x.transpose(order).reshape(
        n, *(s * b for s, b in zip(spatial, block_shape, strict=True)), *rest
    )
    cut = tuple(slice(crop_begin_list[i], full.shape[1 + i] - crop_end_list[i]) for i in range(m))
    return full[(slice(None), *cut)]
