"""Neural-network operators: convolutions, matrix products, bias addition.

Which kernel computes a convolution or a matrix product is the CPU strategy table's choice
(``topi.x86.strategy``); the numpy reference reads the attributes alone.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ...topi.x86.strategy import OpWorkload, select
from ..attrs import Attrs
from .define import define_op
from .layout import layout_transform_np
from .registry import OpPattern

__all__: list[str] = []


def _packed_layout(attrs: Attrs, key: str, plain: str) -> str | None:
    """The blocked layout ``attrs[key]`` names (None: the operator's plain layout)."""
    layout = attrs.get(key) or plain
    return None if layout == plain else str(layout)


def _strategy(op: str) -> Any:
    """The compute of ``op``: the strategy table's row for the operands and attributes."""

    def compute(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
        data, weight = args
        workload = OpWorkload.of(op, data, weight, attrs)
        return select(op, workload).compute(data, weight, workload)

    return compute


def _conv2d_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, w = args
    layout = _packed_layout(attrs, "kernel_layout", "OIHW")
    if layout is not None:
        w = layout_transform_np(w, layout, "OIHW")[: attrs.get("channels") or None]
    sh, sw = attrs["strides"]
    dh, dw = attrs["dilation"]
    top, left, bottom, right = attrs["padding"]
    groups = attrs.get("groups", 1)
    dtype = attrs.get("out_dtype") or x.dtype
    x = np.pad(x, ((0, 0), (0, 0), (top, bottom), (left, right)))
    n, _, h, wd = x.shape
    f, cg, kh, kw = w.shape
    oh = (h - dh * (kh - 1) - 1) // sh + 1
    ow = (wd - dw * (kw - 1) - 1) // sw + 1
    xg = x.reshape(n, groups, cg, h, wd).astype(np.float64)
    wg = w.reshape(groups, f // groups, cg, kh, kw).astype(np.float64)
    out = np.zeros((n, groups, f // groups, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xg[:, :, :, i * dh : i * dh + sh * oh : sh, j * dw : j * dw + sw * ow : sw]
            out += np.einsum("ngchw,gfc->ngfhw", patch, wg[:, :, :, i, j])
    return out.reshape(n, f, oh, ow).astype(dtype)


define_op("nn.conv2d", 2, OpPattern.OUT_ELEMWISE_FUSABLE, _strategy("nn.conv2d"), _conv2d_np)


def _conv2d_transpose(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    return topi.nn.conv2d_transpose_nchw(
        args[0],
        args[1],
        attrs["strides"],
        attrs["padding"],
        attrs.get("out_dtype") or None,
        attrs.get("output_padding", (0, 0)),
        attrs.get("dilation", (1, 1)),
        attrs.get("groups", 1),
    )


def _conv2d_transpose_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    x, w = args
    sh, sw = attrs["strides"]
    dh, dw = attrs.get("dilation", (1, 1))
    oph, opw = attrs.get("output_padding", (0, 0))
    top, left, bottom, right = attrs["padding"]
    groups = attrs.get("groups", 1)
    n, c, h, wd = x.shape
    _, fg, kh, kw = w.shape
    full_h = (h - 1) * sh + dh * (kh - 1) + 1 + oph
    full_w = (wd - 1) * sw + dw * (kw - 1) + 1 + opw
    cg = c // groups
    xg = x.reshape(n, groups, cg, h, wd).astype(np.float64)
    wg = w.reshape(groups, cg, fg, kh, kw).astype(np.float64)
    out = np.zeros((n, groups, fg, full_h, full_w), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            contrib = np.einsum("ngchw,gcf->ngfhw", xg, wg[:, :, :, i, j])
            out[:, :, :, i * dh : i * dh + sh * h : sh, j * dw : j * dw + sw * wd : sw] += contrib
    out = out[:, :, :, top : full_h - bottom, left : full_w - right]
    return out.reshape(n, groups * fg, *out.shape[3:]).astype(attrs.get("out_dtype") or x.dtype)


define_op(
    "nn.conv2d_transpose",
    2,
    OpPattern.OUT_ELEMWISE_FUSABLE,
    _conv2d_transpose,
    _conv2d_transpose_np,
)


def _subpixel_shuffle(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    return topi.nn.subpixel_shuffle_nchw(
        args[0], attrs["factors"], attrs.get("begin", (0, 0)), attrs.get("out_size")
    )


def _subpixel_shuffle_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    z = args[0]
    n, c, qh, qw = z.shape
    fh, fw = attrs["factors"]
    bh, bw = attrs.get("begin", (0, 0))
    oh, ow = attrs.get("out_size") or (qh * fh - bh, qw * fw - bw)
    y = z.reshape(n, c // (fh * fw), fh, fw, qh, qw).transpose(0, 1, 4, 2, 5, 3)
    y = y.reshape(n, c // (fh * fw), qh * fh, qw * fw)
    return y[:, :, bh : bh + oh, bw : bw + ow].copy()


# the phases of a transposed convolution computed as one convolution, interleaved and cropped
define_op("nn.subpixel_shuffle", 1, OpPattern.INJECTIVE, _subpixel_shuffle, _subpixel_shuffle_np)


def _out_dtype(args: Sequence[np.ndarray], attrs: Attrs) -> Any:
    return attrs.get("out_dtype") or args[0].dtype


def _matmul_np(a: np.ndarray, b: np.ndarray, dtype: Any) -> Any:
    if np.issubdtype(a.dtype, np.floating):
        return np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(dtype)
    return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(dtype)


def _dense_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    data, weight = args
    layout = _packed_layout(attrs, "weight_layout", "NK")
    if layout is not None:
        weight = layout_transform_np(weight, layout, "NK")[: attrs.get("units")]
    return _matmul_np(data, weight.T, _out_dtype(args, attrs))  # type: ignore[no-any-return]


define_op("nn.dense", 2, OpPattern.OUT_ELEMWISE_FUSABLE, _strategy("nn.dense"), _dense_np)


def _flip(x: np.ndarray, transpose: bool) -> np.ndarray:
    return np.swapaxes(x, -1, -2) if transpose else x


def _define_matmul(name: str, transpose_b: bool) -> None:
    """Define product ``name`` of two operands; ``transpose_b`` is its attribute's default."""
    define_op(
        name,
        2,
        OpPattern.OUT_ELEMWISE_FUSABLE,
        _strategy(name),
        lambda args, attrs: _matmul_np(
            _flip(args[0], attrs.get("transpose_a", False)),
            _flip(args[1], attrs.get("transpose_b", transpose_b)),
            _out_dtype(args, attrs),
        ),
    )


_define_matmul("nn.matmul", transpose_b=False)
_define_matmul("nn.batch_matmul", transpose_b=True)


def _bias_add(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    data, bias = args
    axis = attrs.get("axis", 1) % data.ndim
    expanded = topi.expand_dims(bias, 1, data.ndim - axis - 1) if data.ndim - axis > 1 else bias
    return topi.add(data, expanded)


def _bias_add_np(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    data, bias = args
    axis = attrs.get("axis", 1) % data.ndim
    return data + bias.reshape((-1,) + (1,) * (data.ndim - axis - 1))


define_op("nn.bias_add", 2, OpPattern.BROADCAST, _bias_add, _bias_add_np)
