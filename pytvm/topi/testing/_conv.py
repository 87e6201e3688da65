"""Numpy references of the forward convolutions in every layout TVM tests (TVM's
``conv1d_ncw_python`` ... ``conv2d_backward_weight_python``).

Each one moves its layout to channels first and calls :func:`._window.correlate`. ``padding``
follows ``topi.nn.utils.get_pad_tuple*``: an int, one value per spatial axis, a before and an
after per axis, or ``"SAME"`` / ``"VALID"``. Results have the input's floating dtype (int64 for
integer inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..nn.utils import get_pad_tuple_generic
from ._window import Array, correlate, ints

__all__ = [
    "conv1d_ncw_python",
    "conv2d_backward_weight_python",
    "conv2d_hwcn_python",
    "conv2d_nchw_python",
    "conv2d_nhwc_python",
    "conv3d_ncdhw_python",
    "conv3d_ndhwc_python",
    "depthwise_conv2d_python_nchw",
    "depthwise_conv2d_python_nchwc",
    "depthwise_conv2d_python_nhwc",
    "group_conv1d_ncw_python",
]


def _result(out: Array, like: Array) -> Array:
    return out.astype(like.dtype) if np.issubdtype(like.dtype, np.floating) else out


def conv_nc(
    data: Array,
    weight: Array,
    stride: Any,
    padding: Any,
    dilation: Any = 1,
    groups: int = 1,
) -> Array:
    """Convolution of channels-first ``data [N, C, *S]`` with ``weight [F, C // groups, *K]``;
    ``"SAME"`` padding is computed on the dilated kernel.
    """
    if data.ndim != weight.ndim or data.ndim < 3:  # noqa: PLR2004
        raise TVMValueError(
            f"convolution: data {data.shape} and weight {weight.shape} must have the same rank "
            "(at least 3: batch or filters, channels, spatial axes)"
        )
    dims = data.ndim - 2
    strides = ints(stride, dims, "stride")
    dil = ints(dilation, dims, "dilation")
    spans = [(k - 1) * d + 1 for k, d in zip(weight.shape[2:], dil, strict=True)]
    before, after = get_pad_tuple_generic(padding, spans)
    return _result(correlate(data, weight, strides, before, after, dil, groups), data)


def conv1d_ncw_python(a_np: Array, w_np: Array, stride: Any, padding: Any, dilation: Any) -> Array:
    """1-d convolution: ``a_np [N, C, W]``, ``w_np [F, C, KW]``."""
    return conv_nc(a_np, w_np, stride, padding, dilation)


def group_conv1d_ncw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, dilation: Any, groups: int
) -> Array:
    """Grouped 1-d convolution: ``w_np [F, C // groups, KW]``."""
    return conv_nc(a_np, w_np, stride, padding, dilation, groups)


def conv2d_nchw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, groups: int = 1
) -> Array:
    """2-d convolution: ``a_np [N, C, H, W]``, ``w_np [F, C // groups, KH, KW]``."""
    return conv_nc(a_np, w_np, stride, padding, 1, groups)


def conv2d_nhwc_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, groups: int = 1
) -> Array:
    """2-d convolution: ``a_np [N, H, W, C]``, ``w_np [KH, KW, C // groups, F]`` (HWIO)."""
    out = conv_nc(
        a_np.transpose(0, 3, 1, 2), w_np.transpose(3, 2, 0, 1), stride, padding, 1, groups
    )
    return out.transpose(0, 2, 3, 1)


def conv2d_hwcn_python(a_np: Array, w_np: Array, stride: Any, padding: Any) -> Array:
    """2-d convolution: ``a_np [H, W, C, N]``, ``w_np [KH, KW, C, F]``; result ``[OH, OW, F,
    N]``.
    """
    out = conv_nc(a_np.transpose(3, 2, 0, 1), w_np.transpose(3, 2, 0, 1), stride, padding)
    return out.transpose(2, 3, 1, 0)


def conv3d_ncdhw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, groups: int = 1
) -> Array:
    """3-d convolution: ``a_np [N, C, D, H, W]``, ``w_np [F, C // groups, KD, KH, KW]``."""
    return conv_nc(a_np, w_np, stride, padding, 1, groups)


def conv3d_ndhwc_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, groups: int = 1
) -> Array:
    """3-d convolution: ``a_np [N, D, H, W, C]``, ``w_np [KD, KH, KW, C // groups, F]``."""
    data = a_np.transpose(0, 4, 1, 2, 3)
    out = conv_nc(data, w_np.transpose(4, 3, 0, 1, 2), stride, padding, 1, groups)
    return out.transpose(0, 2, 3, 4, 1)


