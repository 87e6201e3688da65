"""CPU schedules of matrix products: ``dense_pack``, ``dense``/``matmul`` and ``batch_matmul``.

The product is computed tile by tile: an ``mb x nb`` block of the output accumulates in a
local buffer (``cache_write``) over the whole reduction, its rows unrolled and its columns one
or two vectors wide, then is stored; blocks run in parallel. ``mb`` fills the target's vector
registers; ``nb`` is the packed panel width (``dense_pack``) or up to two vectors.

Panel products (``dense_pack``, ``matmul_pack``: tag ``dense_pack``) run over padded extents
(rows to whole tiles of ``row_block`` rows, columns to whole panels), so their tiles need no
bounds checks and every column extent vectorizes; the stage storing the valid part (with the
bias or activation) splits its axes by the same blocks and only its stores are guarded: loop
partitioning leaves guard-free main loops and a tail. With fewer tiles of rows than panels
(an LM head, a decoder step) the panels are the outer, parallel loop and the row tiles run
inside each: the right operand is read from memory once, the cores reading disjoint parts of
it. Other products divide their axes by their blocks (a partial tile of an attached stage
would read past its inputs).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import (
    extent,
    fuse_parallel,
    pow2_divisor,
    product,
    vector_registers,
    vectorize_block,
)
from ..generic._traverse import as_outputs, create_schedule, is_inlinable, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..tag import BATCH_MATMUL, BATCH_MATMUL_NN, DENSE, DENSE_PACK, DENSE_PACK_WEIGHT, MATMUL

__all__ = ["schedule_batch_matmul", "schedule_dense", "schedule_dense_pack", "schedule_matmul"]

#: Registers kept free of accumulators (for the broadcast operand and loads).
_SPARE_REGISTERS = 4
#: Products whose right operand is ``[K, N]``: a tile's columns are contiguous there.
_CONTIGUOUS_TAGS = (MATMUL, BATCH_MATMUL_NN)


def _divisor_block(n: int | None, cap: int) -> int:
    """The largest divisor of ``n`` up to ``cap`` (1 for a symbolic ``n``).

    Tiles that another stage is computed in must divide their axis: the attached stage is
    computed over whole tiles, and a partial tile would read past its inputs.
    """
    if n is None:
        return 1
    return max(d for d in range(1, max(1, min(cap, n)) + 1) if n % d == 0)


def _row_block(dtype: str, col_vectors: int, rows: int | None) -> int:
    cap = max(1, (vector_registers(dtype) - _SPARE_REGISTERS) // max(1, col_vectors))
    return _divisor_block(rows, cap)


def _tile_product(
    s: Any, product_op: ComputeOp, out: Tensor, nb: int, vectorize: bool, mb: int | None = None
) -> None:
    """Tile the last two axes of ``out`` (the product, or an injective stage reading it in the
    same or a smaller shape) by ``mb x nb``: each tile accumulates in a local buffer
    (``cache_write``) over the whole reduction, rows unrolled and columns vectorized, then is
    stored by ``out``'s loops; tiles (and leading batch axes) run in parallel.

    ``mb`` given, the product covers whole tiles of ``out`` (padded extents). With fewer tiles
    of rows than of columns (:func:`_columns_outer`) the column tiles go outermost, so each
    panel of the right operand is read from memory once. When ``nb`` does not divide
    ``out``'s columns, the column-tile loop stays on its own (not fused) so that loop
    partitioning can split off its last tile.
    """
    dtype = product_op.output(0).dtype  # the accumulators' (the output may be requantized)
    lanes = vector_lanes(dtype)
    c = product_op.output(0)
    padded = mb is not None
    if mb is None:
        mb = _row_block(dtype, max(1, nb // lanes), extent(product_op.axis[-2]))
    red = [extent(k) for k in product_op.reduce_axis]
    work = product([*(extent(a) for a in product_op.axis), *red])
    cc = s.cache_write(c, "local")
    if out.op is not product_op:
        s[c].compute_inline()
    stage = s[out.op]
    *lead, m, n = stage.op.axis
    mo, mi = stage.split(m, factor=mb)
    no, ni = stage.split(n, factor=nb)
    cols = extent(n)
    whole = cols is None or cols % nb == 0
    if padded and cols is not None and _columns_outer(lead, extent(m), mb, cols, nb):
        stage.reorder(no, *lead, mo, mi, ni)
        if whole:
            attach = fuse_parallel(stage, [no, *lead, mo], work)
        else:
            fuse_parallel(stage, [no], work)
            attach = mo
    elif whole:
        stage.reorder(*lead, mo, no, mi, ni)
        attach = fuse_parallel(stage, [*lead, mo, no], work)
    else:
        stage.reorder(*lead, mo, no, mi, ni)
        fuse_parallel(stage, [*lead, mo], work)
        attach = no
    s[cc].compute_at(stage, attach)
    if vectorize:
        vectorize_block(stage, ni, nb, lanes)
    *c_lead, cm, cn = s[cc].op.axis
    s[cc].reorder(*c_lead, *s[cc].op.reduce_axis, cm, cn)
    s[cc].unroll(cm)
    if vectorize:
        vectorize_block(s[cc], cn, nb, lanes)


def _columns_outer(lead: Sequence[Any], rows: int | None, mb: int, cols: int, nb: int) -> bool:
    """Whether the column tiles go outermost, the row tiles inside each: when there are fewer
    tiles of rows than of columns.

    The outer loop's tile of its operand stays in cache while the inner loop streams the other
    operand whole, once per outer tile: columns outermost stream the left operand (``rows x
    K``) from cache once per panel and read each panel of the right one from memory once;
    rows outermost would stream the whole right operand once per tile of rows (a 768 x 50257
    LM head's 154 MB, five times over for 64 tokens). With the panels outermost and parallel,
    the cores also read disjoint parts of the right operand.
    """
    row_tiles = product([*(extent(a) for a in lead), -(-(rows or 1) // mb)]) or 1
    col_tiles = -(-cols // nb)
    return row_tiles < col_tiles


def _schedule_products(outs: Tensor | Sequence[Tensor], tags: tuple[str, ...]) -> Any:
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    found: list[ComputeOp] = []
    tiled_here: list[ComputeOp] = []

    def visit(op: ComputeOp) -> None:
        if op.tag in tags:
            found.append(op)
        elif op.tag == DENSE_PACK_WEIGHT:
            *outer, _, b = s[op].op.axis
            fuse_parallel(s[op], outer, product([extent(a) for a in op.axis]))
            width = extent(b) or 1
            vectorize_block(s[op], b, width, vector_lanes(op.output(0).dtype))
        elif id(op) in output_ops and not op.reduce_axis:
            tiled_here.append(op)

    traverse_inline(s, outputs, visit)
    carriers = set()
    for op in found:
        nb, vectorize = _column_block(op)
        stage = _tiled_stage(op, outputs)
        mb = op.attrs.get("row_block") if op.tag == DENSE_PACK else None
        _tile_product(s, op, stage, nb, vectorize, None if mb is None else int(mb))
        carriers.add(id(stage.op))
    for op in tiled_here:
        if id(op) not in carriers:
            schedule_injective_from_existing(s, op.output(0))
    return s


def _tiled_stage(op: ComputeOp, outputs: Sequence[Tensor]) -> Tensor:
    """The stage that carries the tiling: the product itself, or the single output that applies
    elementwise work (bias, activation) to it in the same shape, or to the valid part of a
    padded panel product (the same leading axes, at most as many rows and columns).
    """
    if any(t.op is op for t in outputs) or len(outputs) != 1:
        return op.output(0)
    out = outputs[0]
    got = [const_int(a) for a in out.shape]
    full = [const_int(a) for a in op.output(0).shape]
    same = got == full
    if op.tag == DENSE_PACK and len(got) == len(full) and got[:-2] == full[:-2]:
        same = all(
            g is not None and f is not None and g <= f for g, f in zip(got, full, strict=True)
        )
    return out if same and is_inlinable(out.op) else op.output(0)


def _column_block(op: ComputeOp) -> tuple[int, bool]:
    """Columns per tile and whether they form vectors (contiguous in the right operand)."""
    dtype = op.output(0).dtype
    lanes = vector_lanes(dtype)
    n = extent(op.axis[-1])
    if op.tag == DENSE_PACK:
        bn = int(op.attrs.get("panel_width", lanes))
        return bn, lanes >= 2  # noqa: PLR2004
    if op.tag in _CONTIGUOUS_TAGS and lanes >= 2:  # noqa: PLR2004
        width = pow2_divisor(n, 2 * lanes)
        if width >= 2:  # noqa: PLR2004
            return width, True
    return _divisor_block(n, lanes), False


def schedule_dense_pack(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.dense_pack`` (with its bias or activation stages, and the weight
    packing stage when it is part of the computation).
    """
    return _schedule_products(outs, (DENSE_PACK,))


def schedule_dense(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.dense`` (weight ``[N, K]``: columns are not contiguous, so tiles
    are unrolled rather than vectorized; prefer ``dense_pack`` for speed).
    """
    return _schedule_products(outs, (DENSE, MATMUL))


def schedule_matmul(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.matmul`` (vectorized along N when B is ``[K, N]``)."""
    return _schedule_products(outs, (DENSE, MATMUL))


def schedule_batch_matmul(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.batch_matmul``: batch and row/column blocks in parallel."""
    return _schedule_products(outs, (BATCH_MATMUL, BATCH_MATMUL_NN))
