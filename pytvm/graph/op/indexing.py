"""Indexing by tensors and scans: ``gather`` (ONNX ``GatherElements``), ``gather_nd``,
``cumsum`` (Relay's names and attributes).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...topi.gather import gather
from ...topi.gather import gather_nd_last_axis as gather_nd
from ...topi.scan import cumsum
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _wrapped(indices: np.ndarray, n: int) -> np.ndarray:
    idx = indices.astype(np.int64)
    return np.where(idx < 0, idx + n, idx)


def _gather_np(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
    data, indices = args
    axis = attrs["axis"] % data.ndim
    return np.take_along_axis(data, _wrapped(indices, data.shape[axis]), axis=axis)


define_op(
    "gather",
    2,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: gather(args[0], attrs["axis"], args[1]),
    _gather_np,
)


def _gather_nd_np(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
    data, indices = args
    b = attrs.get("batch_dims", 0)
    depth = indices.shape[-1]
    lead = indices.shape[:-1]
    out = np.empty((*lead, *data.shape[b + depth :]), dtype=data.dtype)
    for pos in np.ndindex(*lead):
        where = [_wrapped(indices[(*pos, k)], data.shape[b + k]) for k in range(depth)]
        out[pos] = data[(*pos[:b], *(int(w) for w in where))]
    return out


define_op(
    "gather_nd",
    2,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: gather_nd(args[0], args[1], attrs.get("batch_dims", 0)),
    _gather_nd_np,
)


def _cumsum_np(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
    x = args[0]
    axis = attrs.get("axis", 0) % x.ndim
    dtype = attrs.get("dtype") or x.dtype
    if attrs.get("reverse", False):
        x = np.flip(x, axis)
    out = np.cumsum(x, axis=axis, dtype=dtype)
    if attrs.get("exclusive", False):  # shift by one along the axis, 0 first
        out = np.roll(out, 1, axis=axis)
        out[(slice(None),) * axis + (0,)] = 0
    if attrs.get("reverse", False):
        out = np.flip(out, axis)
    return np.ascontiguousarray(out)


define_op(
    "cumsum",
    1,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: cumsum(
        args[0],
        attrs.get("axis", 0),
        attrs.get("dtype") or None,
        bool(attrs.get("exclusive", False)),
        bool(attrs.get("reverse", False)),
    ),
    _cumsum_np,
)
