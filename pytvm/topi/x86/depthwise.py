"""CPU schedule of ``depthwise_conv2d_nchw_rows``: channel planes in bands of rows.

Channel planes run in parallel, each in bands of output rows small enough for the first-level
cache. For a band, the padded rows it reads are copied (vectorized in their column blocks, on
the stack), then the product runs as vectors along the band's run of padded rows (within each
row when rows are read apart), ``_UNROLL`` vectors at a time for independent multiply-add
chains, the kernel taps unrolled; the output stage keeps ``OW`` columns of each row (every
``stride``-th) with the fused elementwise work, vectorized.

Knobs (AutoTVM, templates ``<row>.x86``; the fallback is the choice above): ``tile_oh`` output
rows a band (divisors of the height whose band of product values is at most four times the
first-level budget), ``unroll_vectors`` vectors of the product computed together (1, 2, 4
or 8; with rows read apart, those dividing a padded row's vectors).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import extent, fuse_parallel, product, vectorize_inner
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import DEPTHWISE_CONV2D_NCHW_ROWS, DEPTHWISE_PAD_ROWS
from . import tunable

__all__ = ["schedule_depthwise_conv2d_nchw_rows"]

#: Vectors of the product computed together (independent multiply-add chains).
_UNROLL = 4
#: Product values of one band of rows (with its padded rows, a few KiB: first-level cache).
_BAND_VALUES = 2048
#: The widest band (in ``_BAND_VALUES``) and the most vectors computed together the knobs offer.
_MAX_BAND_SHARE = 4
_MAX_UNROLL = 8


def _carrier(conv: ComputeOp, outputs: Sequence[Tensor]) -> Tensor | None:
    """The output stage of the plane's values: the single output (the crop, with any
    elementwise work inlined) of the convolution's output shape.
    """
    if len(outputs) != 1 or not is_inlinable(outputs[0].op):
        return None
    out = outputs[0]
    n, ch = (const_int(d) for d in conv.output(0).shape[:2])
    dims = [const_int(d) for d in out.shape]
    return out if len(dims) == 4 and dims[:2] == [n, ch] else None  # noqa: PLR2004


def _schedule_plane(s: Any, conv: ComputeOp, out: Tensor) -> None:
    pad = next(t.op for t in conv.input_tensors if t.op.tag == DEPTHWISE_PAD_ROWS)
    assert isinstance(pad, ComputeOp)
    dtype = conv.output(0).dtype  # the accumulators' (the fused output may be requantized)
    lanes = vector_lanes(dtype)
    stage = s[out.op]
    n, ch, y, x = stage.op.axis
    work = product([*(extent(a) for a in conv.axis), *(extent(r) for r in conv.reduce_axis)])
    fuse_parallel(stage, [n, ch], work)
    sh = int(conv.attrs.get("stride", (1, 1))[0])
    pitch = int(conv.attrs["pitch"])
    oh = const_int(out.shape[2]) or 1
    # The output row is a run of the product's row (every stride-th value): vectors, loaded
    # lane by lane from the band's stack buffer when strided (still faster than scalar stores).
    vectorize_inner(stage, x, dtype)
    # Bands of rows whose padded input and product fit the first-level cache.
    bands = [d for d in range(1, oh + 1) if oh % d == 0 and d * pitch <= _BAND_VALUES]
    wide = [
        d for d in range(1, oh + 1) if oh % d == 0 and d * pitch <= _MAX_BAND_SHARE * _BAND_VALUES
    ]
    cfg = tunable.config(out)
    band = tunable.knob(cfg, "tile_oh", wide, max(bands))
    band_outer, _ = stage.split(y, factor=band)
    s[conv].compute_at(stage, band_outer)
    cstage = s[conv]
    _, cc, run = cstage.op.axis
    rows: list[Any] = []
    unrolls = [1, 2, 4, 8]
    if sh != 1:  # rows read apart: vectors within a row (the pitch is whole vectors)
        row, run = cstage.split(run, factor=pitch)
        rows = [row]
        unrolls = [u for u in range(1, _MAX_UNROLL + 1) if (pitch // lanes) % u == 0]
    unroll = tunable.knob(cfg, "unroll_vectors", unrolls, max(u for u in unrolls if u <= _UNROLL))
    outer, inner = cstage.split(run, factor=lanes * unroll)
    group, lane = cstage.split(inner, factor=lanes)
    cstage.reorder(*rows, outer, *cstage.op.reduce_axis, group, lane)
    for r in cstage.op.reduce_axis:
        cstage.unroll(r)
    cstage.unroll(group)
    cstage.vectorize(lane)
    # The band's padded rows: one row of column blocks per step.
    s[pad].compute_at(cstage, cc)
    pstage = s[pad]
    _, block = pstage.split(pstage.op.axis[2], factor=int(pad.attrs.get("blocks", 1)))
    pstage.unroll(block)
    if (extent(pstage.op.axis[3]) or 1) >= 2:  # noqa: PLR2004
        pstage.vectorize(pstage.op.axis[3])
    # Plane buffers on the stack: the compiler sees they cannot alias, and keeps a block's
    # accumulators in registers across the taps.
    cstage.scope = "local"
    pstage.scope = "local"


def schedule_depthwise_conv2d_nchw_rows(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.depthwise_conv2d_nchw_rows`` and the elementwise work after it."""
    return schedule_anchored(outs, DEPTHWISE_CONV2D_NCHW_ROWS, _carrier, _schedule_plane)
