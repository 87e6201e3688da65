"""Quantized operators: ``qnn.conv2d``, the int32 convolution of 8-bit codes less their zero
point, ``sum((x - input_zero_point) * w)`` with the data padded by its zero point (TVM's
``qnn.conv2d`` with a kernel zero point of 0, the zero points given as attributes).

The data is uint8 or int8 ``[N, C, H, W]``, the weight int8 ``[F, C / groups, KH, KW]`` (or, of
one group, packed ``OIHW<fb>o4i`` by ``AlterOpLayout``, depthwise ``OIHW<cb>o``, ``channels``
keeping F); the strategy
table (``topi.x86.strategy``) lowers one group through ``topi.nn.conv2d_nchw_int8`` (8-bit dot
products) and a depthwise one (``groups == C``) through ``topi.nn.depthwise_conv2d_nchw_int8``.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ...topi.x86.strategy import OpWorkload, select
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

_PACKED = re.compile(r"OIHW(\d+)o4i")
_BLOCKS = re.compile(r"OIHW(\d+)o")
_QUAD = 4


def _plain_weight(w: np.ndarray, attrs: Attrs, channels_in: int) -> np.ndarray:
    """The int8 ``[F, C, KH, KW]`` weight of ``w`` (plain, or packed ``OIHW<fb>o4i``)."""
    layout = attrs.get("kernel_layout") or "OIHW"
    if layout == "OIHW":
        return w
    if _BLOCKS.fullmatch(str(layout)) is not None:  # depthwise, in channel blocks
        blocks = w.transpose(0, 4, 1, 2, 3)
        return blocks.reshape(-1, *w.shape[1:4])[: attrs.get("channels") or None]
    if _PACKED.fullmatch(str(layout)) is None:
        raise TVMValueError(
            f"qnn.conv2d: kernel_layout {layout!r}; expected OIHW, OIHW<fb>o4i or (depthwise) "
            "OIHW<cb>o"
        )
    fo, c4, kh, kw, fb = w.shape
    raw = np.ascontiguousarray(w.astype("<i4")).view(np.int8).reshape(fo, c4, kh, kw, fb, _QUAD)
    plain = raw.transpose(0, 4, 1, 5, 2, 3).reshape(fo * fb, c4 * _QUAD, kh, kw)
    return plain[: attrs.get("channels") or None, :channels_in]


def _qnn_conv2d_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, w = args
    groups = int(attrs.get("groups", 1))
    w = _plain_weight(w, attrs, x.shape[1] // groups).astype(np.int64)
    sh, sw = attrs["strides"]
    dh, dw = attrs["dilation"]
    top, left, bottom, right = attrs["padding"]
    x = x.astype(np.int64) - int(attrs.get("input_zero_point", 0))
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = x.shape
    f, _, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, f, oh, ow), dtype=np.int64)
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i * dh : i * dh + sh * oh : sh, j * dw : j * dw + sw * ow : sw]
            grouped = patch.reshape(n, groups, -1, oh, ow)
            taps = w[:, :, i, j].reshape(groups, f // groups, -1)
            out += np.einsum("ngchw,gfc->ngfhw", grouped, taps).reshape(n, f, oh, ow)
    return out.astype(attrs.get("out_dtype") or "int32")


def _qnn_conv2d(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    data, weight = args
    workload = OpWorkload.of("qnn.conv2d", data, weight, attrs)
    return select("qnn.conv2d", workload).compute(data, weight, workload)


define_op("qnn.conv2d", 2, OpPattern.OUT_ELEMWISE_FUSABLE, _qnn_conv2d, _qnn_conv2d_np)
