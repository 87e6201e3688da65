"""Default knobs of TVM's x86 blocked convolution templates (``topi.x86.conv2d_avx_common``).

A convolution workload's fallback configuration blocks input and output channels by the
largest divisors up to the target's 32-bit SIMD lanes, and output columns by the largest
divisor of the output width below 32 (columns held in registers).
"""

from __future__ import annotations

from typing import Any

from ...autotvm.task.space import OtherOptionEntity, SplitEntity
from .._target import vector_lanes

__all__ = ["fallback_schedule", "get_simd_32bit_lanes"]

_MAX_REGISTER_COLUMNS = 31


def get_simd_32bit_lanes() -> int:
    """32-bit lanes of the current target's SIMD registers."""
    return vector_lanes("float32")


def _largest_divisor(n: int, cap: int) -> int:
    return next(d for d in range(max(1, min(cap, n)), 0, -1) if n % d == 0)


def fallback_schedule(cfg: Any, wkl: Any) -> None:
    """Set ``tile_ic``, ``tile_oc``, ``tile_ow`` and ``unroll_kw`` of ``cfg`` for the
    convolution workload ``wkl`` (fields as TVM's ``topi.nn.conv2d.Workload``).
    """
    dilated_kw = (wkl.kernel_w - 1) * wkl.dilation_w + 1
    out_width = (wkl.width + wkl.padl + wkl.padr - dilated_kw) // wkl.stride_w + 1
    oc_bn = _largest_divisor(wkl.out_filter, get_simd_32bit_lanes())
    ic_bn = _largest_divisor(wkl.in_filter, oc_bn)
    reg_n = _largest_divisor(out_width, _MAX_REGISTER_COLUMNS)
    cfg["tile_ic"] = SplitEntity([wkl.in_filter // ic_bn, ic_bn])
    cfg["tile_oc"] = SplitEntity([wkl.out_filter // oc_bn, oc_bn])
    cfg["tile_ow"] = SplitEntity([out_width // reg_n, reg_n])
    cfg["unroll_kw"] = OtherOptionEntity(False)


#: TVM's name of :func:`fallback_schedule`.
_fallback_schedule = fallback_schedule
