"""TVM's ``topi.nn.conv2d`` module: the 2-d convolutions by layout and the ``Workload``
record of one (sizes, padding, strides) that schedules size their tiles from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ...te.tensor import Tensor
from .._shape import const_int, op_error
from .conv_nd import conv, conv2d_hwcn, conv2d_nhwc, group_conv2d_nhwc
from .convolution import conv2d, conv2d_nchw, depthwise_conv2d_nchw, group_conv2d_nchw
from .utils import get_pad_tuple

__all__ = [
    "Workload",
    "conv",
    "conv2d",
    "conv2d_hwcn",
    "conv2d_nchw",
    "conv2d_nhwc",
    "depthwise_conv2d_nchw",
    "group_conv2d_nchw",
    "group_conv2d_nhwc",
]


class Workload(NamedTuple):
    """A 2-d convolution's description, TVM's fields."""

    in_dtype: str
    out_dtype: str | None
    height: int
    width: int
    in_filter: int
    groups: int
    out_filter: int
    kernel_h: int
    kernel_w: int
    padt: int
    padl: int
    padb: int
    padr: int
    dilation_h: int
    dilation_w: int
    stride_h: int
    stride_w: int


def shape_ints(op: str, what: str, t: Tensor) -> list[int]:
    """The constant dimensions of ``t``."""
    dims = [const_int(d) for d in t.shape]
    if any(d is None for d in dims):
        raise op_error(op, f"{what} shape", [str(d) for d in t.shape], "constant dimensions")
    return [d for d in dims if d is not None]


def pair_of(value: int | Sequence[int]) -> tuple[int, int]:
    """An int or a pair as a pair."""
    if isinstance(value, (tuple, list)):
        return int(value[0]), int(value[1])
    return int(value), int(value)  # type: ignore[arg-type]


def _get_workload(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    out_dtype: str | None,
    data_layout: str = "NCHW",
) -> Workload:
    """The :class:`Workload` of a convolution of ``data`` (``NCHW``, ``NHWC`` or ``HWCN``)
    with ``kernel`` (``OIHW`` for ``NCHW``, else ``HWIO``).
    """
    op = "conv2d workload"
    d = shape_ints(op, "data", data)
    k = shape_ints(op, "kernel", kernel)
    orders = {"NCHW": (1, 2, 3), "NHWC": (3, 1, 2), "HWCN": (2, 0, 1)}
    if data_layout not in orders:
        raise op_error(op, "data_layout", data_layout, "NCHW, NHWC or HWCN")
    ci, ih, iw = (d[i] for i in orders[data_layout])
    co, cig, kh, kw = (
        (k[0], k[1], k[2], k[3]) if data_layout == "NCHW" else (k[3], k[2], k[0], k[1])
    )
    dh, dw = pair_of(dilation)
    sh, sw = pair_of(stride)
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    if data.dtype != kernel.dtype and (data.dtype, kernel.dtype) != ("uint8", "int8"):
        raise op_error(op, "kernel dtype", kernel.dtype, f"the data's {data.dtype}")
    return Workload(
        data.dtype, out_dtype, ih, iw, ci, ci // cig, co, kh, kw,
        int(pt), int(pl), int(pb), int(pr), dh, dw, sh, sw,
    )  # fmt: skip
