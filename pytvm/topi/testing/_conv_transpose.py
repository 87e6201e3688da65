"""Numpy references of the transposed convolutions (TVM's ``conv1d_transpose_ncw_python``,
``conv2d_transpose_nchw_python`` / ``_nhwc_python``, ``conv3d_transpose_ncdhw_python``).

A transposed convolution with stride ``s``, padding ``(b, a)`` and output padding ``op`` over
a ``K`` tap kernel is a plain correlation of the input stretched by ``s`` (zeros between
neighbours), padded ``K - 1 - b`` before and ``K - 1 - a + op`` after, with the kernel flipped
and its in/out channel axes swapped; the output has ``(S - 1) * s - b - a + K + op`` points.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..nn.utils import get_pad_tuple_generic
from ._window import Array, correlate, dilate_python, ints

__all__ = [
    "conv1d_transpose_ncw_python",
    "conv2d_transpose_nchw_python",
    "conv2d_transpose_nhwc_python",
    "conv3d_transpose_ncdhw_python",
    "group_conv1d_transpose_ncw_python",
]


def conv_transpose_nc(
    data: Array, weight: Array, stride: Any, padding: Any, output_padding: Any, groups: int = 1
) -> Array:
    """Transposed convolution of ``data [N, C, *S]`` with ``weight [C, F // groups, *K]``."""
    dims = data.ndim - 2
    kernel = list(weight.shape[2:])
    strides = ints(stride, dims, "stride")
    opad = ints(output_padding, dims, "output_padding")
    if any(o >= s for o, s in zip(opad, strides, strict=True)):
        raise TVMValueError(
            f"conv_transpose: output_padding {opad} must be less than the stride {strides}"
        )
    c, fg = weight.shape[:2]
    if c != data.shape[1] or c % groups:
        raise TVMValueError(
            f"conv_transpose: weight {weight.shape} does not match {data.shape[1]} input "
            f"channels in {groups} groups (expected [C, F // groups, *K])"
        )
    before, after = get_pad_tuple_generic(padding, kernel)
    stretched = dilate_python(data, (1, 1, *strides))
    back_before = [k - 1 - b for k, b in zip(kernel, before, strict=True)]
    back_after = [k - 1 - a + o for k, a, o in zip(kernel, after, opad, strict=True)]
    cg = c // groups
    w = weight.reshape(groups, cg, fg, *kernel).swapaxes(1, 2).reshape(groups * fg, cg, *kernel)
    w = np.flip(w, axis=tuple(range(2, 2 + dims)))
    out = correlate(stretched, w, (1,) * dims, back_before, back_after, None, groups)
    return out.astype(data.dtype) if np.issubdtype(data.dtype, np.floating) else out


def conv1d_transpose_ncw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, output_padding: Any
) -> Array:
    """1-d transposed convolution: ``a_np [N, C, W]``, ``w_np [C, F, KW]``."""
    return conv_transpose_nc(a_np, w_np, stride, padding, output_padding)


def group_conv1d_transpose_ncw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, output_padding: Any, groups: int = 1
) -> Array:
    """Grouped 1-d transposed convolution: ``w_np [C, F // groups, KW]``."""
    return conv_transpose_nc(a_np, w_np, stride, padding, output_padding, groups)


def conv2d_transpose_nchw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, output_padding: Any, groups: int = 1
) -> Array:
    """2-d transposed convolution: ``a_np [N, C, H, W]``, ``w_np [C, F // groups, KH, KW]``."""
    return conv_transpose_nc(a_np, w_np, stride, padding, output_padding, groups)


_TO_IOHW = {"HWIO": (2, 3, 0, 1), "HWOI": (3, 2, 0, 1), "OIHW": (1, 0, 2, 3), "IOHW": (0, 1, 2, 3)}


def conv2d_transpose_nhwc_python(
    a_nhwc: Array,
    weight: Array,
    weight_format: str,
    stride: Any,
    padding: Any,
    output_padding: Any = (0, 0),
) -> Array:
    """2-d transposed convolution of ``a_nhwc [N, H, W, C]``; ``weight`` is in
    ``weight_format`` (``HWIO``, ``HWOI``, ``OIHW`` or ``IOHW``).
    """
    if weight_format not in _TO_IOHW:
        raise TVMValueError(
            f"conv2d_transpose_nhwc_python: weight_format {weight_format!r}; expected one of "
            f"{sorted(_TO_IOHW)}"
        )
    w = weight.transpose(_TO_IOHW[weight_format])
    out = conv_transpose_nc(a_nhwc.transpose(0, 3, 1, 2), w, stride, padding, output_padding)
    return out.transpose(0, 2, 3, 1)


def conv3d_transpose_ncdhw_python(
    a_np: Array, w_np: Array, stride: Any, padding: Any, output_padding: Any, groups: int = 1
) -> Array:
    """3-d transposed convolution: ``a_np [N, C, D, H, W]``, ``w_np [C, F // groups, KD, KH,
    KW]``.
    """
    return conv_transpose_nc(a_np, w_np, stride, padding, output_padding, groups)
