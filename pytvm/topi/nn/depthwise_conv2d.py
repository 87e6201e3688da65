"""TVM's ``topi.nn.depthwise_conv2d`` module: the depthwise convolutions and the
``Workload`` record of one that schedules size their tiles from.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from ...te.tensor import Tensor
from .._shape import op_error
from .conv2d import pair_of, shape_ints
from .conv_nd import depthwise_conv2d_nhwc
from .convolution import depthwise_conv2d_nchw
from .utils import get_pad_tuple

__all__ = ["Workload", "depthwise_conv2d_nchw", "depthwise_conv2d_nhwc"]


class Workload(NamedTuple):
    """A depthwise convolution's description, TVM's fields."""

    in_dtype: str
    out_dtype: str | None
    height: int
    width: int
    in_filter: int
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


def _get_workload(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: Any,
    dilation: int | Sequence[int],
    out_dtype: str | None,
    data_layout: str = "NCHW",
) -> Workload:
    """The :class:`Workload` of a depthwise convolution: ``NCHW`` data with a
    ``[C, M, KH, KW]`` kernel, ``NHWC`` with ``[KH, KW, C, M]``, or ``NCHWc`` with
    ``[C/c, M/m, KH, KW, m, c]``.
    """
    op = "depthwise_conv2d workload"
    d = shape_ints(op, "data", data)
    k = shape_ints(op, "kernel", kernel)
    if data_layout == "NCHW":
        ci, ih, iw = d[1], d[2], d[3]
        fc, mult, kh, kw = k
    elif data_layout == "NHWC":
        ih, iw, ci = d[1], d[2], d[3]
        kh, kw, fc, mult = k
    elif data_layout == "NCHWc":
        ci, ih, iw = d[1] * d[4], d[2], d[3]
        fc, mult, kh, kw = k[0] * k[5], k[1] * k[4], k[2], k[3]
    else:
        raise op_error(op, "data_layout", data_layout, "NCHW, NHWC or NCHWc")
    if ci != fc:
        raise op_error(op, "filter channels", fc, f"the data's {ci} channels")
    dh, dw = pair_of(dilation)
    sh, sw = pair_of(stride)
    pt, pl, pb, pr = get_pad_tuple(padding, ((kh - 1) * dh + 1, (kw - 1) * dw + 1))
    return Workload(
        data.dtype, out_dtype, ih, iw, ci, fc * mult, kh, kw,
        int(pt), int(pl), int(pb), int(pr), dh, dw, sh, sw,
    )  # fmt: skip
