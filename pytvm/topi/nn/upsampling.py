"""Upsampling by scale factors (TVM's ``upsampling`` and ``upsampling3d``): a resize to the
rounded scaled size.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ...te.tensor import Tensor
from ...tir.expr import ExprLike
from .._shape import const_int, op_error
from ..image.resize import resize2d, resize3d

__all__ = ["upsampling", "upsampling3d"]


def _scaled(op: str, data: Tensor, axis: int, scale: float) -> int:
    """``round(extent * scale)`` in float32, halves to even, as TVM's expression computes it."""
    extent = const_int(data.shape[axis])
    if extent is None or scale <= 0:
        raise op_error(
            op, f"extent of axis {axis} / scale", (str(data.shape[axis]), scale), "constant, > 0"
        )
    return int(np.round(np.float32(extent) * np.float32(scale)))


def _spatial(op: str, layout: str, names: str) -> list[int]:
    letters = [ch for ch in layout if ch.isalpha()]
    if any(letters.count(n) != 1 or n.lower() in letters for n in names):
        raise op_error(op, "layout", layout, f"one unsplit axis each of {names}")
    return [letters.index(n) for n in names]


def upsampling(
    data: Tensor,
    scale_h: float,
    scale_w: float,
    layout: str = "NCHW",
    method: str = "nearest_neighbor",
    align_corners: bool = False,
    output_shape: Sequence[ExprLike] | None = None,
) -> Tensor:
    """``data`` resized by ``scale_h`` x ``scale_w`` in ``layout`` (``NCHW``, ``NHWC``,
    packed ``NCHWxc``...) with ``"nearest_neighbor"``, ``"bilinear"`` or ``"bicubic"``;
    ``align_corners`` picks that coordinate mode over ``asymmetric``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> x = te.placeholder((1, 3, 22, 32), name="x")
    >>> [str(d) for d in topi.nn.upsampling(x, 1.954545497894287, 2.0).shape]
    ['1', '3', '43', '64']
    """
    op = "upsampling"
    ha, wa = _spatial(op, layout, "HW")
    size = (_scaled(op, data, ha, scale_h), _scaled(op, data, wa, scale_w))
    mode = "align_corners" if align_corners else "asymmetric"
    kind = method[2:] if method.startswith("bi") else method
    return resize2d(data, [0.0] * 4, size, layout, kind, mode, output_shape=output_shape)


def upsampling3d(
    data: Tensor,
    scale_d: float,
    scale_h: float,
    scale_w: float,
    layout: str = "NCDHW",
    method: str = "nearest_neighbor",
    coordinate_transformation_mode: str = "half_pixel",
    output_shape: Sequence[ExprLike] | None = None,
) -> Tensor:
    """``data`` resized by ``scale_d`` x ``scale_h`` x ``scale_w`` (``NCDHW`` or ``NDHWC``)
    with ``"nearest_neighbor"`` or ``"trilinear"``.
    """
    op = "upsampling3d"
    axes = _spatial(op, layout, "DHW")
    size = tuple(
        _scaled(op, data, a, s) for a, s in zip(axes, (scale_d, scale_h, scale_w), strict=True)
    )
    kind = method[3:] if method.startswith("tri") else method
    return resize3d(
        data, [0.0] * 6, size, layout, kind, coordinate_transformation_mode,
        output_shape=output_shape,
    )  # fmt: skip
