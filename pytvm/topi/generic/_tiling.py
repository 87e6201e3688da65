"""Choices every CPU schedule makes the same way: vector width, tile sizes, parallel loops.

All sizes derive from the current target (vector lanes, cores) and the operator's extents; no
machine's numbers are written here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...tir.expr import IterVar
from .._shape import const_int
from .._target import num_cores, num_registers, vector_lanes

__all__ = [
    "MIN_PARALLEL_WORK",
    "divisors",
    "extent",
    "fuse_parallel",
    "pow2_divisor",
    "register_row_block",
    "vector_block",
    "vector_registers",
    "vectorize_block",
    "vectorize_inner",
]

#: Elements below which a parallel launch costs more than it saves.
MIN_PARALLEL_WORK = 4096

_WIDE_VECTOR_BYTES = 64


def extent(iv: IterVar) -> int | None:
    """The constant extent of an axis (None when symbolic)."""
    return None if iv.dom is None else const_int(iv.dom.extent)


def pow2_divisor(n: int | None, limit: int) -> int:
    """The largest power of two that divides ``n`` and is at most ``limit`` (1 if none)."""
    if n is None or n <= 0:
        return 1
    f = 1
    while f * 2 <= limit and n % (f * 2) == 0:
        f *= 2
    return f


def divisors(n: int | None, cap: int) -> list[int]:
    """The divisors of ``n`` that are at most ``cap``, ascending (``[1]`` when ``n`` is
    unknown).

    >>> divisors(12, 5)
    [1, 2, 3, 4]
    """
    if n is None or n < 1:
        return [1]
    return [d for d in range(1, max(1, min(cap, n)) + 1) if n % d == 0]


def largest_divisor(n: int | None, cap: int) -> int:
    """The largest divisor of ``n`` that is at most ``cap`` (1 when ``n`` is unknown)."""
    if n is None:
        return 1
    return max(d for d in range(1, max(1, min(cap, n)) + 1) if n % d == 0)


def tile_conv_output(
    s: Any, conv: Any, out: Any, fb: int, rows: int, width: int
) -> tuple[Any, Any, Any, Any]:
    """Tile ``out`` (NCHW, computing ``conv``) into blocks of ``fb`` channels x ``rows`` x
    ``width`` with the outer channel/row loops fused and parallel: ``(stage, xo, fi, xi)``.
    """
    stage = s[out.op]
    n, f, y, x = stage.op.axis
    fo, fi = stage.split(f, factor=fb)
    yo, yi = stage.split(y, factor=rows)
    xo, xi = stage.split(x, factor=width)
    stage.reorder(n, fo, yo, xo, fi, yi, xi)
    work = product([*(extent(a) for a in conv.axis), *(extent(r) for r in conv.reduce_axis)])
    fuse_parallel(stage, [n, fo, yo], work)
    return stage, xo, fi, xi


def vector_registers(dtype: str) -> int:
    """Vector registers the target's SIMD unit has for ``dtype`` (32 with 512-bit vectors); on
    a one-lane CPU the scalar registers a register tile gets (``Target.num_registers``: 8 on
    a Cortex-M, so a tile keeps about 4 accumulators).
    """
    if vector_lanes(dtype) == 1:
        regs = num_registers()
        if regs is not None:
            return regs
    bits = int("".join(ch for ch in dtype if ch.isdigit()) or 32)
    return 32 if vector_lanes(dtype) * bits // 8 >= _WIDE_VECTOR_BYTES else 16


#: Vector registers a register tile leaves free (the broadcast operand, loads).
_SPARE_REGISTERS = 4
#: What one more register tile costs, in rows of work (loading the tile's other operand,
#: storing its results).
_TILE_OVERHEAD_ROWS = 2


def register_row_block(rows: int | None, col_vectors: int, dtype: str) -> int:
    """Rows of a register tile ``col_vectors`` vectors wide, for an axis of ``rows`` that
    the tiles may overrun (the last one padded): at most what the target's vector registers
    hold as accumulators, chosen to minimise ``tiles * (block + overhead)`` (the larger block
    on a tie). 1 for a symbolic axis.
    """
    if rows is None or rows < 1:
        return 1
    cap = max(1, (vector_registers(dtype) - _SPARE_REGISTERS) // max(1, col_vectors))
    best, best_cost = 1, None
    for mb in range(1, min(cap, rows) + 1):
        cost = -(-rows // mb) * (mb + _TILE_OVERHEAD_ROWS)
        if best_cost is None or cost <= best_cost:
            best, best_cost = mb, cost
    return best


def vector_block(n: int | None, lanes: int) -> int:
    """Elements per vector for an axis of ``n``: the target's ``lanes`` when the axis is at
    least that long (a tail is split off by loop partitioning), else the largest power of two
    dividing ``n`` (1: do not vectorize).
    """
    if n is None or n >= lanes:
        return lanes
    return pow2_divisor(n, lanes)


def vectorize_inner(stage: Any, axis: IterVar, dtype: str) -> IterVar | None:
    """Split ``axis`` by :func:`vector_block` and vectorize the inner part. Returns what is
    left outside the vector: the outer part of the split, ``axis`` itself when it is not
    vectorized, None when all of it is one vector.
    """
    n = extent(axis)
    lanes = vector_block(n, vector_lanes(dtype))
    if lanes < 2:  # noqa: PLR2004
        return axis
    if lanes == n:
        stage.vectorize(axis)
        return None
    outer, inner = stage.split(axis, factor=lanes)
    stage.vectorize(inner)
    return outer  # type: ignore[no-any-return]


def vectorize_block(stage: Any, axis: IterVar, width: int, lanes: int) -> None:
    """Vectorize a block axis of ``width`` elements as vectors of at most ``lanes`` (the
    largest power of two dividing ``width``; the outer part unrolled): vector types wider
    than the hardware's spill to memory in C compilers. One lane: the axis stays scalar.
    """
    vec = pow2_divisor(width, lanes)
    if vec < 2:  # noqa: PLR2004
        return
    if vec == width:
        stage.vectorize(axis)
        return
    outer, inner = stage.split(axis, factor=vec)
    stage.unroll(outer)
    stage.vectorize(inner)


def fuse_parallel(stage: Any, axes: Sequence[IterVar], work: int | None) -> IterVar | None:
    """Fuse ``axes`` and run the fused loop in parallel when ``work`` elements justify it and
    there is more than one core; returns the fused axis (None for no axes).
    """
    if not axes:
        return None
    fused = stage.fuse(*axes) if len(axes) > 1 else axes[0]
    if num_cores() > 1 and (work is None or work >= MIN_PARALLEL_WORK):
        stage.parallel(fused)
    return fused


def product(extents: Sequence[int | None]) -> int | None:
    """The product of constant extents (None when one is symbolic)."""
    out = 1
    for e in extents:
        if e is None:
            return None
        out *= e
    return out
