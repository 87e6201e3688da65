"""Placement operators: ``on_device`` (an annotation) and ``device_copy`` (a transfer)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...ffi.errors import TVMTypeError, TVMValueError
from ..attrs import Attrs
from ..ty import TensorType, Type
from .registry import OpPattern, register_op

__all__: list[str] = []


def _same_type(types: Sequence[Type], attrs: Attrs) -> Type:
    if not isinstance(types[0], TensorType):
        raise TVMTypeError(f"placement of a tuple ({types[0]}): place its fields")
    for key in ("device_type", "src_dev_type", "dst_dev_type"):
        value = attrs.get(key)
        if value is not None and (not isinstance(value, int) or value < 1):
            raise TVMValueError(f"{key} must be a device type number >= 1, got {value!r}")
    return types[0]


def _identity(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    return args[0]


register_op(
    "on_device",
    1,
    _same_type,
    OpPattern.OPAQUE,
    _identity,
    doc="on_device(x, device_type=T): compute x on device type T (removed by placement)",
)
register_op(
    "device_copy",
    1,
    _same_type,
    OpPattern.OPAQUE,
    _identity,
    doc="device_copy(x, src_dev_type=S, dst_dev_type=D): the value copied from S to D",
)
