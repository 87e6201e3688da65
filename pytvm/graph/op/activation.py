"""Activations with attributes or learned slopes: ``nn.leaky_relu``, ``nn.prelu``, ``nn.gelu``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

_erf = np.vectorize(math.erf, otypes=[np.float64])


def _leaky_relu_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x = args[0]
    return np.where(x >= 0, x, x * attrs["alpha"]).astype(x.dtype)


define_op(
    "nn.leaky_relu",
    1,
    OpPattern.ELEMWISE,
    lambda args, attrs, ty: topi.nn.leaky_relu(args[0], attrs["alpha"]),
    _leaky_relu_np,
)


def _prelu_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, alpha = args
    axis = attrs.get("axis", 1) % x.ndim
    slope = alpha.reshape((-1,) + (1,) * (x.ndim - axis - 1))
    return np.where(x >= 0, x, x * slope).astype(x.dtype)


define_op(
    "nn.prelu",
    2,
    OpPattern.BROADCAST,
    lambda args, attrs, ty: topi.nn.prelu(args[0], args[1], attrs.get("axis", 1)),
    _prelu_np,
)


def _gelu_np(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
    x = args[0].astype(np.float64)
    if attrs.get("approximate", "none") == "tanh":
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        out = 0.5 * x * (1 + np.tanh(inner))
    else:
        out = 0.5 * x * (1 + _erf(x / math.sqrt(2.0)))
    return out.astype(args[0].dtype)


define_op(
    "nn.gelu",
    1,
    OpPattern.ELEMWISE,
    lambda args, attrs, ty: topi.nn.gelu(args[0], attrs.get("approximate", "none")),
    _gelu_np,
)
