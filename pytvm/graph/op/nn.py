"""Neural-network operators: convolution, dense, bias addition."""

from __future__ import annotations

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _conv2d(args: list, attrs: Attrs, ty: object) -> object:  # type: ignore[type-arg]
    data, weight = args
    groups = attrs.get("groups", 1)
    strides, padding, dilation = attrs["strides"], attrs["padding"], attrs["dilation"]
    out_dtype = attrs.get("out_dtype") or None
    channels = int(data.shape[1])
    if groups == 1:
        return topi.nn.conv2d_nchw(data, weight, strides, padding, dilation, out_dtype)
    if groups == channels and int(weight.shape[1]) == 1:
        # [C*M, 1, KH, KW] as the depthwise kernel [C, M, KH, KW]
        mult = int(weight.shape[0]) // channels
        kernel = topi.reshape(weight, (channels, mult, weight.shape[2], weight.shape[3]))
        return topi.nn.depthwise_conv2d_nchw(data, kernel, strides, padding, dilation, out_dtype)
    return topi.nn.group_conv2d_nchw(data, weight, strides, padding, dilation, groups, out_dtype)


def _conv2d_np(args: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, w = args
    sh, sw = attrs["strides"]
    dh, dw = attrs["dilation"]
    top, left, bottom, right = attrs["padding"]
    groups = attrs.get("groups", 1)
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    out = np.zeros((n, f, oh, ow), dtype=np.float64)
    fg = f // groups
    for g in range(groups):
        xs = x[:, g * cg : (g + 1) * cg]
        ws = w[g * fg : (g + 1) * fg]
        for i in range(kh):
            for j in range(kw):
                patch = xs[:, :, i * dh : i * dh + sh * oh : sh, j * dw : j * dw + sw * ow : sw]
                out[:, g * fg : (g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, ws[:, :, i, j])
    return out.astype(x.dtype)


define_op("nn.conv2d", 2, OpPattern.OUT_ELEMWISE_FUSABLE, _conv2d, _conv2d_np)  # type: ignore[arg-type]

define_op(
    "nn.dense",
    2,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    lambda args, attrs, ty: topi.nn.dense(args[0], args[1], None, attrs.get("out_dtype") or None),
    lambda args, attrs: (args[0] @ args[1].T).astype(args[0].dtype),
)


def _bias_add(args: list, attrs: Attrs, ty: object) -> object:  # type: ignore[type-arg]
    data, bias = args
    axis = attrs.get("axis", 1) % data.ndim
    expanded = topi.expand_dims(bias, 1, data.ndim - axis - 1) if data.ndim - axis > 1 else bias
    return topi.add(data, expanded)


def _bias_add_np(args: list[np.ndarray], attrs: Attrs) -> np.ndarray:
    data, bias = args
    axis = attrs.get("axis", 1) % data.ndim
    return data + bias.reshape((-1,) + (1,) * (data.ndim - axis - 1))


define_op("nn.bias_add", 2, OpPattern.BROADCAST, _bias_add, _bias_add_np)  # type: ignore[arg-type]
