"""CPU schedule of ``conv2d_nchw_packed``: register blocks of output channels x output columns.

A block is ``fb`` output channels (the packed kernel's block, whole vectors; the last block's
padding channels are computed and never stored) by ``wb`` output columns (by ``rows`` output
rows when a block spans a whole row): ``fb // lanes * wb * rows`` vector accumulators, as many
as the target's vector registers hold beside the kernel vectors and the broadcast input. Any
width is a row of ``wb``-column blocks and one narrower tail block (a split that does not
divide, cut off by loop partitioning), ``wb`` chosen for the fastest row. The block
accumulates over input channels and kernel rows and columns (one kernel vector load and one
input broadcast per multiply-add row) in registers, is copied to a stack block (whole
vectors), and the unpacking stage stores each output channel's columns from it to NCHW as one
vector with the fused elementwise work (bias, activation, residual add).
The unpacking stays a loop over the channels: unrolled, its lane-by-lane stores cost LLVM more
than the rest of the kernel to compile, and run no faster.
Blocks run in parallel, output-channel blocks outermost so a kernel panel is reused from cache.

Knobs (AutoTVM, template ``<row>.x86``; the fallback is the choice above): ``tile_ow`` the
block's columns (1 up to what the vector registers hold beside the kernel vectors and the
broadcast), ``tile_oh`` its rows (divisors of the height, only as many as whole rows of the
widest block fit the registers, so every pair of the two fits), ``unroll_kw`` whether the
kernel-column loop of the reduction is unrolled.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import (
    divisors,
    extent,
    largest_divisor,
    pow2_divisor,
    tile_conv_output,
    vector_registers,
    vectorize_block,
)
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import CONV2D_NCHW_PACKED
from . import tunable

__all__ = [
    "conv2d_channel_block",
    "conv2d_channel_use",
    "conv2d_packed_block",
    "schedule_conv2d_nchw_packed",
]

#: Share of the vector registers that hold accumulators (the rest: kernel vectors, the
#: broadcast inputs the compiler loads ahead, addresses it keeps in vector registers), and the
#: most of them: 10 of 16 registers (12 spill: a 3x3 64->64 block of two vectors ran at half
#: the speed of 10 built for Zen 3 and Haswell); 20 of 32 (24 spill: they ran at two thirds of
#: 20's speed).
_ACCUMULATOR_SHARE = 0.625
_MAX_ACCUMULATORS = 20
#: Independent multiply-add chains a block needs to keep the FMA units busy: two units with
#: four cycles of latency (the x86 cores since Haswell and Zen), and the step's loads and
#: broadcasts in between; a block with fewer accumulators waits on its chains.
_CHAINS = 12
#: Row costs this close to the least count as equal (then a width with no tail block wins).
_NEAR = 1.05


def conv2d_channel_block(channels: int, dtype: str, groups: int = 1) -> int | None:
    """Output channels per kernel block on the current target: two vectors of ``dtype`` or one,
    whichever pads ``channels`` to fewer (two on a tie); the last block is padded with zero
    channels. With ``groups`` > 1 a block stays within a group: the largest power of two (up to
    two vectors) dividing a group's channels. None: the target has no vectors of ``dtype``, or
    a group's channels are odd (keep the plain layout).

    Examples
    --------
    >>> from pytvm.target import Target
    >>> from pytvm.topi.x86 import conv2d_channel_block
    >>> with Target("c -mattr=+avx2"):
    ...     conv2d_channel_block(64, "float32"), conv2d_channel_block(1000, "float32")
    (16, 8)
    >>> with Target("c -mattr=+avx2"):
    ...     conv2d_channel_block(384, "float32", groups=16)  # 24 channels a group
    8
    """
    lanes = vector_lanes(dtype)
    if lanes < 2 or channels < 1:  # noqa: PLR2004
        return None
    if groups > 1:
        fb = pow2_divisor(channels // groups if channels % groups == 0 else 1, 2 * lanes)
        return fb if fb >= 2 else None  # noqa: PLR2004
    return min((2 * lanes, lanes), key=lambda fb: -(-channels // fb) * fb)


def conv2d_channel_use(channels: int, dtype: str, groups: int = 1) -> float:
    """The share of the packed convolution's vector lanes that hold real output channels (the
    rest hold the zero channels padding the last block, or lie past a narrower block of a
    group's channels); 0 without a block.
    """
    fb = conv2d_channel_block(channels, dtype, groups)
    if fb is None:
        return 0.0
    lanes = vector_lanes(dtype)
    return channels / (-(-channels // fb) * fb) * min(1.0, fb / lanes)


def _row_cost(ow: int, wb: int, vectors: int) -> int:
    """Cycles (in multiply-adds) of one reduction step over a row in blocks of ``wb`` columns
    and a tail block: a block of ``t`` columns issues ``t * vectors`` multiply-adds but takes
    at least ``_CHAINS`` (latency-bound below that), plus a fixed cost per block.
    """
    full, tail = divmod(ow, wb)
    blocks = [wb] * full + ([tail] if tail else [])
    return sum(max(t * vectors, _CHAINS) + vectors for t in blocks)


def conv2d_packed_block(fb: int, oh: int, ow: int, dtype: str) -> tuple[int, int]:
    """``(rows, wb)``: output rows and columns of a register block of ``fb`` channels.

    ``wb`` is the block width (at most as many columns as the target's vector registers hold
    accumulators for) that runs a row fastest, in blocks of ``wb`` and one narrower tail block
    (:func:`_row_cost`; among widths within ``_NEAR`` of the fastest, one dividing the row,
    then the widest); a block spanning the whole row takes as many rows (dividing ``oh``) as
    still fit.
    """
    vectors = max(1, fb // max(1, vector_lanes(dtype)))
    accumulators = min(int(vector_registers(dtype) * _ACCUMULATOR_SHARE), _MAX_ACCUMULATORS)
    budget = max(1, accumulators // vectors)
    costs = {b: _row_cost(ow, b, vectors) for b in range(1, min(budget, ow) + 1)}
    near = [b for b, cost in costs.items() if cost <= min(costs.values()) * _NEAR]
    wb = max(near, key=lambda b: (ow % b == 0, b))  # no tail block when one is as fast
    rows = largest_divisor(oh, budget // wb) if wb == ow else 1
    return rows, wb


def block_knobs(cfg: Any, fb: int, oh: int, ow: int, dtype: str) -> tuple[int, int]:
    """``(rows, wb)`` of a register block of ``fb`` channels from knobs ``tile_oh`` and
    ``tile_ow`` of ``cfg`` (declared here; their fallback: :func:`conv2d_packed_block`).

    ``tile_ow``: 1 up to the accumulators the vector registers hold beside the block's kernel
    vectors and the broadcast input; ``tile_oh``: divisors of ``oh`` up to as many whole rows of
    the widest ``tile_ow`` as those registers hold, so every pair fits.
    """
    rows, wb = conv2d_packed_block(fb, oh, ow, dtype)
    vectors = max(1, fb // max(1, vector_lanes(dtype)))
    cap = max(1, (vector_registers(dtype) - vectors - 1) // vectors)
    widest = min(ow, cap)
    wb = tunable.knob(cfg, "tile_ow", range(1, widest + 1), wb)
    rows = tunable.knob(cfg, "tile_oh", divisors(oh, max(1, cap // widest)), rows)
    return rows, wb


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = conv.output(0).dtype  # the accumulators' (the fused output may be requantized)
    lanes = vector_lanes(dtype)
    _, _, oh, ow, fb = (extent(a) for a in conv.axis)
    assert fb is not None and oh is not None and ow is not None
    cfg = tunable.config(out)
    rows, wb = block_knobs(cfg, fb, oh, ow, dtype)
    kw = extent(conv.reduce_axis[-1]) or 1
    unroll_kw = tunable.knob(cfg, "unroll_kw", [False, True] if kw > 1 else [], False)
    c = conv.output(0)
    cc = s.cache_write(c, "local")
    s[c].compute_inline()
    staged = s.cache_read(cc, "local", [s[c].op])
    stage, xo, fi, xi = tile_conv_output(s, conv, out, fb, rows, wb)
    stage.vectorize(xi)  # a channel's columns: one strided read of the block, one store
    stage.pragma(fi, "loop_vectorize", False)  # across channels it would be a scatter
    s[staged].compute_at(stage, xo)
    _, sfo, sy, sx, sfi = s[staged].op.axis
    s[cc].compute_at(s[staged], sfo)
    s[staged].unroll(sy)
    s[staged].unroll(sx)
    vectorize_block(s[staged], sfi, fb, lanes)
    cn, cfo, cy, cx, cfi = s[cc].op.axis
    s[cc].reorder(cn, cfo, *s[cc].op.reduce_axis, cy, cx, cfi)
    if unroll_kw:
        s[cc].unroll(s[cc].op.reduce_axis[-1])
    s[cc].unroll(cy)
    s[cc].unroll(cx)
    vectorize_block(s[cc], cfi, fb, lanes)


def _carrier(conv: ComputeOp, outputs: Sequence[Tensor]) -> Tensor | None:
    """The NCHW stage that stores the blocks: the single output (the unpacking with the fused
    elementwise work inlined), when it has the unpacked shape.
    """
    if len(outputs) != 1:
        return None
    out = outputs[0]
    if not is_inlinable(out.op):
        return None
    n, fo, oh, ow, fb = (const_int(d) for d in conv.output(0).shape)
    dims = [const_int(d) for d in out.shape]
    if len(dims) != 4 or dims[0] != n or dims[2:] != [oh, ow] or None in (fo, fb, dims[1]):  # noqa: PLR2004
        return None
    assert fo is not None and fb is not None and dims[1] is not None
    return out if (fo - 1) * fb < dims[1] <= fo * fb else None


def schedule_conv2d_nchw_packed(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv2d_nchw_packed`` and the elementwise stages after it."""
    return schedule_anchored(outs, CONV2D_NCHW_PACKED, _carrier, _schedule_block, keep_pads=True)
