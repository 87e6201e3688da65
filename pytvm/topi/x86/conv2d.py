"""CPU schedules of NCHW convolutions: ``conv2d_nchw``, ``group_conv2d_nchw`` and
``depthwise_conv2d_nchw``.

A block of the output is two rows (when the height is even) by a width of up to one vector
(the largest power of two that divides the width, so a locally accumulated block never runs
past the input; depthwise blocks take up to four vectors of a row) by, for dense convolutions,
as many output channels as fill the vector registers. A block accumulates in a local buffer
over the whole reduction (channels, then kernel rows and columns), channels and rows
unrolled and the width vectorized; blocks run in parallel. The padded input is its own
stage, computed once before the convolution, so the inner loops carry no bounds checks.
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
    pow2_divisor,
    tile_conv_output,
    vector_registers,
    vectorize_block,
)
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import CONV2D_NCHW, DEPTHWISE_CONV2D_NCHW, GROUP_CONV2D_NCHW

__all__ = [
    "conv2d_width_use",
    "schedule_conv2d_nchw",
    "schedule_depthwise_conv2d_nchw",
    "schedule_group_conv2d_nchw",
]

_SPARE_REGISTERS = 4
_CONV_TAGS = (CONV2D_NCHW, GROUP_CONV2D_NCHW, DEPTHWISE_CONV2D_NCHW)


def conv2d_width_use(ow: int, dtype: str) -> float:
    """The share of the vector lanes the direct schedule fills along an output row of ``ow``
    columns (0 without vectors).
    """
    lanes = vector_lanes(dtype)
    vec = pow2_divisor(ow, lanes)
    return 0.0 if vec < 2 else vec / lanes  # noqa: PLR2004


def _schedule_conv(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = out.dtype
    lanes = vector_lanes(dtype)
    ow = extent(conv.axis[3])
    vec = pow2_divisor(ow, lanes)  # divides the width: the block is attached
    vectorize = vec >= 2  # noqa: PLR2004
    depthwise = conv.tag == DEPTHWISE_CONV2D_NCHW
    if depthwise and vectorize and ow is not None:
        # One channel per block: widen the block along the row instead (up to 4 vectors).
        width = max(d for d in range(vec, min(ow, 4 * lanes) + 1, vec) if ow % d == 0)
    else:
        width = vec
    vectors = max(1, width // max(vec, 1))
    rows = 2 if (extent(conv.axis[2]) or 1) % 2 == 0 else 1  # weights reused by two rows
    budget = (vector_registers(dtype) - _SPARE_REGISTERS) // (vectors * rows)
    fb = largest_divisor(extent(conv.axis[1]), 1 if depthwise else max(1, budget))
    c = conv.output(0)
    cc = s.cache_write(c, "local")
    if out.op is not conv:
        s[c].compute_inline()
    stage, xo, _, xi = tile_conv_output(s, conv, out, fb, rows, width)
    if vectorize:
        vectorize_block(stage, xi, width, vec)
    s[cc].compute_at(stage, xo)
    cn, cf, cy, cx = s[cc].op.axis
    s[cc].reorder(cn, *s[cc].op.reduce_axis, cf, cy, cx)
    s[cc].unroll(cf)
    s[cc].unroll(cy)
    if vectorize:
        vectorize_block(s[cc], cx, width, vec)


def _carrier(conv: ComputeOp, outputs: list[Tensor]) -> Tensor:
    """The single elementwise output of ``conv``'s shape, else ``conv``'s own output."""
    out = conv.output(0)
    if len(outputs) == 1 and outputs[0].op is not conv and is_inlinable(outputs[0].op):
        if [const_int(a) for a in outputs[0].shape] == [const_int(a) for a in out.shape]:
            return outputs[0]
    return out


def _schedule(outs: Tensor | Sequence[Tensor]) -> Any:
    return schedule_anchored(outs, _CONV_TAGS, _carrier, _schedule_conv, keep_pads=True)


def schedule_conv2d_nchw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv2d_nchw`` and the elementwise stages applied to its output."""
    return _schedule(outs)


def schedule_group_conv2d_nchw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.group_conv2d_nchw``."""
    return _schedule(outs)


def schedule_depthwise_conv2d_nchw(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.depthwise_conv2d_nchw`` (one channel per block, width vectorized)."""
    return _schedule(outs)
