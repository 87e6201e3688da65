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

Each schedule is an AutoTVM template's (the strategy rows' ``<row>.x86``, and TVM's
``dense_pack.x86``/``dense_nopack.x86``/``batch_matmul.x86`` entry points): the product's
tile (``tile_y`` rows x ``tile_x`` columns), the reduction's unroll (``tile_k``) and the loop
order (``columns_outer``) are knobs of the configuration the current dispatch context gives
the recorded workload (:func:`_tile_knobs`), the choices above on a fallback configuration.
The panel width of a packed weight is not a knob: it is the weight's layout, part of the
workload.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ...autotvm.task.space import FallbackConfigEntity
from ...ffi.errors import TVMValueError
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
from . import tunable

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


def _divisors(n: int | None, cap: int) -> list[int]:
    """The divisors of ``n`` up to ``cap`` ([1] for a symbolic ``n``)."""
    if n is None:
        return [1]
    return [d for d in range(1, max(1, min(cap, n)) + 1) if n % d == 0]


def _tile_product(
    s: Any,
    product_op: ComputeOp,
    out: Tensor,
    nb: int,
    vectorize: bool,
    mb: int | None = None,
    cfg: Any = None,
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

    ``cfg`` (an AutoTVM configuration; None: a fallback one) supplies the knobs
    (:func:`_tile_knobs`); on a fallback configuration they are the choices above.
    """
    dtype = product_op.output(0).dtype  # the accumulators' (the output may be requantized)
    lanes = vector_lanes(dtype)
    c = product_op.output(0)
    padded = mb is not None
    if mb is None:
        mb = _row_block(dtype, max(1, nb // lanes), extent(product_op.axis[-2]))
    red = [extent(k) for k in product_op.reduce_axis]
    work = product([*(extent(a) for a in product_op.axis), *red])
    *lead0, m0, n0 = out.op.axis
    cols = extent(n0)
    default_outer = padded and cols is not None and _columns_outer(lead0, extent(m0), mb, cols, nb)
    tiles = _tile_knobs(
        FallbackConfigEntity() if cfg is None else cfg,
        product_op,
        _Tiles(mb, nb, 1, default_outer),
        vectorize,
    )
    mb, nb = tiles.rows, tiles.cols
    cc = s.cache_write(c, "local")
    if out.op is not product_op:
        s[c].compute_inline()
    stage = s[out.op]
    *lead, m, n = stage.op.axis
    mo, mi = stage.split(m, factor=mb)
    no, ni = stage.split(n, factor=nb)
    whole = cols is None or cols % nb == 0
    if tiles.columns_outer and cols is not None:
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
    if tiles.unroll_k > 1:
        (k,) = s[cc].op.reduce_axis
        ko, ki = s[cc].split(k, factor=tiles.unroll_k)
        s[cc].reorder(*c_lead, ko, ki, cm, cn)
        s[cc].unroll(ki)
    else:
        s[cc].reorder(*c_lead, *s[cc].op.reduce_axis, cm, cn)
    s[cc].unroll(cm)
    if vectorize:
        vectorize_block(s[cc], cn, nb, lanes)


@dataclass(frozen=True, slots=True)
class _Tiles:
    """A product's tiling: rows and columns per tile, the reduction's unroll (1: none), and
    whether the column tiles are the outer loop.
    """

    rows: int
    cols: int
    unroll_k: int
    columns_outer: bool


#: Largest reduction unroll the ``tile_k`` knob offers.
_MAX_UNROLL_K = 8
#: Widest column tile the ``tile_x`` knob offers, in vectors (vectorized products).
_MAX_COL_VECTORS = 4


def _tile_knobs(cfg: Any, product_op: ComputeOp, default: _Tiles, vectorize: bool) -> _Tiles:
    """Declare the product's knobs on ``cfg`` and return their values.

    On a fallback configuration they are ``default``. The knobs, in this order, their
    candidates from the product's shape and the target only:

    - ``tile_y``: rows per tile, a divisor of the product's rows (padded rows for a panel
      product) up to the vector registers less the spare ones;
    - ``tile_x``: columns per tile, a divisor of the product's columns (padded to whole panels
      for a panel product); vectorized products: a multiple of the default's vector width up
      to four vectors; others: up to one vector's worth of unrolled columns;
    - ``tile_k``: the reduction's unroll (a power of two dividing it, up to 8; 1: the
      reduction loop is not split);
    - ``columns_outer``: whether the column tiles are the outer (parallel) loop.

    A vectorized tile other than the default whose accumulators need more vectors than the
    target has registers raises TVMValueError (the tuner records an instantiation error):
    spilled accumulators are never faster, and their unrolled code is slow to build.

    Tiles divide their axis: the tile is the unit the product's local buffer is computed in,
    and a partial tile would read past its inputs (past the padding of a panel product).
    """
    dtype = product_op.output(0).dtype
    lanes = vector_lanes(dtype)
    rows = extent(product_op.axis[-2])
    cols = extent(product_op.axis[-1])
    row_cap = max(1, vector_registers(dtype) - _SPARE_REGISTERS)
    mb = tunable.knob(cfg, "tile_y", _divisors(rows, row_cap), default.rows)
    if vectorize:
        vec = pow2_divisor(default.cols, lanes)
        col_choices = [d for d in _divisors(cols, _MAX_COL_VECTORS * lanes) if d % vec == 0]
    else:
        col_choices = _divisors(cols, lanes)
    nb = tunable.knob(cfg, "tile_x", col_choices, default.cols)
    k_extent = product([extent(k) for k in product_op.reduce_axis])
    single = len(product_op.reduce_axis) == 1
    k_choices = [1] + [
        u
        for u in (2, 4, _MAX_UNROLL_K)
        if single and k_extent is not None and k_extent % u == 0 and u < k_extent
    ]
    unroll_k = tunable.knob(cfg, "tile_k", k_choices, default.unroll_k)
    outer = tunable.knob(cfg, "columns_outer", [False, True], default.columns_outer)
    tiles = _Tiles(int(mb), int(nb), int(unroll_k), bool(outer))
    if vectorize and tiles != default:
        vectors = -(-tiles.cols // pow2_divisor(tiles.cols, lanes))
        registers = vector_registers(dtype)
        if tiles.rows * vectors > registers:
            raise TVMValueError(
                f"{product_op.name}: a tile of {tiles.rows} x {tiles.cols} keeps "
                f"{tiles.rows * vectors} vectors of accumulators; the target has {registers} "
                "vector registers (this configuration is not instantiated)"
            )
    return tiles


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
    cfg = tunable.config(outputs)
    carriers = set()
    for i, op in enumerate(found):
        nb, vectorize = _column_block(op)
        stage = _tiled_stage(op, outputs)
        mb = op.attrs.get("row_block") if op.tag == DENSE_PACK else None
        # the knobs tune one product: the first (a fused group has one)
        knobs = cfg if i == 0 else None
        _tile_product(s, op, stage, nb, vectorize, None if mb is None else int(mb), knobs)
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
