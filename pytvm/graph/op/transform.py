"""Layout and indexing operators: ``reshape``, ``transpose``, ``concatenate``, ``split``,
``squeeze``, ``expand_dims``, ``broadcast_to``, ``tile``, ``strided_slice``, ``take``,
``where`` and ``nn.pad``.

Shapes are static: the importer resolves ONNX's computed shapes to lists of ints before it
builds these calls.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ... import topi
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []

Array = np.ndarray

define_op(
    "reshape",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.reshape(args[0], attrs["newshape"]),
    lambda args, attrs: np.reshape(args[0], attrs["newshape"]),
)
define_op(
    "transpose",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.transpose(args[0], attrs.get("axes")),
    lambda args, attrs: np.transpose(args[0], attrs.get("axes")),
)
define_op(
    "concatenate",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.concatenate(args[0], attrs.get("axis", 0)),
    lambda args, attrs: np.concatenate(args[0], axis=attrs.get("axis", 0)),
)


def _split_np(args: Sequence[Array], attrs: Attrs) -> tuple[Array, ...]:
    parts = attrs["indices_or_sections"]
    return tuple(np.split(args[0], parts, axis=attrs.get("axis", 0)))


define_op(
    "split",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.split(args[0], attrs["indices_or_sections"], attrs.get("axis", 0)),
    _split_np,
)


def _squeeze_np(args: Sequence[Array], attrs: Attrs) -> Array:
    axis = attrs.get("axis")
    return np.squeeze(args[0], axis=None if axis is None else tuple(axis))


define_op(
    "squeeze",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.squeeze(args[0], attrs.get("axis")),
    _squeeze_np,
)


def _expand_dims_np(args: Sequence[Array], attrs: Attrs) -> Array:
    x = args[0]
    axis, count = attrs["axis"], attrs.get("num_newaxis", 1)
    pos = axis if axis >= 0 else axis + x.ndim + 1
    return x.reshape(*x.shape[:pos], *([1] * count), *x.shape[pos:])


define_op(
    "expand_dims",
    1,
    OpPattern.BROADCAST,
    lambda args, attrs, ty: topi.expand_dims(args[0], attrs["axis"], attrs.get("num_newaxis", 1)),
    _expand_dims_np,
)
define_op(
    "broadcast_to",
    1,
    OpPattern.BROADCAST,
    lambda args, attrs, ty: topi.broadcast_to(args[0], attrs["shape"]),
    lambda args, attrs: np.array(np.broadcast_to(args[0], attrs["shape"])),
)
define_op(
    "tile",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.tile(args[0], attrs["reps"]),
    lambda args, attrs: np.tile(args[0], attrs["reps"]),
)


def _strided_slice(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    return topi.strided_slice(
        args[0],
        attrs["begin"],
        attrs["end"],
        attrs.get("strides"),
        attrs.get("axes"),
        attrs.get("slice_mode", "end"),
    )


def _strided_slice_np(args: Sequence[Array], attrs: Attrs) -> Array:
    x = args[0]
    begin, end = attrs["begin"], attrs["end"]
    axes = attrs.get("axes") or tuple(range(len(begin)))
    strides = attrs.get("strides") or (1,) * len(axes)
    if len(strides) == 1 and len(axes) > 1:
        strides = strides * len(axes)
    index: list[slice] = [slice(None)] * x.ndim
    for a, b, e, s in zip(axes, begin, end, strides, strict=True):
        if attrs.get("slice_mode", "end") == "size":
            e = None if e < 0 else b + e  # noqa: PLW2901 - a size becomes an end
            s = 1  # noqa: PLW2901
        index[a % x.ndim] = slice(b, e, s)
    return x[tuple(index)].copy()


define_op("strided_slice", 1, OpPattern.INJECTIVE, _strided_slice, _strided_slice_np)

_NP_TAKE_MODES = {"fast": "wrap", "wrap": "wrap", "clip": "clip"}


def _take_np(args: Sequence[Array], attrs: Attrs) -> Array:
    data, indices = args
    mode = _NP_TAKE_MODES[attrs.get("mode", "fast")]
    return np.take(data, indices.astype(np.int64), axis=attrs.get("axis"), mode=mode)  # type: ignore[call-overload,no-any-return]


def _take(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    data, indices = args
    if indices.dtype in ("int64", "uint64", "uint32"):  # index arithmetic is int32
        indices = topi.cast(indices, "int32")
    return topi.take(
        data, indices, attrs.get("axis"), attrs.get("batch_dims", 0), attrs.get("mode", "fast")
    )


define_op("take", 2, OpPattern.INJECTIVE, _take, _take_np)
define_op(
    "where",
    3,
    OpPattern.BROADCAST,
    lambda args, attrs, ty: topi.where(args[0], args[1], args[2]),
    lambda args, attrs: np.where(args[0].astype(bool), args[1], args[2]),
)

_PAD_MODES = {"reflect": "REFLECT", "edge": "EDGE", "wrap": "WRAP"}


def _pad(args: Sequence[Any], attrs: Attrs, ty: Any) -> Any:
    width = attrs["pad_width"]
    before, after = [w[0] for w in width], [w[1] for w in width]
    mode = attrs.get("pad_mode", "constant")
    if mode == "constant":
        return topi.nn.pad(args[0], before, after, attrs.get("pad_value", 0.0))
    return topi.nn.mirror_pad(args[0], before, after, _PAD_MODES.get(mode, mode))


def _pad_np(args: Sequence[Array], attrs: Attrs) -> Array:
    width = [tuple(w) for w in attrs["pad_width"]]
    mode = attrs.get("pad_mode", "constant")
    if mode == "constant":
        value = np.asarray(attrs.get("pad_value", 0.0)).astype(args[0].dtype)
        return np.pad(args[0], width, mode="constant", constant_values=value)
    return np.pad(args[0], width, mode=mode)


define_op("nn.pad", 1, OpPattern.INJECTIVE, _pad, _pad_np)
