"""Reductions: ``sum``, ``mean``, ``max``, ``min``, ``prod``, ``argmax``, ``argmin``.

Attributes follow Relay: ``axis`` (None: every axis; an int or a list), ``keepdims``,
``exclude`` (reduce every axis *not* listed); the arg-reductions add ``select_last_index``
and return ``int32`` indices.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def reduce_axes(attrs: Attrs, ndim: int) -> tuple[int, ...]:
    """The axes ``attrs`` reduce over an input of ``ndim`` dimensions, sorted, non-negative."""
    axis = attrs.get("axis")
    if axis is None:
        axes = tuple(range(ndim))
    else:
        axes = tuple(sorted({a % ndim for a in ((axis,) if isinstance(axis, int) else axis)}))
    if attrs.get("exclude", False):
        axes = tuple(a for a in range(ndim) if a not in axes)
    return axes


def _reduce(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Attrs, Any], Any]:
    def compute(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
        x = args[0]
        return fn(x, list(reduce_axes(attrs, x.ndim)), bool(attrs.get("keepdims", False)))

    return compute


def _reduce_np(fn: Callable[..., Any]) -> Callable[[Sequence[np.ndarray], Attrs], Any]:
    def run(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
        x = args[0]
        axes = reduce_axes(attrs, x.ndim)
        with np.errstate(all="ignore"):
            out = fn(x, axis=axes, keepdims=bool(attrs.get("keepdims", False)))
        return np.asarray(out).astype(x.dtype)

    return run


def _mean_np(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    if np.issubdtype(x.dtype, np.integer):
        total = np.sum(x, axis=axis, keepdims=keepdims, dtype=np.int64)
        count = int(np.prod([x.shape[a] for a in axis], dtype=np.int64))
        return np.asarray(np.trunc(total / count), dtype=x.dtype)
    return np.mean(x, axis=axis, keepdims=keepdims, dtype=np.float64)


def _sum_np(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    wide = np.float64 if np.issubdtype(x.dtype, np.floating) else None
    return np.sum(x, axis=axis, keepdims=keepdims, dtype=wide)


def _limit(dtype: np.dtype[Any], high: bool) -> Any:
    if np.issubdtype(dtype, np.floating):
        return np.inf if high else -np.inf
    if dtype == np.bool_:
        return high
    info = np.iinfo(dtype)
    return info.max if high else info.min


def _max_np(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    return np.max(x, axis=axis, keepdims=keepdims, initial=_limit(x.dtype, False))


def _min_np(x: np.ndarray, axis: tuple[int, ...], keepdims: bool) -> Any:
    return np.min(x, axis=axis, keepdims=keepdims, initial=_limit(x.dtype, True))


_REDUCTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "sum": (topi.sum, _sum_np),
    "mean": (topi.mean, _mean_np),
    "max": (topi.max, _max_np),
    "min": (topi.min, _min_np),
    "prod": (topi.prod, np.prod),
}

for _name, (_te, _np) in _REDUCTIONS.items():
    define_op(_name, 1, OpPattern.COMM_REDUCE, _reduce(_te), _reduce_np(_np))


def _arg_reduce(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Attrs, Any], Any]:
    def compute(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
        x = args[0]
        return fn(
            x,
            list(reduce_axes(attrs, x.ndim)),
            bool(attrs.get("keepdims", False)),
            bool(attrs.get("select_last_index", False)),
        )

    return compute


def _arg_reduce_np(fn: Callable[..., Any]) -> Callable[[Sequence[np.ndarray], Attrs], Any]:
    def run(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
        x = args[0]
        axes = reduce_axes(attrs, x.ndim)
        keep = [a for a in range(x.ndim) if a not in axes]
        # Move the reduced axes last and flatten them (row-major, as topi numbers them).
        moved = np.transpose(x, (*keep, *axes)).reshape(*[x.shape[a] for a in keep], -1)
        if attrs.get("select_last_index", False):
            last = moved.shape[-1] - 1
            idx = last - fn(np.flip(moved, axis=-1), axis=-1)
        else:
            idx = fn(moved, axis=-1)
        if attrs.get("keepdims", False):
            idx = idx.reshape([1 if a in axes else x.shape[a] for a in range(x.ndim)])
        return np.asarray(idx, dtype=np.int32)

    return run


define_op("argmax", 1, OpPattern.COMM_REDUCE, _arg_reduce(topi.argmax), _arg_reduce_np(np.argmax))
define_op("argmin", 1, OpPattern.COMM_REDUCE, _arg_reduce(topi.argmin), _arg_reduce_np(np.argmin))
