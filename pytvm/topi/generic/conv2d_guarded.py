"""Schedule of ``conv2d_nchw_guarded`` on a CPU with one lane (a microcontroller).

The output is tiled into register blocks of ``fb`` channels x ``rows`` x ``cols`` pixels that
together hold the accumulators the target's registers leave (``Target.num_registers`` less
four for the operands: 4 on a Cortex-M): ``2 x 2 x 1`` for a convolution whose input values
serve two filters, ``1 x 2 x 2`` for a depthwise one. A block accumulates in a local buffer over
the whole reduction (input channels, kernel rows, kernel columns), its pixels unrolled, and
the elementwise stages after the convolution write it out. The outer loops stay apart (no
fusing for a parallel launch: one core), so the loop-partition pass cuts the row and column
loops at the input's bounds guards: interior blocks run without checks, border blocks keep
them, and no padded copy of the input is ever made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import num_registers, vector_lanes
from ..nn.conv2d_guarded import CONV2D_NCHW_GUARDED, conv2d_nchw_guarded
from ._tiling import extent, largest_divisor
from ._traverse import is_inlinable
from .anchored import schedule_anchored

__all__ = ["conv2d_guarded", "conv2d_guarded_applies", "schedule_conv2d_nchw_guarded"]

#: Registers an inner loop keeps for operands beside the accumulators.
_OPERAND_REGISTERS = 4
#: Registers assumed when the target does not say (a Cortex-M's).
_DEFAULT_REGISTERS = 8
_NCHW = 4


def _block(conv: ComputeOp) -> tuple[int, int, int]:
    """``(fb, rows, cols)`` of a register block (see the module)."""
    accumulators = max(1, (num_registers() or _DEFAULT_REGISTERS) - _OPERAND_REGISTERS)
    groups = int(conv.attrs.get("groups", 1))
    filters = extent(conv.axis[1]) or 1
    oh, ow = extent(conv.axis[2]) or 1, extent(conv.axis[3]) or 1
    per_group = filters // groups
    fb = _factor(per_group, max(1, accumulators // 2))
    left = max(1, accumulators // fb)
    rows = _factor(oh, min(2, left))
    cols = _factor(ow, max(1, left // rows))
    return fb, rows, cols


def _factor(n: int, cap: int) -> int:
    """A block of at most ``cap`` along an axis of ``n``: a divisor when one is more than half
    of ``cap``, else ``cap`` itself (the last block overruns; loop partitioning cuts it off).
    """
    cap = max(1, min(cap, n))
    d = largest_divisor(n, cap)
    return d if 2 * d > cap else cap


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor) -> None:
    fb, rows, cols = _block(conv)
    c = conv.output(0)
    cc = s.cache_write(c, "local")
    if out.op is not conv:
        s[c].compute_inline()
    stage = s[out.op]
    n, f, y, x = stage.op.axis
    fo, fi = stage.split(f, factor=fb)
    yo, yi = stage.split(y, factor=rows)
    xo, xi = stage.split(x, factor=cols)
    stage.reorder(n, fo, yo, xo, fi, yi, xi)
    s[cc].compute_at(stage, xo)
    cn, cf, cy, cx = s[cc].op.axis
    s[cc].reorder(cn, *s[cc].op.reduce_axis, cf, cy, cx)
    for axis in (cf, cy, cx):
        s[cc].unroll(axis)


def _carrier(conv: ComputeOp, outputs: list[Tensor]) -> Tensor:
    """The single elementwise output of ``conv``'s shape, else ``conv``'s own output."""
    out = conv.output(0)
    if len(outputs) == 1 and outputs[0].op is not conv and is_inlinable(outputs[0].op):
        if [const_int(a) for a in outputs[0].shape] == [const_int(a) for a in out.shape]:
            return outputs[0]
    return out


def schedule_conv2d_nchw_guarded(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.nn.conv2d_guarded.conv2d_nchw_guarded`` and the elementwise stages
    applied to its output, for a one-lane CPU (see the module).
    """
    return schedule_anchored(outs, CONV2D_NCHW_GUARDED, _carrier, _schedule_block)


def conv2d_guarded_applies(wl: Any) -> bool:
    """Whether the strategy row ``conv2d_nchw_guarded`` takes the ``nn.conv2d`` workload ``wl``
    (a ``topi.x86.strategy.OpWorkload``): float NCHW data of constant shape, a plain ``OIHW``
    kernel, on a target with one lane for the data's dtype (a microcontroller).
    """
    data, kernel = wl.data_shape, wl.weight_shape
    return (
        str(wl.get("kernel_layout", "OIHW")) == "OIHW"
        and str(wl.get("data_layout", "NCHW")) == "NCHW"
        and len(data) == _NCHW
        and len(kernel) == _NCHW
        and None not in data
        and None not in kernel
        and str(wl.data_dtype).startswith("float")
        and str(wl.weight_dtype).startswith("float")
        and vector_lanes(str(wl.data_dtype)) == 1
    )


def conv2d_guarded(data: Tensor, weight: Tensor, wl: Any) -> Tensor:
    """The strategy row's compute: ``conv2d_nchw_guarded`` with ``wl``'s attributes."""
    return conv2d_nchw_guarded(
        data,
        weight,
        wl.get("strides", 1),
        wl.get("padding", 0),
        wl.get("dilation", 1),
        int(wl.get("groups", 1)),
        wl.out_dtype,
    )
