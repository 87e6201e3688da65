"""Data layouts (``"OIHW"``, ``"OIHW16o"``, ``"NK32n"``) and ``layout_transform`` between them.

A layout names one axis per letter: an upper-case letter is a whole (primal) axis, a number
and a lower-case letter a block of that many elements split off the primal axis of the same
letter, which then counts blocks (``OIHW16o``: ``[O // 16, I, H, W, 16]``). A split whose factor
does not divide the axis pads it with zeros.
"""

from __future__ import annotations

import re

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Var, const
from ..tir.op import all as _all
from ..tir.op import if_then_else
from . import tag
from ._shape import const_int, op_error

__all__ = ["layout_axes", "layout_shape", "layout_transform"]

_TOKEN = re.compile(r"(\d*)([A-Za-z])")


def layout_axes(layout: str) -> tuple[tuple[str, int], ...]:
    """``layout`` as ``(letter, factor)`` per axis (factor 0 for a primal axis).

    Examples
    --------
    >>> from pytvm import topi
    >>> topi.layout_axes("NK16n")
    (('N', 0), ('K', 0), ('n', 16))
    """
    axes: list[tuple[str, int]] = []
    pos = 0
    for m in _TOKEN.finditer(layout):
        if m.start() != pos:
            break
        pos = m.end()
        digits, letter = m.group(1), m.group(2)
        if letter.isupper() == bool(digits) or (digits and int(digits) < 1):
            pos = -1
            break
        axes.append((letter, int(digits) if digits else 0))
    primal = [a for a, f in axes if not f]
    subs = [a.upper() for a, f in axes if f]
    if (
        pos != len(layout)
        or not layout
        or len(set(primal)) != len(primal)
        or len(set(subs)) != len(subs)
        or any(s not in primal for s in subs)
    ):
        raise op_error(
            "layout",
            "layout",
            layout,
            "upper-case axis letters, each at most once, and blocks like '16o' of those axes",
        )
    return tuple(axes)


def _logical_extents(axes: tuple[tuple[str, int], ...], shape: list[int]) -> dict[str, int]:
    """Each primal axis's element count (its blocks times the block factor)."""
    out = {a: n for (a, f), n in zip(axes, shape, strict=True) if not f}
    for (a, f), n in zip(axes, shape, strict=True):
        if f:
            if n != f:
                raise op_error("layout_transform", f"block axis {f}{a}", n, f"{f}")
            out[a.upper()] *= f
    return out


def layout_shape(src_layout: str, dst_layout: str, shape: list[int]) -> list[int]:
    """The shape in ``dst_layout`` of a tensor of ``shape`` in ``src_layout``."""
    src, dst = layout_axes(src_layout), layout_axes(dst_layout)
    _check_pair(src_layout, dst_layout, src, dst, len(shape))
    extents = _logical_extents(src, shape)
    blocks = {a.upper(): f for a, f in dst if f}
    return [f if f else -(-extents[a] // blocks[a]) if a in blocks else extents[a] for a, f in dst]


def _check_pair(
    src_layout: str,
    dst_layout: str,
    src: tuple[tuple[str, int], ...],
    dst: tuple[tuple[str, int], ...],
    ndim: int,
) -> None:
    if len(src) != ndim:
        raise op_error("layout_transform", "src_layout", src_layout, f"{ndim} axes (the rank)")
    if sorted(a for a, f in src if not f) != sorted(a for a, f in dst if not f):
        raise op_error(
            "layout_transform",
            "dst_layout",
            dst_layout,
            f"the same primal axes as {src_layout!r}",
        )


def layout_transform(data: Tensor, src_layout: str, dst_layout: str) -> Tensor:
    """``data`` (in ``src_layout``) rearranged into ``dst_layout``; padding is zero-filled.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> w = te.placeholder((64, 3, 3, 3), name="w")
    >>> [str(d) for d in topi.layout_transform(w, "OIHW", "OIHW16o").shape]
    ['4', '3', '3', '3', '16']
    """
    src, dst = layout_axes(src_layout), layout_axes(dst_layout)
    dims = [const_int(d) for d in data.shape]
    if None in dims:
        raise op_error("layout_transform", "shape", [str(d) for d in data.shape], "constants")
    shape = [d for d in dims if d is not None]
    out_shape = layout_shape(src_layout, dst_layout, shape)
    extents = _logical_extents(src, shape)
    dst_blocks = {a.upper(): f for a, f in dst if f}
    src_blocks = {a.upper(): f for a, f in src if f}
    padded = [a for a, f in dst_blocks.items() if extents[a] % f]

    def body(*idx: Var) -> PrimExpr:
        logical: dict[str, PrimExpr] = {}
        for (a, f), i in zip(dst, idx, strict=True):
            if not f:
                logical[a] = i * dst_blocks[a] if a in dst_blocks else i
        for (a, f), i in zip(dst, idx, strict=True):
            if f:
                logical[a.upper()] = logical[a.upper()] + i
        src_idx = []
        for a, f in src:
            key = a.upper()
            if f:
                src_idx.append(logical[key] % f)
            elif key in src_blocks:
                src_idx.append(logical[key] // src_blocks[key])
            else:
                src_idx.append(logical[key])
        value = data(*src_idx)
        if not padded:
            return value
        inside = _all(*(logical[a] < extents[a] for a in padded))
        return if_then_else(inside, value, const(0, data.dtype))

    name = f"T_layout_trans_{src_layout}_{dst_layout}"
    return compute(out_shape, body, name=name, tag=tag.INJECTIVE)
