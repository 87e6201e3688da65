"""CPU schedule of ``conv2d_nchw_packed``: register blocks of output channels x output columns.

A block is ``fb`` output channels (the packed kernel's block, whole vectors) by ``wb`` output
columns (by ``rows`` output rows when a block spans a whole row): ``fb // lanes * wb * rows``
vector accumulators, as many as the target's vector registers hold beside the kernel vectors
and the broadcast input. The block accumulates over input channels and kernel rows and columns
(one kernel vector load and one input broadcast per multiply-add row) in registers, is copied
to a stack block (whole vectors), and the unpacking stage stores each output channel's columns
from it to NCHW as one vector with the fused elementwise work (bias, activation, residual add).
The unpacking stays a loop over the channels: unrolled, its lane-by-lane stores cost LLVM more
than the rest of the kernel to compile, and run no faster.
Blocks run in parallel, output-channel blocks outermost so a kernel panel is reused from cache.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import (
    extent,
    largest_divisor,
    tile_conv_output,
    vector_registers,
    vectorize_block,
)
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import CONV2D_NCHW_PACKED

__all__ = ["conv2d_channel_block", "conv2d_packed_block", "schedule_conv2d_nchw_packed"]

#: Share of the vector registers that hold accumulators (the rest: kernel vectors, the
#: broadcast input, addresses the compiler keeps in vector registers); more spills.
_ACCUMULATOR_SHARE = 0.75


def conv2d_channel_block(channels: int, dtype: str) -> int | None:
    """Output channels per kernel block on the current target: two vectors of ``dtype``, else
    one, whichever divides ``channels`` (None: neither does, keep the plain layout).

    Examples
    --------
    >>> from pytvm.target import Target
    >>> from pytvm.topi.x86 import conv2d_channel_block
    >>> with Target("c -mattr=+avx2"):
    ...     conv2d_channel_block(64, "float32"), conv2d_channel_block(24, "float32")
    (16, 8)
    """
    lanes = vector_lanes(dtype)
    if lanes < 2:  # noqa: PLR2004
        return None
    return next((fb for fb in (2 * lanes, lanes) if channels % fb == 0), None)


def conv2d_packed_block(fb: int, oh: int, ow: int, dtype: str) -> tuple[int, int]:
    """``(rows, wb)``: output rows and columns of a register block of ``fb`` channels.

    ``wb`` is the widest divisor of ``ow`` whose accumulators fit the target's vector registers;
    a block spanning the whole row takes as many rows (dividing ``oh``) as still fit.
    """
    vectors = max(1, fb // max(1, vector_lanes(dtype)))
    budget = max(1, int(vector_registers(dtype) * _ACCUMULATOR_SHARE) // vectors)
    wb = largest_divisor(ow, budget)
    rows = largest_divisor(oh, budget // wb) if wb == ow else 1
    return rows, wb


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = out.dtype
    lanes = vector_lanes(dtype)
    _, _, oh, ow, fb = (extent(a) for a in conv.axis)
    assert fb is not None and oh is not None and ow is not None
    rows, wb = conv2d_packed_block(fb, oh, ow, dtype)
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
    want = [n, None if fo is None or fb is None else fo * fb, oh, ow]
    return out if [const_int(d) for d in out.shape] == want else None


def schedule_conv2d_nchw_packed(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv2d_nchw_packed`` and the elementwise stages after it."""
    return schedule_anchored(outs, CONV2D_NCHW_PACKED, _carrier, _schedule_block, keep_pads=True)
