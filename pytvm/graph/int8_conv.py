"""The integer convolution of 8-bit codes as graph calls: 8-bit data less its zero point times a
constant symmetric int8 weight, accumulated in int32 by ``qnn.conv2d`` (8-bit dot products,
``vpdpbusd``, where the target has them; a depthwise one in exact float32 lanes), plus a
constant int32 bias; and the matrix product of 8-bit rows with such a ``[K, N]`` weight as a 1x1
``qnn.conv2d`` over the rows.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..ffi.errors import TVMValueError
from .expr import Constant, Expr, call

__all__ = ["int8_conv2d", "int8_conv2d_applies", "int8_dense", "int8_groups_apply"]

_OIHW = 4
_MATRIX = 2


def int8_conv2d_applies(data_dtype: str, weight: np.ndarray, weight_zero_point: np.ndarray) -> bool:
    """Whether :func:`int8_conv2d` computes the convolution: 8-bit data, an int8 OIHW weight
    and a weight zero point of 0 (one for all channels or one per output channel).
    """
    return (
        data_dtype in ("uint8", "int8")
        and weight.dtype == np.int8
        and weight.ndim == _OIHW
        and not np.any(weight_zero_point)
    )


def int8_groups_apply(channels: int, weight: np.ndarray, groups: int) -> bool:
    """Whether ``qnn.conv2d`` lowers ``groups`` of an int8 ``[F, C / groups, KH, KW]`` weight
    over ``channels`` input channels to an integer kernel: one group, or depthwise (``groups
    == C``, one input channel a group, whole filters a channel).
    """
    if groups == 1:
        return True
    return groups == channels and weight.shape[1] == 1 and weight.shape[0] % channels == 0


def int8_conv2d(
    data: Expr,
    data_zero_point: int,
    weight: np.ndarray,
    strides: Sequence[int],
    padding: Sequence[int],
    dilation: Sequence[int],
    bias: np.ndarray | None = None,
    name: str = "",
    groups: int = 1,
) -> Expr:
    """``conv2d(data - data_zero_point, weight) + bias`` in int32 (NCHW; the data padded with
    its zero point).

    ``data``: uint8 or int8 ``[N, C, H, W]``; ``weight``: int8 ``[F, C / groups, KH, KW]``;
    ``padding``: ``(top, left, bottom, right)``; ``bias``: int32 ``[F]`` or None.

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm.graph import Var
    >>> from pytvm.graph.ty import TensorType
    >>> from pytvm.graph.int8_conv import int8_conv2d
    >>> x = Var("x", TensorType((1, 4, 8, 8), "uint8"))
    >>> y = int8_conv2d(x, 128, np.ones((2, 4, 3, 3), "int8"), (1, 1), (1, 1, 1, 1), (1, 1))
    >>> y.checked_type.shape, y.checked_type.dtype
    ((1, 2, 8, 8), 'int32')
    """
    if weight.dtype != np.int8 or weight.ndim != _OIHW:
        raise TVMValueError(
            f"int8_conv2d: weight {weight.dtype} {weight.shape}; expected int8 [F, C, KH, KW]"
        )
    out: Expr = call(
        "qnn.conv2d",
        data,
        Constant(weight),
        strides=tuple(int(s) for s in strides),
        padding=tuple(int(p) for p in padding),
        dilation=tuple(int(d) for d in dilation),
        groups=int(groups),
        input_zero_point=int(data_zero_point),
        kernel_zero_point=0,
        out_dtype="int32",
        name=name,
    )
    if bias is not None and np.any(bias):
        b = Constant(np.asarray(bias).astype(np.int32).reshape(-1))
        out = call("nn.bias_add", out, b, axis=1, name=name)
    return out


def int8_dense(rows: Expr, zero_point: int, weight: np.ndarray, name: str = "") -> Expr:
    """``(rows - zero_point) @ weight`` in int32: uint8 or int8 ``rows [M, K]``, an int8
    ``weight [K, N]`` (one 1x1 ``qnn.conv2d`` over the ``M`` rows as columns of an image).

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm.graph import Var
    >>> from pytvm.graph.ty import TensorType
    >>> from pytvm.graph.int8_conv import int8_dense
    >>> x = Var("x", TensorType((3, 8), "uint8"))
    >>> int8_dense(x, 128, np.ones((8, 5), "int8")).checked_type.shape
    (3, 5)
    """
    shape = rows.checked_type.shape  # type: ignore[union-attr]
    if (
        weight.dtype != np.int8
        or weight.ndim != _MATRIX
        or len(shape) != _MATRIX
        or shape[1] != weight.shape[0]
    ):
        raise TVMValueError(
            f"int8_dense: rows {list(shape)}, weight {weight.dtype} {weight.shape}; expected "
            "[M, K] rows and an int8 [K, N] weight"
        )
    m, k = (int(d) for d in shape)
    n = int(weight.shape[1])
    columns = call("reshape", call("transpose", rows, axes=(1, 0)), newshape=(1, k, 1, m))
    kernel = np.ascontiguousarray(weight.T).reshape(n, k, 1, 1)
    acc = int8_conv2d(columns, zero_point, kernel, (1, 1), (0, 0, 0, 0), (1, 1), None, name)
    return call("transpose", call("reshape", acc, newshape=(n, m)), axes=(1, 0))
