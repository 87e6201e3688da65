"""TVM's ``relay.nn`` operator functions over the graph IR's ``nn.*`` operators
(``relay.nn.conv2d``, ``relay.nn.dense``, ``relay.nn.batch_norm``, ...), with TVM's signatures.

Only the NCHW/OIHW layouts are accepted: the graph IR picks blocked layouts itself.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ..ffi.errors import TVMValueError
from ..graph import Call, Expr, TensorType, call

__all__ = [
    "TupleWrapper",
    "avg_pool2d",
    "batch_flatten",
    "batch_matmul",
    "batch_norm",
    "bias_add",
    "conv2d",
    "dense",
    "global_avg_pool2d",
    "global_max_pool2d",
    "leaky_relu",
    "log_softmax",
    "max_pool2d",
    "relu",
    "softmax",
]

Ints = int | Sequence[int]


def _pair(value: Ints, what: str) -> tuple[int, int]:
    if isinstance(value, int):
        return value, value
    values = tuple(int(v) for v in value)
    if len(values) == 1:
        return values[0], values[0]
    if len(values) != 2:  # noqa: PLR2004
        raise TVMValueError(f"{what}: expected 1 or 2 values, got {list(values)}")
    return values[0], values[1]


def _padding(value: Ints) -> tuple[int, int, int, int]:
    """TVM's 2-d padding: one value, (vertical, horizontal) or (top, left, bottom, right)."""
    values = (int(value),) if isinstance(value, int) else tuple(int(v) for v in value)
    if len(values) == 1:
        return values[0], values[0], values[0], values[0]
    if len(values) == 2:  # noqa: PLR2004
        return values[0], values[1], values[0], values[1]
    if len(values) == 4:  # noqa: PLR2004
        return values[0], values[1], values[2], values[3]
    raise TVMValueError(f"padding: expected 1, 2 or 4 values, got {list(values)}")


def _layouts(op: str, **layouts: str) -> None:
    for name, (given, plain) in {k: (v, _PLAIN[k]) for k, v in layouts.items()}.items():
        if given and given != plain:
            raise TVMValueError(f"relay.nn.{op}: {name}={given!r} is not supported; use {plain!r}")


_PLAIN = {"data_layout": "NCHW", "kernel_layout": "OIHW", "layout": "NCHW", "out_layout": ""}


def conv2d(
    data: Expr,
    weight: Expr,
    strides: Ints = (1, 1),
    padding: Ints = (0, 0),
    dilation: Ints = (1, 1),
    groups: int = 1,
    channels: int | None = None,
    kernel_size: Ints | None = None,
    data_layout: str = "NCHW",
    kernel_layout: str = "OIHW",
    out_layout: str = "",
    out_dtype: str = "",
) -> Call:
    """2-d convolution of NCHW ``data`` with OIHW ``weight``."""
    _layouts("conv2d", data_layout=data_layout, kernel_layout=kernel_layout, out_layout=out_layout)
    wshape = weight.checked_type.shape  # type: ignore[union-attr]
    if channels is not None and int(channels) != int(wshape[0]):
        raise TVMValueError(f"relay.nn.conv2d: channels={channels}, the weight has {wshape[0]}")
    if kernel_size is not None and _pair(kernel_size, "kernel_size") != tuple(wshape[2:]):
        raise TVMValueError(
            f"relay.nn.conv2d: kernel_size={kernel_size}, the weight's is {tuple(wshape[2:])}"
        )
    return call(
        "nn.conv2d",
        data,
        weight,
        strides=_pair(strides, "strides"),
        padding=_padding(padding),
        dilation=_pair(dilation, "dilation"),
        groups=int(groups),
        **({"out_dtype": out_dtype} if out_dtype else {}),
    )


def dense(data: Expr, weight: Expr, units: int | None = None, out_dtype: str = "") -> Call:
    """``data @ weight.T`` (weight in (units, in_features))."""
    if units is not None and int(units) != int(weight.checked_type.shape[0]):  # type: ignore[union-attr]
        raise TVMValueError(f"relay.nn.dense: units={units}, the weight has a different count")
    return call("nn.dense", data, weight, **({"out_dtype": out_dtype} if out_dtype else {}))


def batch_matmul(
    x: Expr, y: Expr, out_dtype: str = "", transpose_a: bool = False, transpose_b: bool = True
) -> Call:
    """Batched matrix product (``y`` transposed by default, as TVM)."""
    extra = {"out_dtype": out_dtype} if out_dtype else {}
    return call(
        "nn.batch_matmul",
        x,
        y,
        transpose_a=bool(transpose_a),
        transpose_b=bool(transpose_b),
        **extra,
    )


def bias_add(data: Expr, bias: Expr, axis: int = 1) -> Call:
    """``data`` plus the vector ``bias`` along ``axis``."""
    return call("nn.bias_add", data, bias, axis=int(axis))


