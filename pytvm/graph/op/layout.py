"""``layout_transform``: a tensor rearranged between layouts such as ``OIHW`` and ``OIHW16o``.

Layout passes insert it on constant weights, where constant folding computes it once.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ... import topi
from ...topi.layout import layout_axes, layout_shape
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__: list[str] = []


def layout_transform_np(x: np.ndarray, src_layout: str, dst_layout: str) -> np.ndarray:
    """``x`` in ``src_layout`` rearranged into ``dst_layout`` (numpy; see ``layout_transform``)."""
    src, dst = layout_axes(src_layout), layout_axes(dst_layout)
    out_shape = layout_shape(src_layout, dst_layout, list(x.shape))
    names = [a for a, _ in src]
    # Merge each of the source's blocks back into its primal axis: the logical tensor.
    primal = [a for a, f in src if not f]
    order: list[int] = []
    for a in primal:
        order.append(names.index(a))
        if a.lower() in names:
            order.append(names.index(a.lower()))
    logical = x.transpose(order)
    extents = {a: x.shape[names.index(a)] for a in primal}
    for a, f in src:
        if f:
            extents[a.upper()] *= f
    logical = logical.reshape([extents[a] for a in primal])
    # Split the destination's blocks off (zero-padding the axis), then order as asked.
    blocks = {a.upper(): f for a, f in dst if f}
    pads = [(0, -extents[a] % blocks[a] if a in blocks else 0) for a in primal]
    logical = np.pad(logical, pads)
    split_names: list[str] = []
    split_shape: list[int] = []
    for a, n in zip(primal, logical.shape, strict=True):
        if a in blocks:
            split_names += [a, a.lower()]
            split_shape += [n // blocks[a], blocks[a]]
        else:
            split_names.append(a)
            split_shape.append(n)
    out = logical.reshape(split_shape).transpose([split_names.index(a) for a, _ in dst])
    assert list(out.shape) == out_shape
    return np.ascontiguousarray(out)


def _evaluate(args: Sequence[np.ndarray], attrs: Attrs) -> np.ndarray:
    return layout_transform_np(args[0], attrs["src_layout"], attrs["dst_layout"])


define_op(
    "layout_transform",
    1,
    OpPattern.INJECTIVE,
    lambda args, attrs, ty: topi.layout_transform(
        args[0], attrs["src_layout"], attrs["dst_layout"]
    ),
    _evaluate,
)
