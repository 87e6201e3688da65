"""Numpy references of softmax and the normalizations (TVM's ``softmax_python``,
``layer_norm_python``, ``group_norm_python``, ``batch_norm`` ...).

Statistics are taken in float32 at least (float64 stays float64); the normalized value is
rounded to the input's dtype before ``gamma`` and ``beta`` apply in that dtype, as topi's
kernels do (``rms_norm`` scales in float32 and rounds once). A ``gamma`` / ``beta`` of the
normalized axes' extents scales those axes, in the order ``axis`` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ._window import Array

__all__ = [
    "batch_norm",
    "group_norm_python",
    "instance_norm_python",
    "l2_normalize_python",
    "layer_norm_python",
    "log_softmax_python",
    "lrn_python",
    "rms_norm_python",
    "softmax_python",
]


def _wide(x: Array) -> Array:
    return x.astype(np.float64 if x.dtype == np.float64 else np.float32)


def _axes(axis: int | Sequence[int], ndim: int) -> tuple[int, ...]:
    axes = [axis] if isinstance(axis, (int, np.integer)) else list(axis)
    for a in axes:
        if not -ndim <= a < ndim:
            raise TVMValueError(f"axis {a} is out of range for a {ndim}-d input")
    return tuple(int(a) % ndim for a in axes)


def _on_axes(param: Array, axes: Sequence[int], ndim: int) -> Array:
    """``param`` (one extent per axis of ``axes``) shaped to broadcast over a ``ndim``-d array."""
    p = np.asarray(param)
    if p.ndim != len(axes):
        return p
    order = sorted(range(len(axes)), key=lambda i: axes[i])
    shape = [1] * ndim
    for i in order:
        shape[axes[i]] = p.shape[i]
    return p.transpose(order).reshape(shape)


def softmax_python(a_np: Array, axis: int = 1) -> Array:
    """``exp(x) / sum(exp(x))`` along ``axis`` (shifted by the maximum)."""
    e = np.exp(a_np - np.amax(a_np, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)  # type: ignore[no-any-return]


def log_softmax_python(a_np: Array, axis: int = 1) -> Array:
    """``x - log(sum(exp(x)))`` along ``axis`` (shifted by the maximum)."""
    shifted = a_np - np.amax(a_np, axis=axis, keepdims=True)
    return shifted - np.log(np.sum(np.exp(shifted), axis=axis, keepdims=True))  # type: ignore[no-any-return]


def _standardize(data: Array, axes: tuple[int, ...], epsilon: float) -> Array:
    x = _wide(data)
    mean = np.mean(x, axes, keepdims=True)
    var = np.var(x, axes, keepdims=True)
    return (x - mean) / np.sqrt(var + epsilon)  # type: ignore[no-any-return]


def _affine(
    x: Array, gamma: Array | None, beta: Array | None, axes: Sequence[int], dtype: Any
) -> Array:
    """Scale and shift ``x`` in ``dtype`` (the input's), rounding where topi's kernels do."""
    x = x.astype(dtype)
    if gamma is not None:
        x = x * _on_axes(gamma, axes, x.ndim)
    if beta is not None:
        x = x + _on_axes(beta, axes, x.ndim)
    return x


def layer_norm_python(
    data: Array, gamma: Array, beta: Array | None, axis: Any, epsilon: float = 1e-5
) -> Array:
    """``(x - mean) / sqrt(var + epsilon) * gamma + beta`` over ``axis``."""
    axes = _axes(axis, data.ndim)
    return _affine(_standardize(data, axes, epsilon), gamma, beta, axes, data.dtype)


def instance_norm_python(
    data: Array, gamma: Array, beta: Array | None, axis: Any, epsilon: float = 1e-5
) -> Array:
    """Layer normalization over ``axis`` (the spatial axes, per instance and channel)."""
    return layer_norm_python(data, gamma, beta, axis, epsilon)


def group_norm_python(
    data: Array,
    gamma: Array,
    beta: Array | None,
    num_groups: int,
    channel_axis: int,
    axes: Sequence[int],
    epsilon: float = 1e-5,
) -> Array:
    """Normalization over ``axes`` and the channels of each of ``num_groups`` channel groups;
    ``gamma`` and ``beta`` scale the channels.
    """
    ndim = data.ndim
    channel_axis = _axes(channel_axis, ndim)[0]
    c = data.shape[channel_axis]
    if c % num_groups:
        raise TVMValueError(f"group_norm: {c} channels do not split into {num_groups} groups")
    split = list(data.shape)
    split[channel_axis : channel_axis + 1] = [num_groups, c // num_groups]
    over = [channel_axis + 1] + [a + (a > channel_axis) for a in _axes(axes, ndim)]
    normed = _standardize(data.reshape(split), tuple(over), epsilon).reshape(data.shape)
    return _affine(normed, gamma, beta, [channel_axis], data.dtype)


def rms_norm_python(data: Array, weight: Array, axis: Any, epsilon: float = 1e-5) -> Array:
    """``x / sqrt(mean(x * x) + epsilon) * weight`` over ``axis``."""
    axes = _axes(axis, data.ndim)
    x = _wide(data)
    normed = x / np.sqrt(np.mean(np.square(x), axes, keepdims=True) + epsilon)
    out: Array = (normed * _on_axes(_wide(np.asarray(weight)), axes, x.ndim)).astype(data.dtype)
    return out


def l2_normalize_python(a_np: Array, eps: float, axis: Any = None) -> Array:
    """``x / sqrt(max(sum(x * x), eps))`` over ``axis`` (all axes when None)."""
    sqr_sum = np.sum(
        np.square(a_np), axis=axis if axis is None else _axes(axis, a_np.ndim), keepdims=True
    )
    return a_np / np.sqrt(np.maximum(sqr_sum, eps))  # type: ignore[no-any-return]


def lrn_python(a_np: Array, size: int, axis: int, bias: float, alpha: float, beta: float) -> Array:
    """Local response normalization: ``x / (bias + alpha * s / size) ** beta`` where ``s`` sums
    the squares of the ``size`` neighbours along ``axis`` (clipped at the edges).
    """
    axis = _axes(axis, a_np.ndim)[0]
    radius = size // 2
    sq = np.moveaxis(np.square(a_np.astype(np.float64)), axis, 0)
    cum = np.concatenate([np.zeros_like(sq[:1]), np.cumsum(sq, axis=0)])
    n = sq.shape[0]
    lo = np.clip(np.arange(n) - radius, 0, n)
    hi = np.clip(np.arange(n) + radius + 1, 0, n)
    sums = np.moveaxis(cum[hi] - cum[lo], 0, axis)
    return (a_np / np.power(bias + alpha * sums / size, beta)).astype(a_np.dtype)  # type: ignore[no-any-return]


def batch_norm(
    x: Array,
    gamma: Array,
    beta: Array,
    moving_mean: Array,
    moving_var: Array,
    axis: int,
    epsilon: float,
    center: bool,
    scale: bool,
    training: bool,
    momentum: float,
) -> list[Array]:
    """``[out, new_mean, new_var]`` of batch normalization along channel ``axis``: batch
    statistics (and momentum-updated moving ones) when ``training``, else the moving ones.
    """
    axis = _axes(axis, x.ndim)[0]
    shape = [1] * x.ndim
    shape[axis] = x.shape[axis]
    if training:
        others = tuple(a for a in range(x.ndim) if a != axis)
        mean, var = np.mean(x, axis=others), np.var(x, axis=others)
    else:
        mean, var = moving_mean, moving_var
    out = (x - mean.reshape(shape)) / np.sqrt(var.reshape(shape) + epsilon)
    if scale:
        out = out * gamma.reshape(shape)
    if center:
        out = out + beta.reshape(shape)
    if not training:
        return [out, moving_mean, moving_var]
    return [
        out,
        (1 - momentum) * moving_mean + momentum * mean,
        (1 - momentum) * moving_var + momentum * var,
    ]
