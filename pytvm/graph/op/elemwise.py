"""Elementwise and broadcast operators: arithmetic, comparisons, activations, math functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (topi.add, np.add),
    "subtract": (topi.subtract, np.subtract),
    "multiply": (topi.multiply, np.multiply),
    "divide": (topi.divide, lambda a, b: np.divide(a, b).astype(np.result_type(a, b))),
    "power": (topi.power, np.power),
    "maximum": (topi.maximum, np.maximum),
    "minimum": (topi.minimum, np.minimum),
    "greater": (topi.greater, np.greater),
    "less": (topi.less, np.less),
    "greater_equal": (topi.greater_equal, np.greater_equal),
    "less_equal": (topi.less_equal, np.less_equal),
    "equal": (topi.equal, np.equal),
    "not_equal": (topi.not_equal, np.not_equal),
    "logical_and": (topi.logical_and, np.logical_and),
    "logical_or": (topi.logical_or, np.logical_or),
}

_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "nn.relu": (topi.nn.relu, lambda x: np.maximum(x, 0).astype(x.dtype)),
    "exp": (topi.exp, np.exp),
    "log": (topi.log, np.log),
    "sqrt": (topi.sqrt, np.sqrt),
    "rsqrt": (topi.rsqrt, lambda x: (1 / np.sqrt(x)).astype(x.dtype)),
    "tanh": (topi.tanh, np.tanh),
    "sigmoid": (topi.sigmoid, lambda x: (1 / (1 + np.exp(-x))).astype(x.dtype)),
    "abs": (topi.abs, np.abs),
    "negative": (topi.negative, np.negative),
    "floor": (topi.floor, np.floor),
    "ceil": (topi.ceil, np.ceil),
    "round": (topi.round, np.round),
    "copy": (topi.identity, np.copy),
}


def _binary(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Attrs, Any], Any]:
    return lambda args, attrs, ty: fn(args[0], args[1])


def _binary_np(fn: Callable[..., Any]) -> Callable[[Sequence[np.ndarray], Attrs], Any]:
    return lambda args, attrs: np.asarray(fn(args[0], args[1]))


def _unary(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Attrs, Any], Any]:
    return lambda args, attrs, ty: fn(args[0])


def _unary_np(fn: Callable[..., Any]) -> Callable[[Sequence[np.ndarray], Attrs], Any]:
    return lambda args, attrs: np.asarray(fn(args[0])).astype(args[0].dtype)


for _name, (_te, _np) in _BINARY.items():
    define_op(_name, 2, OpPattern.BROADCAST, _binary(_te), _binary_np(_np))
for _name, (_te, _np) in _UNARY.items():
    define_op(_name, 1, OpPattern.ELEMWISE, _unary(_te), _unary_np(_np))

define_op(
    "clip",
    1,
    OpPattern.ELEMWISE,
    lambda args, attrs, ty: topi.clip(args[0], attrs["a_min"], attrs["a_max"]),
    lambda args, attrs: np.clip(args[0], attrs["a_min"], attrs["a_max"]).astype(args[0].dtype),
)
define_op(
    "cast",
    1,
    OpPattern.ELEMWISE,
    lambda args, attrs, ty: topi.cast(args[0], attrs["dtype"]),
    lambda args, attrs: args[0].astype(attrs["dtype"]),
)