def relu(data: Expr) -> Call:
    """``max(data, 0)``."""
    return call("nn.relu", data)


def leaky_relu(data: Expr, alpha: float = 0.01) -> Call:
    """``data`` where positive, else ``alpha * data``."""
    return call("nn.leaky_relu", data, alpha=float(alpha))


def softmax(data: Expr, axis: int = -1) -> Call:
    """Softmax along ``axis``."""
    return call("nn.softmax", data, axis=int(axis))


def log_softmax(data: Expr, axis: int = -1) -> Call:
    """Log of the softmax along ``axis``."""
    return call("nn.log_softmax", data, axis=int(axis))


def _pool(
    kind: str,
    data: Expr,
    pool_size: Ints,
    strides: Ints,
    dilation: Ints,
    padding: Ints,
    layout: str,
    ceil_mode: bool,
    **extra: Any,
) -> Call:
    _layouts(f"{kind}_pool2d", layout=layout)
    return call(
        f"nn.{kind}_pool2d",
        data,
        pool_size=_pair(pool_size, "pool_size"),
        strides=_pair(strides, "strides"),
        dilation=_pair(dilation, "dilation"),
        padding=_padding(padding),
        ceil_mode=bool(ceil_mode),
        **extra,
    )


def max_pool2d(
    data: Expr,
    pool_size: Ints = (1, 1),
    strides: Ints = (1, 1),
    dilation: Ints = (1, 1),
    padding: Ints = (0, 0),
    layout: str = "NCHW",
    out_layout: str = "",
    ceil_mode: bool = False,
) -> Call:
    """2-d max pooling of NCHW ``data``."""
    _layouts("max_pool2d", out_layout=out_layout)
    return _pool("max", data, pool_size, strides, dilation, padding, layout, ceil_mode)


def avg_pool2d(
    data: Expr,
    pool_size: Ints = (1, 1),
    strides: Ints = (1, 1),
    dilation: Ints = (1, 1),
    padding: Ints = (0, 0),
    layout: str = "NCHW",
    out_layout: str = "",
    ceil_mode: bool = False,
    count_include_pad: bool = False,
) -> Call:
    """2-d average pooling of NCHW ``data``."""
    _layouts("avg_pool2d", out_layout=out_layout)
    return _pool(
        "avg",
        data,
        pool_size,
        strides,
        dilation,
        padding,
        layout,
        ceil_mode,
        count_include_pad=bool(count_include_pad),
    )


def global_avg_pool2d(data: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    """The mean of each channel of NCHW ``data`` (shape (N, C, 1, 1))."""
    _layouts("global_avg_pool2d", layout=layout, out_layout=out_layout)
    return call("nn.global_avg_pool2d", data)


def global_max_pool2d(data: Expr, layout: str = "NCHW", out_layout: str = "") -> Call:
    """The maximum of each channel of NCHW ``data`` (shape (N, C, 1, 1))."""
    _layouts("global_max_pool2d", layout=layout, out_layout=out_layout)
    return call("nn.global_max_pool2d", data)


def batch_flatten(data: Expr) -> Call:
    """``data`` as (batch, everything else): a reshape to two dimensions."""
    ty = data.checked_type
    if not isinstance(ty, TensorType) or not ty.shape:
        raise TVMValueError(f"relay.nn.batch_flatten: expected a tensor of rank >= 1, got {ty}")
    shape = tuple(int(d) for d in ty.shape)
    return call("reshape", data, newshape=(shape[0], math.prod(shape[1:])))


@dataclass(frozen=True, slots=True)
class TupleWrapper:
    """The several results of one operator (TVM's ``relay.TupleWrapper``): ``out[0]``."""

    fields: tuple[Expr, ...]

    def __getitem__(self, index: int) -> Expr:
        return self.fields[index]

    def __len__(self) -> int:
        return len(self.fields)

    def astuple(self) -> tuple[Expr, ...]:
        """The results as a Python tuple."""
        return self.fields


def batch_norm(
    data: Expr,
    gamma: Expr,
    beta: Expr,
    moving_mean: Expr,
    moving_var: Expr,
    axis: int = 1,
    epsilon: float = 1e-5,
    center: bool = True,
    scale: bool = True,
) -> TupleWrapper:
    """Inference batch normalization: ``(normalized, moving_mean, moving_var)`` (TVM's three
    results; in inference the statistics are the moving ones, unchanged).
    """
    out = call(
        "nn.batch_norm",
        data,
        gamma,
        beta,
        moving_mean,
        moving_var,
        axis=int(axis),
        epsilon=float(epsilon),
        center=bool(center),
        scale=bool(scale),
    )
    return TupleWrapper((out, moving_mean, moving_var))