def depthwise_conv2d_python_nchw(
    input_np: Array, filter_np: Array, stride: Any, padding: Any
) -> Array:
    """Depthwise convolution: ``input_np [N, C, H, W]``, ``filter_np [C, M, KH, KW]``; output
    channel ``c * M + m`` is channel ``c`` under filter ``(c, m)``.
    """
    c, m, kh, kw = filter_np.shape
    return conv_nc(input_np, filter_np.reshape(c * m, 1, kh, kw), stride, padding, 1, c)


def depthwise_conv2d_python_nhwc(
    input_np: Array, filter_np: Array, stride: Any, padding: Any
) -> Array:
    """Depthwise convolution: ``input_np [N, H, W, C]``, ``filter_np [KH, KW, C, M]``."""
    out = depthwise_conv2d_python_nchw(
        input_np.transpose(0, 3, 1, 2), filter_np.transpose(2, 3, 0, 1), stride, padding
    )
    return out.transpose(0, 2, 3, 1)


def depthwise_conv2d_python_nchwc(
    input_np: Array, filter_np: Array, stride: Any, padding: Any
) -> Array:
    """Depthwise convolution in blocked layouts: ``input_np [N, C // cb, H, W, cb]``,
    ``filter_np [OC // ob, M // mb, KH, KW, mb, ob]``; result ``[N, OC // ob, OH, OW, ob]``.
    """
    n, cc, h, w, cb = input_np.shape
    occ, mc, kh, kw, mb, ob = filter_np.shape
    data = input_np.transpose(0, 1, 4, 2, 3).reshape(n, cc * cb, h, w)
    filt = filter_np.transpose(0, 5, 1, 4, 2, 3).reshape(occ * ob, mc * mb, kh, kw)
    out = depthwise_conv2d_python_nchw(data, filt, stride, padding)
    oh, ow = out.shape[2:]
    return out.reshape(n, occ, ob, oh, ow).transpose(0, 1, 3, 4, 2)


def _backward_weight_nchw(
    dy: Array, x: Array, kernel_size: Sequence[int], stride: Any, padding: Any, groups: int
) -> Array:
    n, c, h, w = x.shape
    _, k, p, q = dy.shape
    r, s = ints(kernel_size, 2, "kernel_size")
    sh, sw = ints(stride, 2, "stride")
    ph, pw = ints(padding, 2, "padding")
    if c % groups or k % groups:
        raise TVMValueError(
            f"conv2d_backward_weight: {c} channels and {k} filters do not split into {groups} "
            "groups"
        )
    after = (max(0, (p - 1) * sh + r - h - ph), max(0, (q - 1) * sw + s - w - pw))
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (ph, after[0]), (pw, after[1])))
    xg = xp.reshape(n, groups, c // groups, *xp.shape[2:])
    dyg = dy.astype(np.float64).reshape(n, groups, k // groups, p, q)
    dw = np.zeros((groups, k // groups, c // groups, r, s))
    for i in range(r):
        for j in range(s):
            patch = xg[:, :, :, i : i + (p - 1) * sh + 1 : sh, j : j + (q - 1) * sw + 1 : sw]
            dw[..., i, j] = np.einsum("ngkpq,ngcpq->gkc", dyg, patch)
    return dw.reshape(k, c // groups, r, s).astype(dy.dtype)


def conv2d_backward_weight_python(
    dy_np: Array,
    x_np: Array,
    kernel_size: Sequence[int],
    stride: Any,
    padding: Any,
    layout: str = "NCHW",
    groups: int = 1,
    channels: int | None = None,
) -> Array:
    """The gradient of a 2-d convolution's weight from the output gradient ``dy_np`` and the
    input ``x_np``; ``padding`` is ``(pad_h, pad_w)`` before each axis. ``layout`` is ``NCHW``
    (weight ``OIHW``) or ``NHWC`` (weight ``OHWI``); ``channels`` is the filter count.
    """
    if channels is not None and channels != dy_np.shape[1 if layout == "NCHW" else 3]:
        raise TVMValueError(f"conv2d_backward_weight: channels {channels} != dy's channels")
    if layout == "NCHW":
        return _backward_weight_nchw(dy_np, x_np, kernel_size, stride, padding, groups)
    if layout != "NHWC":
        raise TVMValueError(f"conv2d_backward_weight: layout {layout!r}; expected NCHW or NHWC")
    dw = _backward_weight_nchw(
        dy_np.transpose(0, 3, 1, 2),
        x_np.transpose(0, 3, 1, 2),
        kernel_size,
        stride,
        padding,
        groups,
    )
    return dw.transpose(0, 2, 3, 1)
