"""Matrix products: ``dense`` (weight ``[N, K]``), ``matmul``, the packed-weight ``dense_pack``
and ``batch_matmul``.

``dense_pack`` reads the weight as panels ``[N // bn, K, bn]`` so the innermost loop of the
product walks ``bn`` contiguous output columns; :func:`dense_pack_weight` is the packing stage
(a compute a schedule can place, or a graph compiler can fold into a constant).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import IterVar, PrimExpr, Var, const
from ...tir.op import if_then_else
from ...tir.op import min as min_of
from .. import tag
from .._shape import const_int, op_error
from .._target import vector_lanes
from ..broadcast import broadcast_shape
from ..generic._tiling import register_row_block, vector_registers

__all__ = [
    "batch_matmul",
    "dense",
    "dense_pack",
    "dense_pack_weight",
    "matmul",
    "matmul_pack",
    "pack_panels",
    "panel_row_block",
]

_PACKED_NDIM = 3


def _check_k(op: str, ka: PrimExpr, kb: PrimExpr) -> None:
    ca, cb = const_int(ka), const_int(kb)
    if ca is not None and cb is not None and ca != cb:
        raise op_error(op, "reduction extents", (ca, cb), "equal K of both operands")


def _cast(v: PrimExpr, dtype: str) -> PrimExpr:
    return v if v.dtype == dtype else v.astype(dtype)


def _add_bias(op: str, out: Tensor, bias: Tensor | None) -> Tensor:
    if bias is None:
        return out
    if bias.ndim != 1 or (
        const_int(bias.shape[0]) is not None
        and const_int(bias.shape[0]) != const_int(out.shape[-1])
    ):
        raise op_error(op, "bias shape", [str(d) for d in bias.shape], f"[{out.shape[-1]}]")
    return compute(
        out.shape,
        lambda i, j: out(i, j) + _cast(bias(j), out.dtype),
        name="T_add",
        tag=tag.BROADCAST,
    )


def matmul(
    tensor_a: Tensor,
    tensor_b: Tensor,
    bias: Tensor | None = None,
    out_dtype: str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
) -> Tensor:
    """``op(A) @ op(B) (+ bias)`` for 2-d ``A`` and ``B`` (``op`` transposes when asked).

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((5, 7), name="A")
    >>> B = te.placeholder((7, 3), name="B")
    >>> [str(d) for d in topi.nn.matmul(A, B).shape]
    ['5', '3']
    """
    for name, t in (("tensor_a", tensor_a), ("tensor_b", tensor_b)):
        if t.ndim != 2:  # noqa: PLR2004
            raise op_error("matmul", f"{name} rank", t.ndim, "2")
    dtype = out_dtype or tensor_a.dtype
    m, ka = (tensor_a.shape[1], tensor_a.shape[0]) if transpose_a else tensor_a.shape
    kb, n = (tensor_b.shape[1], tensor_b.shape[0]) if transpose_b else tensor_b.shape
    _check_k("matmul", ka, kb)
    k = reduce_axis((0, ka), name="k")

    def body(i: Var, j: Var) -> PrimExpr:
        a = tensor_a(k, i) if transpose_a else tensor_a(i, k)
        b = tensor_b(j, k) if transpose_b else tensor_b(k, j)
        return _sum(_cast(a, dtype) * _cast(b, dtype), axis=k)  # type: ignore[no-any-return]

    suffix = ("T" if transpose_a else "N") + ("T" if transpose_b else "N")
    kind = tag.DENSE if transpose_b else tag.MATMUL  # matmul: columns contiguous in B
    out = compute((m, n), body, name=f"T_matmul_{suffix}", tag=kind)
    return _add_bias("matmul", out, bias)


def dense(
    data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """``data @ weight.T (+ bias)``: data ``[M, K]``, weight ``[N, K]``, bias ``[N]``."""
    return matmul(data, weight, bias, out_dtype, False, True)


def default_panel_width(dtype: str, units: int | None = None) -> int:
    """The panel width ``bn`` of packed weights: two vectors of ``dtype`` on the target, or
    one when ``units`` (the output columns, if known) fit in one vector. On a one-lane CPU (a
    Cortex-M) a panel is as many columns as a register tile keeps accumulators (half its
    registers: 4), fewer when ``units`` is smaller.
    """
    lanes = vector_lanes(dtype)
    if lanes == 1:
        cap = max(1, vector_registers(dtype) // 2)
        return cap if units is None else max(1, min(cap, units))
    return lanes if units is not None and units <= lanes else 2 * lanes


def panel_row_block(rows: int, bn: int, dtype: str) -> int:
    """Rows of one register tile of a panel product (:func:`~pytvm.topi.generic._tiling.
    register_row_block` for ``bn`` columns): the product's rows are padded to a multiple of it.
    """
    return register_row_block(rows, max(1, -(-bn // vector_lanes(dtype))), dtype)


def dense_pack_weight(weight: Tensor, bn: int | None = None) -> Tensor:
    """``weight [N, K]`` packed into panels ``[ceil(N / bn), K, bn]`` (zero-filled past N)."""
    if weight.ndim != 2:  # noqa: PLR2004
        raise op_error("dense_pack_weight", "weight rank", weight.ndim, "2")
    return pack_panels(weight, bn, transpose=True)


def pack_panels(tensor_b: Tensor, bn: int | None = None, transpose: bool = False) -> Tensor:
    """The right operand of a product in column panels, zero-filled past its ``N`` columns.

    ``tensor_b`` is ``[..., K, N]`` (``[..., N, K]`` with ``transpose``); the result is
    ``[..., ceil(N / bn), K, bn]``: each panel's ``bn`` columns are contiguous for every ``k``.
    ``bn`` defaults to :func:`default_panel_width`.
    """
    if tensor_b.ndim < 2:  # noqa: PLR2004
        raise op_error("pack_panels", "rank", tensor_b.ndim, "at least 2")
    *lead, d0, d1 = tensor_b.shape
    n, kk = (d0, d1) if transpose else (d1, d0)
    cn = const_int(n)
    if cn is None:
        raise op_error("pack_panels", "N", str(n), "a constant")
    width = default_panel_width(tensor_b.dtype, cn) if bn is None else bn
    if width < 1:
        raise op_error("pack_panels", "bn", bn, "a positive int")
    panels = -(-cn // width)

    def body(*idx: Var) -> PrimExpr:
        *b, p, k, c = idx
        col = p * width + c
        v = tensor_b(*b, col, k) if transpose else tensor_b(*b, k, col)
        if cn % width == 0:
            return v
        return if_then_else(col < cn, v, const(0, tensor_b.dtype))

    name = "T_dense_pack_weight" if not lead and transpose else "T_pack_panels"
    return compute((*lead, panels, kk, width), body, name=name, tag=tag.DENSE_PACK_WEIGHT)


def _panel_product(
    op: str,
    read_a: Callable[[tuple[Var, ...], IterVar, PrimExpr], PrimExpr],
    lead: Sequence[PrimExpr],
    rows: PrimExpr,
    reduction: PrimExpr,
    packed: Tensor,
    units: int,
    dtype: str,
) -> Tensor:
    """``out[..., i, j] = sum_k A[..., i, k] * panels[..., j // bn, k, j % bn]`` over padded
    extents (rows to whole register tiles, columns to whole panels: the schedule's tiles need
    no bounds checks), then the ``[..., rows, units]`` part of it.

    ``read_a(lead, k, i)`` reads the left operand (``i`` clamped to the rows: padding rows
    repeat the last one); ``packed`` is ``[..., P, K, bn]`` with a leading part of rank 0,
    or the rank of ``lead`` (each extent 1 or that of ``lead``: broadcast).
    """
    bn = const_int(packed.shape[-1])
    panels = const_int(packed.shape[-3])
    if bn is None or panels is None:
        raise op_error(op, "packed weight shape", str(packed.shape), "constants")
    if not 0 < units <= panels * bn:
        raise op_error(op, "units", units, f"an int in [1, {panels * bn}]")
    m = const_int(rows)
    mb = 1 if m is None else panel_row_block(m, bn, dtype)
    mp = rows if m is None else -(-m // mb) * mb
    k = reduce_axis((0, reduction), name="k")
    plead = packed.shape[:-3]
    ones = [const_int(d) == 1 for d in plead]

    def body(*idx: Var) -> PrimExpr:
        *b, i, j = idx
        row: PrimExpr = i if m is None or m == mp else min_of(i, const(m - 1))
        pb = [const(0) if one else v for one, v in zip(ones, b[len(b) - len(plead) :], strict=True)]
        w = packed(*pb, j // bn, k, j % bn)
        a = read_a(tuple(b), k, row)
        return _sum(_cast(a, dtype) * _cast(w, dtype), axis=k)  # type: ignore[no-any-return]

    full = compute(
        (*lead, mp, panels * bn),
        body,
        name=f"T_{op}",
        tag=tag.DENSE_PACK,
        attrs={"row_block": mb, "panel_width": bn},
    )
    if m == const_int(mp) and units == panels * bn:
        return full
    return compute(
        (*lead, rows, units),
        full,
        name=f"T_{op}_valid",
        tag=tag.INJECTIVE,
    )


def dense_pack(
    data: Tensor,
    weight: Tensor,
    bias: Tensor | None = None,
    out_dtype: str | None = None,
    units: int | None = None,
) -> Tensor:
    """``data @ W.T (+ bias)`` with ``W`` given packed as ``[ceil(N / bn), K, bn]`` panels.

    A 2-d weight ``[N, K]`` is packed here by :func:`dense_pack_weight` (panel width from the
    target). ``units`` is the number of output columns when the packed panels were padded
    past ``N`` (default: all columns of the panels, or N of a 2-d weight). The product runs
    over whole panels and whole register tiles of rows; the result is its valid part.
    """
    if data.ndim != 2:  # noqa: PLR2004
        raise op_error("dense_pack", "data rank", data.ndim, "2")
    packed = weight
    if weight.ndim == 2:  # noqa: PLR2004
        units = const_int(weight.shape[0]) if units is None else units
        packed = dense_pack_weight(weight)
    elif weight.ndim != _PACKED_NDIM:
        raise op_error("dense_pack", "weight rank", weight.ndim, "2 ([N, K]) or 3 (packed)")
    panels, _, bn = (const_int(d) for d in packed.shape)
    if panels is None or bn is None:
        raise op_error("dense_pack", "packed weight shape", str(packed.shape), "constants")
    n = panels * bn if units is None else units
    _check_k("dense_pack", data.shape[1], packed.shape[1])
    dtype = out_dtype or data.dtype
    out = _panel_product(
        "dense_pack",
        lambda b, k, i: data(i, k),
        (),
        data.shape[0],
        data.shape[1],
        packed,
        n,
        dtype,
    )
    return _add_bias("dense_pack", out, bias)


def matmul_pack(
    tensor_a: Tensor,
    tensor_b: Tensor,
    out_dtype: str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    bn: int | None = None,
) -> Tensor:
    """``op(A) @ op(B)`` of 2-d or batched 3-d operands, ``B`` packed into zero-filled column
    panels first (:func:`pack_panels`): for a right operand that is computed, not constant.

    Every column extent vectorizes: the product runs over whole panels and whole register
    tiles of rows, and the result is its valid part. A batch of 1 broadcasts (3-d).
    """
    if tensor_a.ndim != tensor_b.ndim or tensor_a.ndim not in (2, _PACKED_NDIM):
        raise op_error(
            "matmul_pack", "operand ranks", (tensor_a.ndim, tensor_b.ndim), "both 2 or both 3"
        )
    dtype = out_dtype or tensor_a.dtype
    batched = tensor_a.ndim == _PACKED_NDIM
    m, ka = (tensor_a.shape[-1], tensor_a.shape[-2]) if transpose_a else tensor_a.shape[-2:]
    kb, n = (tensor_b.shape[-1], tensor_b.shape[-2]) if transpose_b else tensor_b.shape[-2:]
    _check_k("matmul_pack", ka, kb)
    units = const_int(n)
    if units is None:
        raise op_error("matmul_pack", "N", str(n), "a constant")
    lead: tuple[PrimExpr, ...] = ()
    one_a = False
    if batched:
        ba, bb = tensor_a.shape[0], tensor_b.shape[0]
        lead = (broadcast_shape("matmul_pack", [ba], [bb])[0],)
        one_a = const_int(ba) == 1
    packed = pack_panels(tensor_b, bn, transpose=transpose_b)

    def read_a(b: tuple[Var, ...], k: IterVar, i: PrimExpr) -> PrimExpr:
        xa: tuple[PrimExpr, ...] = ((const(0) if one_a else b[0]),) if batched else ()
        return tensor_a(*xa, k, i) if transpose_a else tensor_a(*xa, i, k)

    return _panel_product("matmul_pack", read_a, lead, m, ka, packed, units, dtype)


def batch_matmul(
    tensor_a: Tensor,
    tensor_b: Tensor,
    oshape: Any = None,
    out_dtype: str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = True,
) -> Tensor:
    """Batched ``op(A[b]) @ op(B[b])`` of 3-d tensors; a batch of 1 broadcasts.

    By TVM's convention ``B`` is transposed by default (``[batch, N, K]``).
    """
    for name, t in (("tensor_a", tensor_a), ("tensor_b", tensor_b)):
        if t.ndim != _PACKED_NDIM:
            raise op_error("batch_matmul", f"{name} rank", t.ndim, "3")
    dtype = out_dtype or tensor_a.dtype
    ba, bb = tensor_a.shape[0], tensor_b.shape[0]
    batch = broadcast_shape("batch_matmul", [ba], [bb])[0]
    m, ka = (tensor_a.shape[2], tensor_a.shape[1]) if transpose_a else tensor_a.shape[1:]
    kb, n = (tensor_b.shape[2], tensor_b.shape[1]) if transpose_b else tensor_b.shape[1:]
    _check_k("batch_matmul", ka, kb)
    k = reduce_axis((0, ka), name="k")
    one_a, one_b = const_int(ba) == 1, const_int(bb) == 1

    def body(b: Var, i: Var, j: Var) -> PrimExpr:
        xa = const(0) if one_a else b
        xb = const(0) if one_b else b
        a = tensor_a(xa, k, i) if transpose_a else tensor_a(xa, i, k)
        w = tensor_b(xb, j, k) if transpose_b else tensor_b(xb, k, j)
        return _sum(_cast(a, dtype) * _cast(w, dtype), axis=k)  # type: ignore[no-any-return]

    shape = (batch, m, n) if oshape is None else tuple(oshape)
    kind = tag.BATCH_MATMUL if transpose_b else tag.BATCH_MATMUL_NN  # nn: columns of B
    return compute(shape, body, name="T_batch_matmul", tag=kind)
