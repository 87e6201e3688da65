"""Sorting operators: ``topk``, ``sort`` and ``argsort`` along an axis (Relay's names and
attributes); equal elements keep their order (the lower index first), as ONNX asks.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...topi.sorting import argsort, sort, topk
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _order(x: np.ndarray, axis: int, ascend: bool) -> np.ndarray:
    """Indices that sort ``x`` along ``axis`` stably, ascending or descending."""
    if not ascend:  # an order-reversing map keeps the sort stable
        x = -x if np.issubdtype(x.dtype, np.floating) else np.invert(x)
    return np.argsort(x, axis=axis, kind="stable")


def _topk_np(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
    x = args[0]
    axis = int(attrs.get("axis", -1)) % x.ndim
    k = int(attrs.get("k", 1))
    n = x.shape[axis]
    k = n if k < 1 else min(k, n)
    order = np.take(_order(x, axis, bool(attrs.get("is_ascend", False))), range(k), axis=axis)
    values = np.take_along_axis(x, order, axis=axis)
    indices = order.astype(attrs.get("dtype", "int64"))
    ret = attrs.get("ret_type", "both")
    if ret == "values":
        return values
    if ret == "indices":
        return indices
    return values, indices


define_op(
    "topk",
    1,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: topk(
        args[0],
        int(attrs.get("k", 1)),
        int(attrs.get("axis", -1)),
        str(attrs.get("ret_type", "both")),
        bool(attrs.get("is_ascend", False)),
        str(attrs.get("dtype", "int64")),
    ),
    _topk_np,
)


def _sort_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = args[0]
    axis = int(attrs.get("axis", -1)) % x.ndim
    order = _order(x, axis, bool(attrs.get("is_ascend", True)))
    return np.take_along_axis(x, order, axis=axis)


define_op(
    "sort",
    1,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: sort(
        args[0], int(attrs.get("axis", -1)), bool(attrs.get("is_ascend", True))
    ),
    _sort_np,
)


def _argsort_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = args[0]
    axis = int(attrs.get("axis", -1)) % x.ndim
    order = _order(x, axis, bool(attrs.get("is_ascend", True)))
    return order.astype(attrs.get("dtype", "int32"))


define_op(
    "argsort",
    1,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: argsort(
        args[0],
        axis=int(attrs.get("axis", -1)),
        is_ascend=bool(attrs.get("is_ascend", True)),
        dtype=str(attrs.get("dtype", "int32")),
    ),
    _argsort_np,
)
