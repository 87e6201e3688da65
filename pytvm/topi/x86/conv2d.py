"""CPU schedules of NCHW convolutions: ``conv2d_nchw``, ``group_conv2d_nchw`` and
``depthwise_conv2d_nchw``.

A block of the output is two rows (when the height is even) by one vector of columns
(depthwise blocks take up to four vectors of a row, one channel each) by, for dense
convolutions, as many output channels as fill the vector registers; where the channels do not
fill them (few channels, or a count with no divisor near the budget), as many vectors of the
row as the rest of the registers hold. Any width vectorizes: a row
is blocks of whole vectors and a narrower tail block (a split that does not divide, cut off by
loop partitioning, whose block is one shorter vector); a row shorter than a vector is one
block. A block accumulates in a local buffer
over the whole reduction (channels, then kernel rows and columns), channels and rows
unrolled and the width vectorized; blocks run in parallel. The padded input is its own
stage, computed once before the convolution, so the inner loops carry no bounds checks.

Knobs (AutoTVM, templates ``<row>.x86`` of the rows scheduled here; the fallback is the choice
above): ``tile_oc`` output channels a block (divisors of the channels up to the accumulator
budget; 1 for depthwise), ``tile_oh`` its rows (divisors of the height up to 4), ``tile_ow``
its vectors of a row (1 to 4, at most the row's whole vectors; none for a row shorter than a
vector), ``unroll_kw`` whether the kernel-column loop of the reduction is unrolled. A point
whose block holds more accumulators than the vector registers (less a spare one for the
kernel value and one for the input) raises ``TVMValueError`` (an instantiation error).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...autotvm.task.space import ConfigEntity
from ...ffi.errors import TVMValueError
from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import (
    divisors,
    extent,
    largest_divisor,
    tile_conv_output,
    vector_registers,
)
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..tag import CONV2D_NCHW, DEPTHWISE_CONV2D_NCHW, GROUP_CONV2D_NCHW
from . import tunable

__all__ = [
    "conv2d_width_use",
    "schedule_conv2d_nchw",
    "schedule_depthwise_conv2d_nchw",
    "schedule_group_conv2d_nchw",
]

#: Vector registers left beside the accumulators, and the most accumulators (more spill, as in
#: the packed convolution).
_SPARE_REGISTERS = 4
_MAX_ACCUMULATORS = 20
#: The most rows and row vectors a block's knobs offer.
_MAX_ROWS = 4
_MAX_ROW_VECTORS = 4
_CONV_TAGS = (CONV2D_NCHW, GROUP_CONV2D_NCHW, DEPTHWISE_CONV2D_NCHW)


def conv2d_width_use(ow: int, dtype: str, stride: int = 1) -> float:
    """The share of the vector lanes the direct schedule fills along an output row of ``ow``
    columns: a row shorter than a vector is one vector of ``ow`` lanes; a longer one counts
    its whole vectors only (not its narrower tail block). 0 without vectors, and with a
    ``stride`` along the row (each vector's inputs are gathered).

    Examples
    --------
    >>> from pytvm.target import Target
    >>> from pytvm.topi.x86.conv2d import conv2d_width_use
    >>> with Target("c -mattr=+avx512f"):
    ...     [conv2d_width_use(ow, "float32") for ow in (80, 56, 14)]
    [1.0, 0.8571428571428571, 0.875]
    """
    lanes = vector_lanes(dtype)
    if lanes < 2 or stride > 1:  # noqa: PLR2004
        return 0.0
    return ow / lanes if ow < lanes else ow // lanes * lanes / ow


def _row_block(ow: int | None, lanes: int, depthwise: bool) -> tuple[int, int]:
    """``(width, vec)``: output columns per block and per vector. A row of at least one vector
    runs in blocks of whole vectors (up to four for depthwise, one channel a block) and a
    narrower tail block; a shorter row is one block, one vector of its width.
    """
    if ow is None:
        return lanes, lanes
    if ow < lanes:
        return ow, ow
    width = min(4, ow // lanes) * lanes if depthwise else lanes
    return width, lanes


def _row_vectors(ow: int | None, lanes: int, cap: int) -> int:
    """Vectors of a row per block, at most ``cap``: the most that divide the row's whole
    vectors (no tail block beyond the row's own), else ``cap``.
    """
    whole = (ow or lanes) // lanes
    if cap <= 1 or whole <= 1:
        return 1
    dividing = largest_divisor(whole, cap)
    return dividing if 2 * dividing > min(cap, whole) else min(cap, whole)


def _vectorize_row(stage: Any, axis: Any, width: int, vec: int) -> None:
    """Vectorize a block axis of ``width`` columns as vectors of ``vec`` (the outer part
    unrolled); a tail block narrower than ``width`` becomes a shorter vector.
    """
    if vec < 2:  # noqa: PLR2004
        return
    if vec >= width:
        stage.vectorize(axis)
        return
    outer, inner = stage.split(axis, factor=vec)
    stage.unroll(outer)
    stage.vectorize(inner)


def _block(conv: ComputeOp, dtype: str) -> tuple[int, int, int, int]:
    """The schedule's own block: ``(fb, rows, width, vec)``."""
    lanes = vector_lanes(dtype)
    depthwise = conv.tag == DEPTHWISE_CONV2D_NCHW
    width, vec = _row_block(extent(conv.axis[3]), lanes, depthwise)
    vectors = max(1, -(-width // max(vec, 1)))
    rows = 2 if (extent(conv.axis[2]) or 1) % 2 == 0 else 1  # weights reused by two rows
    accumulators = min(vector_registers(dtype) - _SPARE_REGISTERS, _MAX_ACCUMULATORS)
    budget = accumulators // (vectors * rows)
    fb = largest_divisor(extent(conv.axis[1]), 1 if depthwise else max(1, budget))
    if not depthwise and vec == lanes:  # few channels: more vectors of the row fill the rest
        width = _row_vectors(extent(conv.axis[3]), lanes, accumulators // (fb * rows)) * lanes
    return fb, rows, width, vec


def _block_knobs(cfg: Any, conv: ComputeOp, dtype: str) -> tuple[int, int, int, int, bool]:
    """``(fb, rows, width, vec, unroll_kw)`` from the knobs of ``cfg`` (declared here; their
    fallback: :func:`_block`).
    """
    fb, rows, width, vec = _block(conv, dtype)
    lanes = vector_lanes(dtype)
    depthwise = conv.tag == DEPTHWISE_CONV2D_NCHW
    channels, oh, ow = (extent(conv.axis[i]) for i in (1, 2, 3))
    registers = vector_registers(dtype)
    cap = registers - 2
    fb = tunable.knob(cfg, "tile_oc", [] if depthwise else divisors(channels, cap), fb)
    rows = tunable.knob(cfg, "tile_oh", divisors(oh, _MAX_ROWS), rows)
    whole = (ow or 0) // lanes if vec == lanes else 0
    options = range(1, min(whole, _MAX_ROW_VECTORS) + 1)
    width = tunable.knob(cfg, "tile_ow", [v * vec for v in options], width)
    kw = extent(conv.reduce_axis[-1]) or 1
    unroll_kw = tunable.knob(cfg, "unroll_kw", [False, True] if kw > 1 else [], False)
    accumulators = fb * rows * -(-width // max(vec, 1))
    if accumulators > cap and isinstance(cfg, ConfigEntity):  # a point, not the space
        raise TVMValueError(
            f"conv2d_nchw schedule: a block of {fb} channels x {rows} rows x {width} columns "
            f"holds {accumulators} vector accumulators; the target has {registers} vector "
            f"registers (at most {cap} accumulators): a smaller tile_oc, tile_oh or tile_ow"
        )
    return fb, rows, width, vec, unroll_kw


def _schedule_conv(s: Any, conv: ComputeOp, out: Tensor) -> None:
    dtype = conv.output(0).dtype  # the accumulators' (the fused output may be requantized)
    fb, rows, width, vec, unroll_kw = _block_knobs(tunable.config(out), conv, dtype)
    c = conv.output(0)
    cc = s.cache_write(c, "local")
    if out.op is not conv:
        s[c].compute_inline()
    stage, xo, _, xi = tile_conv_output(s, conv, out, fb, rows, width)
    _vectorize_row(stage, xi, width, vec)
    s[cc].compute_at(stage, xo)
    cn, cf, cy, cx = s[cc].op.axis
    s[cc].reorder(cn, *s[cc].op.reduce_axis, cf, cy, cx)
    if unroll_kw:
        s[cc].unroll(s[cc].op.reduce_axis[-1])
    s[cc].unroll(cf)
    s[cc].unroll(cy)
    _vectorize_row(s[cc], cx, width, vec)


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
