"""Elements chosen by position: ``one_hot``, ``trilu``, ``matrix_set_diag``,
``sequence_mask``, ``strided_set`` and ``sparse_to_dense``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..te.operation import compute
from ..te.tensor import Tensor
from ..tir.expr import ExprLike, PrimExpr, Var, const, convert
from ..tir.op import all as _all
from ..tir.op import if_then_else
from ..tir.op import max as emax
from ..tir.op import min as emin
from . import tag
from ._shape import const_int, op_error

__all__ = [
    "matrix_set_diag",
    "one_hot",
    "sequence_mask",
    "sparse_to_dense",
    "strided_set",
    "trilu",
]


def one_hot(
    indices: Tensor,
    on_value: ExprLike,
    off_value: ExprLike,
    depth: int,
    axis: int,
    dtype: str,
) -> Tensor:
    """``on_value`` where position ``k`` of the new axis ``axis`` (``-1``: last) of extent
    ``depth`` equals the index there, else ``off_value``.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> i = te.placeholder((3,), "int32", "i")
    >>> [str(d) for d in topi.one_hot(i, 1.0, 0.0, 5, -1, "float32").shape]
    ['3', '5']
    """
    ax = indices.ndim if axis == -1 else axis
    if not 0 <= ax <= indices.ndim:
        raise op_error("one_hot", "axis", axis, f"-1 or in [0, {indices.ndim}]")
    on, off = convert(on_value).astype(dtype), convert(off_value).astype(dtype)
    shape = [*indices.shape[:ax], const(depth), *indices.shape[ax:]]

    def body(*i: Var) -> PrimExpr:
        at = [*i[:ax], *i[ax + 1 :]]
        k = i[ax]
        idx = indices(*at)
        return if_then_else(idx == k.astype(idx.dtype), on, off)

    return compute(shape, body, name="T_one_hot", tag=tag.INJECTIVE)


def trilu(data: Tensor, k: ExprLike, upper: bool) -> Tensor:
    """The upper (``upper``) or lower triangle of the last two axes from diagonal ``k`` on;
    the rest is zero (numpy's ``triu``/``tril``).
    """
    if data.ndim < 2:  # noqa: PLR2004
        raise op_error("trilu", "input rank", data.ndim, "at least 2")
    kk = convert(k)

    def body(*i: Var) -> PrimExpr:
        row, col = i[-2], i[-1]
        diff = (col - row).astype(kk.dtype)
        keep = diff >= kk if upper else diff <= kk
        return if_then_else(keep, data(*i), const(0, data.dtype))

    return compute(data.shape, body, name="trilu", tag=tag.ELEMWISE)


def matrix_set_diag(
    data: Tensor, diagonal: Tensor, k: int | Sequence[int] = 0, align: str = "RIGHT_LEFT"
) -> Tensor:
    """``data`` with diagonal ``k`` of its last two axes (or the band ``k = (low, high)``) set
    from ``diagonal``. In a band, ``diagonal[..., high - d, :]`` holds diagonal ``d``, its short
    rows at the right or the left as ``align`` says for super- and sub-diagonals.
    """
    op = "matrix_set_diag"
    if isinstance(k, (list, tuple)):
        low, high = k[0], k[1] if len(k) > 1 else k[0]
    else:
        low = high = k
    if low > high:
        raise op_error(op, "k", k, "low <= high")
    if align not in ("LEFT_RIGHT", "LEFT_LEFT", "RIGHT_LEFT", "RIGHT_RIGHT"):
        raise op_error(op, "align", align, "LEFT_RIGHT, LEFT_LEFT, RIGHT_LEFT or RIGHT_RIGHT")
    if data.ndim < 2:  # noqa: PLR2004
        raise op_error(op, "input rank", data.ndim, "at least 2")
    super_right, sub_right = align[:5] == "RIGHT", align[-5:] == "RIGHT"
    rows, cols = data.shape[-2], data.shape[-1]
    width = diagonal.shape[-1]

    def body(*i: Var) -> PrimExpr:
        r, c = i[-2], i[-1]
        d = c - r
        at: list[PrimExpr] = list(i[:-2])
        pos: PrimExpr
        if low == high:
            pos = r if low >= 0 else c
        else:
            at.append(high - d)
            length_super = emin(cols - d, rows)
            length_sub = emin(cols, rows + d)
            shift_super = width - length_super if super_right else const(0)
            shift_sub = width - length_sub if sub_right else const(0)
            pos = if_then_else(d >= 0, r + shift_super, c + shift_sub)
        at.append(pos)
        in_band = _all(d >= low, d <= high)
        return if_then_else(in_band, diagonal(*at), data(*i))

    return compute(data.shape, body, name="T_matrix_set_diag", tag=tag.INJECTIVE)


def sequence_mask(
    data: Tensor, valid_length: Tensor, mask_value: float = 0, axis: int = 0
) -> Tensor:
    """``data`` with ``mask_value`` past each sequence's valid length: ``data`` is
    ``[max_len, batch, ...]`` (``axis=0``) or ``[batch, max_len, ...]`` (``axis=1``) and
    ``valid_length`` is ``[batch]``.
    """
    if axis not in (0, 1):
        raise op_error("sequence_mask", "axis", axis, "0 or 1")
    batch_axis = 1 - axis

    def body(*i: Var) -> PrimExpr:
        length = valid_length(i[batch_axis])
        inside = i[axis].astype(length.dtype) < length
        return if_then_else(inside, data(*i), const(mask_value, data.dtype))

    return compute(data.shape, body, name="T_sequence_mask", tag=tag.INJECTIVE)


def _bound(t: Tensor | None, k: int, default: PrimExpr) -> PrimExpr:
    """Entry ``k`` of a 1-d bounds tensor, or ``default`` past its end (or without one)."""
    if t is None:
        return default
    n = const_int(t.shape[0])
    if n is not None and k >= n:
        return default
    return t(const(k, t.shape[0].dtype)).astype("int32")


def strided_set(
    a: Tensor, v: Tensor, begin: Tensor, end: Tensor, strides: Tensor | None = None
) -> Tensor:
    """``a`` with ``a[begin:end:strides] = v`` (numpy's slice rules per axis; bounds are 1-d
    int tensors read at run time, shorter than ``a``'s rank for leading axes only).
    """
    for name, t in (("begin", begin), ("end", end), ("strides", strides)):
        if t is not None and t.ndim != 1:
            raise op_error("strided_set", f"{name} rank", t.ndim, "1")
    one = const(1, "int32")

    def axis_pick(k: int, i: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
        z = convert(a.shape[k]).astype("int32")
        s = _bound(strides, k, one)
        neg = s < 0
        b = _bound(begin, k, if_then_else(neg, z - 1, const(0, "int32")))
        e = _bound(end, k, if_then_else(neg, const(-1, "int32") - z, z))
        b = if_then_else(b < 0, b + z, b)
        e = if_then_else(e < 0, e + z, e)
        lo = if_then_else(neg, const(-1, "int32"), const(0, "int32"))
        hi = if_then_else(neg, z - 1, z)
        b, e = emin(emax(b, lo), hi), emin(emax(e, lo), hi)
        ii = i.astype("int32")
        inside = if_then_else(neg, (ii <= b) & (ii > e), (ii >= b) & (ii < e))
        on_grid = (ii - b) % s == 0
        return inside & on_grid, (ii - b) // s

    def body(*i: Var) -> PrimExpr:
        picks = [axis_pick(k, v_) for k, v_ in enumerate(i)]
        chosen = _all(*[p[0] for p in picks])
        return if_then_else(chosen, v(*[p[1] for p in picks]), a(*i))

    return compute(a.shape, body, name="strided_set", tag=tag.INJECTIVE)


def sparse_to_dense(
    sparse_indices: Tensor,
    output_shape: Sequence[int],
    sparse_values: Tensor,
    default_value: Tensor | ExprLike = 0,
) -> Tensor:
    """A dense ``output_shape`` tensor of ``default_value`` with ``sparse_values`` at
    ``sparse_indices`` (a scalar index, ``[n]`` indices of a 1-d output, or ``[n, rank]``
    coordinates); a scalar ``sparse_values`` fills every index. Later entries win.
    """
    op = "sparse_to_dense"
    rank = sparse_indices.ndim
    if rank > 2:  # noqa: PLR2004
        raise op_error(op, "sparse_indices rank", rank, "0, 1 or 2")
    count = 1 if rank == 0 else const_int(sparse_indices.shape[0])
    if count is None:
        raise op_error(op, "number of indices", str(sparse_indices.shape[0]), "a constant")
    width = 1 if rank < 2 else const_int(sparse_indices.shape[1])  # noqa: PLR2004
    if width is None or width != len(output_shape):
        raise op_error(op, "index width", width, f"{len(output_shape)} (the output rank)")
    dtype = sparse_values.dtype

    def value(j: int) -> PrimExpr:
        if sparse_values.ndim == 0:
            return sparse_values()
        return sparse_values(const(j))

    def default() -> PrimExpr:
        if isinstance(default_value, Tensor):
            return default_value().astype(dtype)
        return convert(default_value).astype(dtype)

    def coordinate(j: int, k: int) -> PrimExpr:
        if rank == 0:
            return sparse_indices()
        if rank == 1:
            return sparse_indices(const(j))
        return sparse_indices(const(j), const(k))

    def body(*i: Var) -> PrimExpr:
        out = default()
        for j in range(count):
            same = [i[k].astype(coordinate(j, k).dtype) == coordinate(j, k) for k in range(width)]
            out = if_then_else(_all(*same), value(j), out)
        return out

    shape: list[Any] = [const(d) for d in output_shape]
    return compute(shape, body, name="T_sparse_to_dense", tag=tag.INJECTIVE)
