"""Numpy references of the indexing operators (TVM's ``gather_python``, ``gather_nd_python``,
``strided_slice_python``, ``one_hot``, ``sequence_mask``, ``matrix_set_diag``,
``searchsorted_ref``, ``nll_loss`` ...).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import numpy as np

from ...ffi.errors import TVMValueError
from ._window import Array

__all__ = [
    "gather_nd_python",
    "gather_python",
    "matrix_set_diag",
    "nll_loss",
    "one_hot",
    "searchsorted_ref",
    "sequence_mask",
    "slice_axis_python",
    "strided_set_python",
    "strided_slice_python",
]


def gather_python(data: Array, axis: int, indices: Array) -> Array:
    """``out[i..., j, k...] = data[i..., indices[i..., j, k...], k...]`` along ``axis``."""
    return np.take_along_axis(data, indices.astype(np.int64), axis=axis)


def gather_nd_python(a_np: Array, indices_np: Array) -> Array:
    """``out[y...] = a_np[indices[0, y...], ..., indices[M - 1, y...], ...]``."""
    if indices_np.ndim < 2 or indices_np.shape[0] > a_np.ndim:  # noqa: PLR2004
        raise TVMValueError(
            f"gather_nd: indices {indices_np.shape} need a leading axis of at most "
            f"{a_np.ndim} coordinates and at least one more axis"
        )
    idx = indices_np.astype(np.int64)
    return a_np[tuple(idx[i] for i in range(idx.shape[0]))]  # type: ignore[no-any-return]


def strided_slice_python(
    data: Array,
    begin: Sequence[int],
    end: Sequence[int],
    strides: Sequence[int] | None,
    slice_mode: str = "end",
    axes: Sequence[int] | None = None,
) -> Array:
    """``data[begin:end:strides]`` per axis, numpy's clamping; ``slice_mode="size"`` reads
    ``end`` as sizes (a negative size runs to the end) and ignores ``strides``; ``axes`` names
    the axes ``begin``, ``end`` and ``strides`` are for.
    """
    strides = list(strides or [])
    begin, end = list(begin), list(end)
    if axes is not None:
        rank = data.ndim
        b, e, s = [0] * rank, list(data.shape), [1] * rank
        for i, axis in enumerate(axes):
            b[axis], e[axis] = begin[i], end[i]
            if i < len(strides):
                s[axis] = strides[i]
        begin, end, strides = b, e, s
    if slice_mode not in ("end", "size"):
        raise TVMValueError(f"strided_slice: slice_mode {slice_mode!r}; expected 'end' or 'size'")
    slices = []
    for i in range(data.ndim):
        start = begin[i] if i < len(begin) else None
        step = strides[i] if slice_mode == "end" and i < len(strides) else None
        stop: int | None
        if i >= len(end):
            stop = None
        elif slice_mode == "size":
            stop = None if end[i] < 0 else (start or 0) + end[i]
        else:
            stop = end[i]
        slices.append(slice(start, stop, step))
    return data[tuple(slices)]


def strided_set_python(
    data: Array, v: Any, begin: Sequence[int], end: Sequence[int], strides: Sequence[int] | None
) -> Array:
    """A copy of ``data`` with ``data[begin:end:strides] = v``."""
    strides = list(strides or [])
    out = data.copy()
    out[
        tuple(
            slice(
                begin[i] if i < len(begin) else None,
                end[i] if i < len(end) else None,
                strides[i] if i < len(strides) else None,
            )
            for i in range(data.ndim)
        )
    ] = v
    return out


def slice_axis_python(data: Array, axis: int, begin: int, end: int | None = None) -> Array:
    """``data[begin:end]`` along ``axis``; negative ``begin`` counts from the end, ``end <= 0``
    counts from the end, ``None`` runs to it.
    """
    axis %= data.ndim
    n = data.shape[axis]
    begin = begin + n if begin < 0 else begin
    stop = n if end is None else (end + n if end <= 0 else end)
    cut = [slice(None)] * data.ndim
    cut[axis] = slice(begin, stop)
    return data[tuple(cut)]


def one_hot(
    indices: Array, on_value: Any, off_value: Any, depth: int, axis: int, dtype: Any
) -> Array:
    """``on_value`` where the new axis ``axis`` (``-1``: last) equals ``indices``, else
    ``off_value``.
    """
    axis = indices.ndim if axis == -1 else axis
    positions = np.arange(depth).reshape([depth] + [1] * (indices.ndim - axis))
    hit = np.expand_dims(indices, axis) == positions
    out: Array = np.where(hit, on_value, off_value).astype(dtype)
    return out


def sequence_mask(data: Array, valid_length: Array, mask_value: Any, axis: int) -> Array:
    """``data`` with positions ``>= valid_length[b]`` along ``axis`` (0 or 1, the other axis
    being the batch ``b``) set to ``mask_value``.
    """
    if axis not in (0, 1):
        raise TVMValueError(f"sequence_mask: axis {axis}; expected 0 or 1")
    steps = [1] * data.ndim
    steps[axis] = data.shape[axis]
    lengths = [1] * data.ndim
    lengths[1 - axis] = data.shape[1 - axis]
    mask = np.arange(data.shape[axis]).reshape(steps) >= valid_length.reshape(lengths)
    return data * (1 - mask) + mask_value * mask  # type: ignore[no-any-return]


def _diag_index(rows: int, cols: int, k: int) -> tuple[Array, Array, int]:
    n = min(cols - max(k, 0), rows + min(k, 0))
    i = np.arange(max(n, 0))
    return (i, i + k, n) if k >= 0 else (i - k, i, n)


def matrix_set_diag(
    input_np: Array, diagonal: Array, k: int | Sequence[int] = 0, align: str = "RIGHT_LEFT"
) -> Array:
    """A copy of ``input_np`` with diagonal(s) ``k`` (an int or a ``(low, high)`` band) of its
    last two axes set from ``diagonal``; ``align`` says which end a short band row sits at
    (``"LEFT_RIGHT"``: super-diagonals left, sub-diagonals right).
    """
    out = np.array(input_np, copy=True)
    rows, cols = input_np.shape[-2:]
    if isinstance(k, (tuple, list)):
        low, high = (k[0], k[0]) if len(k) < 2 or k[0] == k[1] else (k[0], k[1])  # noqa: PLR2004
        single = low == high
    else:
        low = high = k
        single = True
    if single:
        r, c, _ = _diag_index(rows, cols, low)
        m = diagonal.shape[-1]
        out[..., r[:m], c[:m]] = diagonal[..., : len(r[:m])]
        return out
    for ki in range(low, high + 1):
        r, c, n = _diag_index(rows, cols, ki)
        right = align[:5] == "RIGHT" if ki >= 0 else align[-5:] == "RIGHT"
        offset = diagonal.shape[-1] - n if right else 0
        out[..., r, c] = diagonal[..., high - ki, offset : offset + n]
    return out


def searchsorted_ref(sorted_sequence: Array, values: Array, right: bool, out_dtype: Any) -> Array:
    """Per row of the last axis, where each value would be inserted to keep the row sorted
    (after equal entries when ``right``); a 1-d ``sorted_sequence`` serves every row.
    """
    side: Literal["left", "right"] = "right" if right else "left"
    rows = values.reshape(-1, values.shape[-1])
    if sorted_sequence.ndim == 1:
        seqs = np.broadcast_to(sorted_sequence, (rows.shape[0], sorted_sequence.shape[0]))
    else:
        seqs = sorted_sequence.reshape(-1, sorted_sequence.shape[-1])
    out = np.stack([np.searchsorted(s, v, side=side) for s, v in zip(seqs, rows, strict=True)])
    return out.astype(out_dtype).reshape(values.shape)


def nll_loss(
    predictions: Array,
    targets: Array,
    weights: Array,
    reduction: str = "mean",
    ignore_index: int = -100,
) -> Array:
    """Negative log-likelihood: ``-predictions[n, targets[n, ...], ...] * weights[target]``
    (``predictions [C]`` with a scalar target: one sample), zero where the target is
    ``ignore_index``; ``"mean"`` divides the sum by the weights used,
    ``"sum"`` sums, ``"none"`` keeps each term.
    """
    if predictions.ndim == 1:  # one sample: predictions [C], a scalar target
        batched = nll_loss(predictions[None], np.asarray(targets)[None], weights, reduction,
                           ignore_index)  # fmt: skip
        return batched if reduction in ("mean", "sum") else batched[0]
    keep = targets != ignore_index
    cls = np.where(keep, targets, 0).astype(np.int64)
    picked = np.take_along_axis(predictions, np.expand_dims(cls, 1), axis=1).squeeze(1)
    w = np.where(keep, weights[cls], 0.0)
    res = -picked * w
    if reduction == "mean":
        return np.asarray(np.sum(res) / np.sum(w))
    if reduction == "sum":
        return np.asarray(np.sum(res))
    return res.astype(np.float64)
