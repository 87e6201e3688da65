"""Tensors whose elements are another's, placed elsewhere: ``flip``, ``reverse_sequence``,
``stack``, ``repeat``, ``expand_like``, ``adv_index``, ``unravel_index``, ``tensordot``.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ffi.errors import TVMValueError
from ..te.operation import compute, reduce_axis
from ..te.reduction import sum as _sum
from ..te.tensor import Tensor
from ..tir.expr import PrimExpr, Select, Var, const, convert
from . import tag
from ._shape import const_int, normalize_axes, normalize_axis, op_error
from .broadcast import broadcast_shape

__all__ = [
    "adv_index",
    "expand_like",
    "flip",
    "repeat",
    "reverse_sequence",
    "stack",
    "tensordot",
    "unravel_index",
]


def flip(a: Tensor, axis: int = 0) -> Tensor:
    """``a`` reversed along ``axis``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((2, 3), name="A")
    >>> [str(d) for d in topi.flip(A, 1).shape]
    ['2', '3']
    """
    ax = normalize_axis("flip", axis, a.ndim)

    def body(*i: Var) -> PrimExpr:
        at: list[PrimExpr] = list(i)
        at[ax] = a.shape[ax] - 1 - i[ax]
        return a(*at)

    return compute(a.shape, body, name="T_reverse", tag=tag.INJECTIVE)


def reverse_sequence(
    a: Tensor, seq_lengths: Tensor, seq_axis: int = 1, batch_axis: int = 0
) -> Tensor:
    """``a`` with the first ``seq_lengths[b]`` elements along ``seq_axis`` of each batch ``b``
    (along ``batch_axis``) reversed; lengths above the axis' extent reverse all of it.
    """
    op = "reverse_sequence"
    sa = normalize_axis(op, seq_axis, a.ndim, "seq_axis")
    ba = normalize_axis(op, batch_axis, a.ndim, "batch_axis")
    if sa == ba or seq_lengths.ndim != 1:
        raise op_error(op, "axes/seq_lengths", (seq_axis, batch_axis), "distinct, 1-d lengths")
    batch, count = const_int(a.shape[ba]), const_int(seq_lengths.shape[0])
    if batch is not None and count is not None and batch != count:
        # TVM's message, its spelling kept: callers match it
        raise TVMValueError(
            "For reverse_sequnece seq_lengths size should match with dimension of batch axis, "
            f"but got dimension of batch_axis = {batch}, and seq_length size = {count}"
        )
    extent = a.shape[sa]

    def body(*i: Var) -> PrimExpr:
        n = seq_lengths(i[ba])
        pos = i[sa].astype(n.dtype)
        full = convert(extent).astype(n.dtype)
        length = Select(n > full, full, n)
        at: list[PrimExpr] = list(i)
        at[sa] = Select(pos < length, length - 1 - pos, pos).astype(i[sa].dtype)
        return a(*at)

    return compute(a.shape, body, name="T_reverse_sequence", tag=tag.INJECTIVE)


def stack(a: Sequence[Tensor], axis: int) -> Tensor:
    """The tensors of ``a`` (one shape) joined along a new axis ``axis``."""
    if not a:
        raise op_error("stack", "inputs", list(a), "at least one tensor")
    ax = normalize_axis("stack", axis, a[0].ndim + 1)
    shape = [*a[0].shape[:ax], const(len(a)), *a[0].shape[ax:]]

    def body(*i: Var) -> PrimExpr:
        rest = [*i[:ax], *i[ax + 1 :]]
        out = a[-1](*rest)
        for k in range(len(a) - 2, -1, -1):
            out = Select(i[ax] == k, a[k](*rest), out)
        return out

    return compute(shape, body, name="T_stack", tag=tag.INJECTIVE)


def repeat(a: Tensor, repeats: int, axis: int) -> Tensor:
    """Each element of ``a`` ``repeats`` times in a row along ``axis``."""
    if repeats < 1:
        raise op_error("repeat", "repeats", repeats, "a positive int")
    ax = normalize_axis("repeat", axis, a.ndim)
    shape = list(a.shape)
    shape[ax] = shape[ax] * repeats

    def body(*i: Var) -> PrimExpr:
        at: list[PrimExpr] = list(i)
        at[ax] = i[ax] // repeats
        return a(*at)

    return compute(shape, body, name="T_repeat", tag=tag.BROADCAST)


def expand_like(a: Tensor, shape_like: Tensor, axis: Sequence[int]) -> Tensor:
    """``a`` broadcast to ``shape_like``'s shape along the new axes ``axis`` (a 1-element
    ``a`` fills it).
    """
    axes = list(axis)
    if len(axes) + a.ndim != shape_like.ndim:
        if a.ndim == 1 and len(axes) == shape_like.ndim:
            return compute(shape_like.shape, lambda *i: a(0), name="T_expand_like")
        raise op_error(
            "expand_like", "axis", axes, f"{shape_like.ndim - a.ndim} new axes of {shape_like.ndim}"
        )
    new = normalize_axes("expand_like", axes, shape_like.ndim)

    def body(*i: Var) -> PrimExpr:
        return a(*[v for k, v in enumerate(i) if k not in new])

    return compute(shape_like.shape, body, name="T_expand_like", tag=tag.BROADCAST)


def adv_index(data: Tensor, indices: Sequence[Tensor]) -> Tensor:
    """Numpy's advanced indexing ``data[indices[0], indices[1], ...]``: the index tensors
    broadcast together and select along the leading axes; the rest are kept.
    """
    if not indices or len(indices) > data.ndim:
        raise op_error("adv_index", "indices", len(indices), f"1..{data.ndim} index tensors")
    bshape: list[PrimExpr] = []
    for t in indices:
        bshape = broadcast_shape("adv_index", bshape, list(t.shape))
    nb = len(bshape)
    shape = [*bshape, *data.shape[len(indices) :]]

    def body(*i: Var) -> PrimExpr:
        at: list[PrimExpr] = []
        for t in indices:
            off = nb - t.ndim
            pos = [
                const(0) if const_int(d) == 1 and const_int(bshape[off + k]) != 1 else i[off + k]
                for k, d in enumerate(t.shape)
            ]
            at.append(t(*pos))
        return data(*at, *i[nb:])

    return compute(shape, body, name="advanced_index", tag=tag.INJECTIVE)


def unravel_index(indices: Tensor, shape: Tensor) -> Tensor:
    """Numpy's ``unravel_index``: the coordinates in ``shape`` (a 1-d tensor) of the flat
    ``indices`` (0-d or 1-d), as ``[len(shape)]`` or ``[len(shape), n]``.
    """
    rank = const_int(shape.shape[0]) if shape.ndim == 1 else None
    if rank is None or indices.ndim > 1:
        raise op_error("unravel_index", "shapes", (indices.ndim, shape.ndim), "0/1-d, constant")
    dtype = indices.dtype
    out_shape = [const(rank), *indices.shape]

    def body(*i: Var) -> PrimExpr:
        flat = indices(*i[1:])
        coords = []
        rest = flat
        for k in range(rank - 1, -1, -1):
            d = shape(const(k)).astype(dtype)
            coords.append(rest % d)
            rest = rest // d
        coords.reverse()
        out = coords[-1]
        for k in range(rank - 2, -1, -1):
            out = Select(i[0] == k, coords[k], out)
        return out

    return compute(out_shape, body, name="T_unravel_index", tag=tag.INJECTIVE)


def tensordot(a: Tensor, b: Tensor, axes: int | Sequence[Sequence[int]]) -> Tensor:
    """Numpy's ``tensordot``: sum over the last ``axes`` axes of ``a`` against the first of
    ``b``, or over the paired axes ``axes = (a_axes, b_axes)``.
    """
    if isinstance(axes, int):
        a_axes = list(range(a.ndim - axes, a.ndim))
        b_axes = list(range(axes))
    else:
        a_axes = [normalize_axis("tensordot", x, a.ndim) for x in axes[0]]
        b_axes = [normalize_axis("tensordot", x, b.ndim) for x in axes[1]]
    if len(a_axes) != len(b_axes):
        raise op_error("tensordot", "axes", axes, "as many axes of a as of b")
    red = [reduce_axis((0, a.shape[x]), name=f"k{n}") for n, x in enumerate(a_axes)]
    a_keep = [x for x in range(a.ndim) if x not in a_axes]
    b_keep = [x for x in range(b.ndim) if x not in b_axes]
    shape = [a.shape[x] for x in a_keep] + [b.shape[x] for x in b_keep]

    def body(*i: Var) -> PrimExpr:
        ai: list[PrimExpr] = [const(0)] * a.ndim
        bi: list[PrimExpr] = [const(0)] * b.ndim
        for x, v in zip(a_keep, i[: len(a_keep)], strict=True):
            ai[x] = v
        for x, v in zip(b_keep, i[len(a_keep) :], strict=True):
            bi[x] = v
        for xa, xb, r in zip(a_axes, b_axes, red, strict=True):
            ai[xa] = bi[xb] = r.var
        product = a(*ai) * b(*bi)
        return _sum(product, axis=red) if red else product

    return compute(shape, body, name="T_tensordot", tag=tag.COMM_REDUCE if red else tag.INJECTIVE)
