"""Vision operators: ``vision.roi_align`` (Relay's name and attributes, plus ``aligned``: the
half-pixel shift of ONNX's ``half_pixel`` coordinates), NCHW only.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...ffi.errors import TVMValueError
from ...topi.vision.rcnn import roi_align_nchw
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def _roi_align(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    layout = attrs.get("layout", "NCHW")
    if layout != "NCHW":
        raise TVMValueError(f"vision.roi_align: layout {layout!r} is not supported (NCHW is)")
    return roi_align_nchw(
        args[0],
        args[1],
        tuple(int(p) for p in attrs["pooled_size"]),
        float(attrs["spatial_scale"]),
        str(attrs.get("mode", "avg")),
        int(attrs.get("sample_ratio", -1)),
        bool(attrs.get("aligned", False)),
    )


define_op("vision.roi_align", 2, OpPattern.OUT_ELEMWISE_FUSABLE, _roi_align)
