"""Normalizations: ``nn.batch_norm`` (inference, one output), ``nn.layer_norm``,
``nn.softmax``, ``nn.log_softmax``, ``nn.lrn``.

``nn.layer_norm`` normalizes over ``axis`` (an int or a list of axes); ``gamma`` and ``beta``
have the shape of those axes.

``nn.batch_norm`` here is the inference form: ``(data, gamma, beta, moving_mean, moving_var)``
to the normalized tensor alone (Relay's returns a tuple whose first field is that tensor).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

Array = np.ndarray


def _along(v: Array, axis: int, ndim: int) -> Array:
    return v.reshape((-1,) + (1,) * (ndim - axis - 1))


def _batch_norm(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    data, gamma, beta, mean, var = args
    return topi.nn.batch_norm(
        data,
        gamma,
        beta,
        mean,
        var,
        attrs.get("axis", 1),
        attrs.get("epsilon", 1e-5),
        attrs.get("center", True),
        attrs.get("scale", True),
    )[0]


def _batch_norm_np(args: Sequence[Array], attrs: Attrs) -> Any:
    x, gamma, beta, mean, var = (a.astype(np.float64) for a in args)
    axis = attrs.get("axis", 1) % x.ndim
    out = (x - _along(mean, axis, x.ndim)) / np.sqrt(
        _along(var, axis, x.ndim) + attrs.get("epsilon", 1e-5)
    )
    if attrs.get("scale", True):
        out = out * _along(gamma, axis, x.ndim)
    if attrs.get("center", True):
        out = out + _along(beta, axis, x.ndim)
    return out.astype(args[0].dtype)


define_op("nn.batch_norm", 5, OpPattern.BROADCAST, _batch_norm, _batch_norm_np)


def _norm_axes(attrs: Attrs, ndim: int) -> tuple[int, ...]:
    axis = attrs.get("axis", -1)
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    return tuple(sorted(a % ndim for a in axes))


def _layer_norm(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    data, gamma, beta = args
    axes = list(_norm_axes(attrs, data.ndim))
    return topi.nn.layer_norm(data, gamma, beta, axes, attrs.get("epsilon", 1e-5))


def _layer_norm_np(args: Sequence[Array], attrs: Attrs) -> Any:
    x, gamma, beta = (a.astype(np.float64) for a in args)
    axes = _norm_axes(attrs, x.ndim)
    mean = x.mean(axis=axes, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=axes, keepdims=True)
    out = (x - mean) / np.sqrt(var + attrs.get("epsilon", 1e-5))
    shape = [x.shape[a] if a in axes else 1 for a in range(x.ndim)]
    return (out * gamma.reshape(shape) + beta.reshape(shape)).astype(args[0].dtype)


define_op("nn.layer_norm", 3, OpPattern.OPAQUE, _layer_norm, _layer_norm_np)


def _softmax_np(args: Sequence[Array], attrs: Attrs) -> Any:
    x = args[0].astype(np.float64)
    axis = attrs.get("axis", -1)
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return (e / e.sum(axis=axis, keepdims=True)).astype(args[0].dtype)


def _log_softmax_np(args: Sequence[Array], attrs: Attrs) -> Any:
    x = args[0].astype(np.float64)
    axis = attrs.get("axis", -1)
    shifted = x - x.max(axis=axis, keepdims=True)
    out = shifted - np.log(np.exp(shifted).sum(axis=axis, keepdims=True))
    return out.astype(args[0].dtype)


# Softmax and log-softmax fuse as reductions (TVM keeps them opaque): the elementwise and
# injective operators feeding them (attention's scale and mask) are inlined into their first
# pass over each row instead of making a pass of their own over memory; (1,4,1500,1500) scale,
# mask and softmax at 1 thread: 6.2 ms as two kernels, 3.8 ms as one.
define_op(
    "nn.softmax",
    1,
    OpPattern.COMM_REDUCE,
    lambda args, attrs, ty: topi.nn.softmax(args[0], attrs.get("axis", -1)),
    _softmax_np,
)
define_op(
    "nn.log_softmax",
    1,
    OpPattern.COMM_REDUCE,
    lambda args, attrs, ty: topi.nn.log_softmax(args[0], attrs.get("axis", -1)),
    _log_softmax_np,
)


def _lrn_np(args: Sequence[Array], attrs: Attrs) -> Any:
    x = args[0].astype(np.float64)
    size, axis = attrs["size"], attrs.get("axis", 1) % x.ndim
    alpha, beta, bias = attrs.get("alpha", 1e-4), attrs.get("beta", 0.75), attrs.get("bias", 2.0)
    lo, hi = (size - 1) // 2, size // 2
    sq = np.moveaxis(x * x, axis, 0)
    padded = np.concatenate([np.zeros((lo, *sq.shape[1:])), sq, np.zeros((hi, *sq.shape[1:]))])
    window = np.sum([padded[k : k + sq.shape[0]] for k in range(size)], axis=0)
    scale = (bias + alpha / size * np.moveaxis(window, 0, axis)) ** beta
    return (x / scale).astype(args[0].dtype)


define_op(
    "nn.lrn",
    1,
    OpPattern.OPAQUE,
    lambda args, attrs, ty: topi.nn.lrn(
        args[0],
        attrs["size"],
        attrs.get("axis", 1),
        attrs.get("alpha", 1e-4),
        attrs.get("beta", 0.75),
        attrs.get("bias", 2.0),
    ),
    _lrn_np,
)
