"""CPU schedule of ``depthwise_conv2d_nchw_channels``: channel blocks, one vector a pixel.

Blocks of ``cb`` channels run in parallel. For a block, on the stack: the ``[H, W, cb]``
gather of its planes (one vector a pixel, its lanes read a plane apart), the zero-padded copy
of it (whole vectors), and the product, an output row at a time in runs of ``wb`` pixels whose
accumulators stay in registers across the unrolled kernel taps (``wb`` from the target's vector
registers, as the packed convolution's blocks). The output stage reads the block back into
NCHW, with the fused elementwise work, a row of each channel a vector.

Knobs (AutoTVM, templates ``<row>.x86``; the fallback is the choice above): ``tile_ow`` pixels
of a run (1 up to the vector registers less two: the kernel vector and the input), ``tile_oh``
output rows a run spans (divisors of the height, only as many as whole rows of the widest run
fit the registers, so every pair fits).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import divisors, extent, fuse_parallel, product, vector_registers
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import DEPTHWISE_CONV2D_NCHW_CHANNELS, DEPTHWISE_PACK
from . import tunable

__all__ = ["channel_run", "schedule_depthwise_conv2d_nchw_channels"]

#: Share of the vector registers that hold accumulators, and their most (as the packed
#: convolution's register blocks: 12 of AVX2's 16 registers, 20 of AVX-512's 32).
_ACCUMULATOR_SHARE = 0.75
_MAX_ACCUMULATORS = 20


def channel_run(width: int, dtype: str) -> int:
    """Output pixels of a row computed together (one vector accumulator each): the row
    itself when the target's registers hold it, else the widest equal split of it that they do.
    """
    cap = min(int(vector_registers(dtype) * _ACCUMULATOR_SHARE), _MAX_ACCUMULATORS)
    runs = -(-width // cap)
    return -(-width // runs)


def _carrier(conv: ComputeOp, outputs: Sequence[Tensor]) -> Tensor | None:
    """The single output (the read-back into NCHW with elementwise work inlined) of the
    convolution's batch, height and width.
    """
    if len(outputs) != 1 or not is_inlinable(outputs[0].op):
        return None
    out = outputs[0]
    n, _, oh, ow, _ = (const_int(d) for d in conv.output(0).shape)
    dims = [const_int(d) for d in out.shape]
    return out if len(dims) == 4 and [dims[0], *dims[2:]] == [n, oh, ow] else None  # noqa: PLR2004


def _block_stages(conv: ComputeOp) -> list[ComputeOp]:
    """The gathered and padded channel blocks the product reads, producers first."""
    stages: list[ComputeOp] = []
    todo = [t.op for t in conv.input_tensors]
    while todo:
        op = todo.pop()
        if isinstance(op, ComputeOp) and op.tag == DEPTHWISE_PACK:
            stages.insert(0, op)
            todo.extend(t.op for t in op.input_tensors)
    return stages


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = conv.output(0).dtype  # the accumulators' (the fused output may be requantized)
    cb = const_int(conv.output(0).shape[4]) or 1
    stage = s[out.op]
    n, ch, _, x = stage.op.axis
    co, ci = stage.split(ch, factor=cb)
    work = product([*(extent(a) for a in conv.axis), *(extent(r) for r in conv.reduce_axis)])
    fused = fuse_parallel(stage, [n, co], work)
    # Each channel's output row is a vector gathered from the block (lanes cb apart).
    ow, lanes = extent(x) or 1, vector_lanes(out.dtype)
    if ow <= lanes:
        stage.vectorize(x)
    else:
        _, xi = stage.split(x, factor=lanes)
        stage.vectorize(xi)
    # The product of the block: runs of a row's pixels, the taps unrolled around them.
    s[conv].compute_at(stage, fused)
    cstage = s[conv]
    _, _, y, px, lane = cstage.op.axis
    cfg = tunable.config(out)
    width, height = extent(px) or 1, extent(y) or 1
    cap = max(1, vector_registers(dtype) - 2)
    widest = min(width, cap)
    run = tunable.knob(cfg, "tile_ow", range(1, widest + 1), channel_run(width, dtype))
    rows = tunable.knob(cfg, "tile_oh", divisors(height, cap // widest), 1)
    outer, inner = cstage.split(px, factor=run)
    if rows > 1:
        y, yi = cstage.split(y, factor=rows)
        cstage.reorder(y, outer, *cstage.op.reduce_axis, yi, inner, lane)
        cstage.unroll(yi)
    else:
        cstage.reorder(y, outer, *cstage.op.reduce_axis, inner, lane)
    for r in cstage.op.reduce_axis:
        cstage.unroll(r)
    cstage.unroll(inner)
    cstage.vectorize(lane)
    cstage.scope = "local"
    # The gathered and padded blocks: one vector a pixel. With a last block past the channels
    # the gather's clamped channel is not a ramp: the gather then reads a row of a channel as
    # a vector and writes it a lane at a time.
    channels = const_int(out.shape[1]) or 0
    for op in _block_stages(conv):
        s[op].compute_at(stage, fused)
        lane = s[op].op.axis[4]
        if channels % cb and op.tag == DEPTHWISE_PACK and op.name == "pack_channels":
            _, _, py, px, _ = s[op].op.axis
            s[op].reorder(lane, py, px)
            s[op].vectorize(px)
        else:
            s[op].vectorize(lane)
        s[op].scope = "local"
    del ci


def schedule_depthwise_conv2d_nchw_channels(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.depthwise_conv2d_nchw_channels`` and the elementwise work after it."""
    return schedule_anchored(outs, DEPTHWISE_CONV2D_NCHW_CHANNELS, _carrier, _schedule_block)
