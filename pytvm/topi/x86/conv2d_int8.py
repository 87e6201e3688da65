"""CPU schedule of ``conv2d_nchw_int8`` and whether the target has 8-bit dot products.

The register blocking is the packed float convolution's (:mod:`.conv2d_packed`): ``fb`` output
channels (int32 vectors, one ``vpdpbusd`` each per step) by ``wb`` output columns, accumulated
over channel quads and kernel taps in registers, the data quad of a column broadcast to the
channel lanes. The data quads are a stage of their own, computed once per call; the unpacking
stage stores each output channel's columns with the fused elementwise work (requantization).
The target has the instruction when its features (``Target.features``: ``-mcpu``'s edited by
``-mattr``, the host's without them) include AVX-512 VNNI for 16 int32 lanes, AVX-VNNI (or
AVX-512 VNNI with VL) for 8.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...target import Target
from ...te.tensor import ComputeOp, Tensor
from .._target import vector_lanes
from ..generic._tiling import (
    extent,
    fuse_parallel,
    largest_divisor,
    product,
    tile_conv_output,
    vector_registers,
    vectorize_block,
)
from ..generic._traverse import as_outputs, create_schedule, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..nn.conv2d_int8 import CONV2D_NCHW_INT8, DATA_QUADS, KERNEL_WORDS, WEIGHT_SUMS
from .conv2d_packed import _ACCUMULATOR_SHARE, _MAX_ACCUMULATORS, _carrier, conv2d_packed_block

__all__ = ["schedule_conv2d_nchw_int8", "vnni_lanes"]

_VNNI_512 = "avx512vnni"
_VNNI_256 = "avxvnni"
_VL = "avx512vl"


def _features() -> frozenset[str]:
    return (Target.current(allow_none=True) or Target("c")).features


def vnni_lanes() -> int | None:
    """The int32 lanes of one ``vpdpbusd`` on the current target's vectors (16 with AVX-512
    VNNI, 8 with AVX-VNNI), None where the target has no 8-bit dot-product instruction.

    Examples
    --------
    >>> from pytvm.target import Target
    >>> from pytvm.topi.x86 import vnni_lanes
    >>> with Target("llvm -mcpu=x86-64 -mattr=+avx2"):
    ...     vnni_lanes() is None
    True
    >>> with Target("llvm -mcpu=x86-64 -mattr=+avx512f,+avx512bw,+avx512vnni"):
    ...     vnni_lanes()
    16
    """
    lanes = vector_lanes("int32")
    features = _features()
    if lanes == 16 and _VNNI_512 in features:  # noqa: PLR2004
        return lanes
    if lanes == 8 and (_VNNI_256 in features or {_VNNI_512, _VL} <= features):  # noqa: PLR2004
        return lanes
    return None


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = conv.output(0).dtype  # int32 accumulators, whatever the output's dtype
    lanes = vector_lanes(dtype)
    _, _, oh, ow, fb = (extent(a) for a in conv.axis)
    assert fb is not None and oh is not None and ow is not None
    rows, wb = conv2d_packed_block(fb, oh, ow, dtype)
    blocks = _channel_blocks(extent(conv.axis[1]), fb * rows * wb // max(1, lanes), dtype)
    c = conv.output(0)
    cc = s.cache_write(c, "local")
    s[c].compute_inline()
    staged = s.cache_read(cc, "local", [s[c].op])
    stage, xo, fi, xi = tile_conv_output(s, conv, out, fb * blocks, rows, wb)
    stage.vectorize(xi)
    stage.pragma(fi, "loop_vectorize", False)
    if blocks > 1:  # the tile's channel blocks accumulate side by side, in registers
        s[cc].compute_at(stage, xo)
    s[staged].compute_at(stage, xo)
    _, sfo, sy, sx, sfi = s[staged].op.axis
    if blocks == 1:
        s[cc].compute_at(s[staged], sfo)
    s[staged].unroll(sy)
    s[staged].unroll(sx)
    vectorize_block(s[staged], sfi, fb, lanes)
    cn, cfo, cy, cx, cfi = s[cc].op.axis
    if blocks > 1:
        s[cc].reorder(cn, *s[cc].op.reduce_axis, cfo, cy, cx, cfi)
        s[cc].unroll(cfo)
    else:
        s[cc].reorder(cn, cfo, *s[cc].op.reduce_axis, cy, cx, cfi)
    s[cc].unroll(cy)
    s[cc].unroll(cx)
    vectorize_block(s[cc], cfi, fb, lanes)


def _channel_blocks(fo: int | None, accumulators: int, dtype: str) -> int:
    """Channel blocks of one register tile: one, or where a tile of ``accumulators`` vectors
    (a small plane: a dense layer's single column) leaves at least as many again of the
    accumulator registers free, as many blocks (dividing ``fo``) as fill them, so the
    products of one reduction step are independent rather than one chain.
    """
    budget = min(int(vector_registers(dtype) * _ACCUMULATOR_SHARE), _MAX_ACCUMULATORS)
    if fo is None or accumulators * 2 > budget:
        return 1
    return largest_divisor(fo, budget // max(1, accumulators))


def _schedule_quads(s: Any, quads: ComputeOp) -> None:
    """The data quads: rows in parallel, each row's words in vectors (one byte plane each)."""
    stage = s[quads]
    b, q, y, x = stage.op.axis
    lanes = vector_lanes(quads.output(0).dtype)
    width = extent(x)
    if lanes >= 2 and width is not None and width >= lanes:  # noqa: PLR2004
        _, xi = stage.split(x, factor=lanes)
        stage.vectorize(xi)
    fuse_parallel(stage, [b, q, y], product([extent(a) for a in quads.axis]))


def _schedule_weight_sums(s: Any, sums: ComputeOp) -> None:
    """The weight sums: the reduction outside, a vector of output channels inside."""
    stage = s[sums]
    o, i = stage.op.axis
    stage.reorder(o, *stage.op.reduce_axis, i)
    vectorize_block(stage, i, extent(i) or 1, vector_lanes("int32"))


def schedule_conv2d_nchw_int8(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv2d_nchw_int8`` and the elementwise stages after it: the
    register blocks at the output that stores them (:func:`_carrier`), the data quads, the
    weight sums and a weight packed in the kernel as stages of their own, any other output
    injective.
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    anchors: list[ComputeOp] = []
    others: list[ComputeOp] = []

    def keep(op: ComputeOp) -> bool:
        return op.name in (DATA_QUADS, KERNEL_WORDS) or op.tag.endswith(",pad")

    def visit(op: ComputeOp) -> None:
        if op.tag == CONV2D_NCHW_INT8:
            anchors.append(op)
        elif op.name == WEIGHT_SUMS:
            _schedule_weight_sums(s, op)
        elif keep(op) or id(op) in output_ops:
            others.append(op)

    traverse_inline(s, outputs, visit, keep=keep)
    carriers = set()
    for anchor in anchors:
        out = _carrier(anchor, outputs)
        if out is not None:
            carriers.add(id(out.op))
            _schedule_block(s, anchor, out)
    for op in others:
        if op.name == DATA_QUADS:
            _schedule_quads(s, op)
        elif id(op) not in carriers:
            schedule_injective_from_existing(s, op.output(0))
    return s
