"""Elementwise and broadcast operators: arithmetic, comparisons, logic and math functions.

Integer semantics are C's (and ONNX's): ``divide`` rounds toward zero, ``mod`` takes the sign
of the dividend, ``floor_divide``/``floor_mod`` round toward negative infinity.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

Array = np.ndarray


def _is_int(a: Array) -> bool:
    return bool(np.issubdtype(a.dtype, np.integer))


def _divide_np(a: Array, b: Array) -> Array:
    dtype = np.result_type(a, b)
    if not np.issubdtype(dtype, np.integer):
        return np.asarray(np.divide(a, b), dtype=dtype)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.floor_divide(a, b)
        inexact = (np.mod(a, b) != 0) & ((a < 0) != (b < 0))
    return np.asarray(np.where(inexact, q + 1, q), dtype=dtype)


def _power_np(a: Array, b: Array) -> Array:
    dtype = np.result_type(a, b)
    if np.issubdtype(dtype, np.integer):
        return np.asarray(np.power(a.astype(np.float64), b.astype(np.float64)), dtype=dtype)
    return np.asarray(np.power(a, b), dtype=dtype)


def _power(a: Any, b: Any) -> Any:
    if a.dtype.startswith(("int", "uint")):
        wide = topi.power(topi.cast(a, "float64"), topi.cast(b, "float64"))
        return topi.cast(wide, a.dtype)
    return topi.power(a, b)


def _floor_divide_np(a: Array, b: Array) -> Any:
    with np.errstate(divide="ignore", invalid="ignore"):
        if _is_int(a):
            return np.floor_divide(a, b)
        return np.floor(a / b).astype(np.result_type(a, b))


_BINARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "add": (topi.add, np.add),
    "subtract": (topi.subtract, np.subtract),
    "multiply": (topi.multiply, np.multiply),
    "divide": (topi.divide, _divide_np),
    "floor_divide": (topi.floor_divide, _floor_divide_np),
    "mod": (topi.mod, np.fmod),
    "floor_mod": (topi.floor_mod, np.mod),
    "power": (_power, _power_np),
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
    "logical_xor": (topi.logical_xor, np.logical_xor),
}


def _float_fn(fn: Callable[[Array], Array]) -> Callable[[Array], Array]:
    """``fn`` evaluated in float64 and rounded back to the input's type (no overflow warnings)."""

    def run(x: Array) -> Array:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return np.asarray(fn(x.astype(np.float64)), dtype=x.dtype)

    return run


_erf = np.vectorize(math.erf, otypes=[np.float64])

_UNARY: dict[str, tuple[Callable[..., Any], Callable[..., Any]]] = {
    "nn.relu": (topi.nn.relu, lambda x: np.maximum(x, 0).astype(x.dtype)),
    "exp": (topi.exp, _float_fn(np.exp)),
    "log": (topi.log, _float_fn(np.log)),
    "sqrt": (topi.sqrt, _float_fn(np.sqrt)),
    "rsqrt": (topi.rsqrt, _float_fn(lambda x: 1 / np.sqrt(x))),
    "tanh": (topi.tanh, _float_fn(np.tanh)),
    "sigmoid": (topi.sigmoid, _float_fn(lambda x: 1 / (1 + np.exp(-x)))),
    "erf": (topi.erf, _float_fn(_erf)),
    "sin": (topi.sin, _float_fn(np.sin)),
    "cos": (topi.cos, _float_fn(np.cos)),
    "tan": (topi.tan, _float_fn(np.tan)),
    "sinh": (topi.sinh, _float_fn(np.sinh)),
    "cosh": (topi.cosh, _float_fn(np.cosh)),
    "asin": (topi.asin, _float_fn(np.arcsin)),
    "acos": (topi.acos, _float_fn(np.arccos)),
    "atan": (topi.atan, _float_fn(np.arctan)),
    "asinh": (topi.asinh, _float_fn(np.arcsinh)),
    "acosh": (topi.acosh, _float_fn(np.arccosh)),
    "atanh": (topi.atanh, _float_fn(np.arctanh)),
    "abs": (topi.abs, np.abs),
    "negative": (topi.negative, np.negative),
    "sign": (topi.sign, np.sign),
    "floor": (topi.floor, np.floor),
    "ceil": (topi.ceil, np.ceil),
    "round": (topi.round, np.round),
    "logical_not": (topi.logical_not, np.logical_not),
    "copy": (topi.identity, np.copy),
}


def _binary(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Attrs, Any], Any]:
    return lambda args, attrs, ty: fn(args[0], args[1])


def _binary_np(fn: Callable[..., Any]) -> Callable[[Sequence[Array], Attrs], Any]:
    def run(args: Sequence[Array], attrs: Attrs) -> Array:
        with np.errstate(all="ignore"):
            return np.asarray(fn(args[0], args[1]))

    return run


def _unary(fn: Callable[..., Any]) -> Callable[[Sequence[Any], Attrs, Any], Any]:
    return lambda args, attrs, ty: fn(args[0])


def _unary_np(fn: Callable[..., Any]) -> Callable[[Sequence[Array], Attrs], Any]:
    def run(args: Sequence[Array], attrs: Attrs) -> Array:
        out = np.asarray(fn(args[0]))
        return out if out.dtype == np.bool_ else out.astype(args[0].dtype)

    return run


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


def _cast_np(args: Sequence[Array], attrs: Attrs) -> Array:
    with np.errstate(invalid="ignore", over="ignore"):
        return args[0].astype(attrs["dtype"])


define_op(
    "cast",
    1,
    OpPattern.ELEMWISE,
    lambda args, attrs, ty: topi.cast(args[0], attrs["dtype"]),
    _cast_np,
)
