"""Layers with their own parameters (TVM's ``relay.testing.layers``): each makes the weight
variables its operator needs, named ``<name>_weight``, ``<name>_gamma``, ..., typed from the
input's shape.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ffi.errors import TVMValueError
from ...graph import Call, Expr, TensorType, Var
from .. import nn

__all__ = ["batch_norm_infer", "conv2d", "dense_add_bias", "shape_of"]


def shape_of(expr: Expr) -> tuple[int, ...]:
    """The static shape of tensor-valued ``expr``."""
    ty = expr.checked_type
    if not isinstance(ty, TensorType):
        raise TVMValueError(f"expected a tensor, got a value of type {ty}")
    return tuple(int(d) for d in ty.shape)


def _param(name: str, shape: Sequence[int], dtype: str) -> Var:
    return Var(name, TensorType(tuple(int(d) for d in shape), dtype))


def conv2d(
    data: Expr,
    channels: int,
    kernel_size: tuple[int, int],
    name: str,
    strides: tuple[int, int] = (1, 1),
    padding: tuple[int, int] = (0, 0),
    groups: int = 1,
    dtype: str = "float32",
) -> Call:
    """An NCHW convolution with a new weight ``<name>_weight`` (OIHW)."""
    in_channels = shape_of(data)[1]
    weight = _param(f"{name}_weight", (channels, in_channels // groups, *kernel_size), dtype)
    return nn.conv2d(data, weight, strides=strides, padding=padding, groups=groups)


def batch_norm_infer(
    data: Expr, name: str, epsilon: float = 1e-5, scale: bool = True, dtype: str = "float32"
) -> Expr:
    """Inference batch normalization over axis 1 with new ``<name>_gamma``, ``_beta``,
    ``_moving_mean`` and ``_moving_var``.
    """
    channels = shape_of(data)[1]
    gamma, beta, mean, var = (
        _param(f"{name}_{p}", (channels,), dtype)
        for p in ("gamma", "beta", "moving_mean", "moving_var")
    )
    return nn.batch_norm(data, gamma, beta, mean, var, epsilon=epsilon, scale=scale)[0]


def dense_add_bias(data: Expr, units: int, name: str, dtype: str = "float32") -> Call:
    """``data @ <name>_weight.T + <name>_bias``."""
    weight = _param(f"{name}_weight", (units, shape_of(data)[1]), dtype)
    bias = _param(f"{name}_bias", (units,), dtype)
    return nn.bias_add(nn.dense(data, weight), bias, axis=-1)
