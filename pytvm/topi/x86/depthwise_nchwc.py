"""TVM's x86 blocked depthwise convolution ``depthwise_conv2d_NCHWc`` and its schedule, an
AutoTVM template with the knobs of ``conv2d_NCHWc`` (:mod:`.conv2d_nchwc`).

Data ``[N, C // cb, H, W, cb]`` with a kernel ``[C * M // fb, 1, KH, KW, 1, fb]`` gives
``[N, C * M // fb, OH, OW, fb]``: output channel ``o`` reads input channel ``o // M``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import const_shape, op_error
from .conv2d_nchwc import Workload, block_of, blocked_window, declare_knobs, schedule_blocked

__all__ = ["depthwise_conv2d_NCHWc", "schedule_depthwise_conv2d_NCHWc"]

_OP = "depthwise_conv2d_NCHWc"


@register_topi_compute("depthwise_conv2d_NCHWc.x86")
def depthwise_conv2d_NCHWc(
    cfg: Any,
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: int | str | Sequence[int],
    dilation: int | Sequence[int],
    layout: str,
    out_layout: str,
    out_dtype: str | None = None,
) -> Tensor:
    """Blocked depthwise convolution (see the module)."""
    n, ic_chunk, ih, iw, ic_bn = const_shape(_OP, "data", data, 5)
    oc_chunk, one, kh, kw, one_b, oc_bn = const_shape(_OP, "kernel", kernel, 6)
    if (one, one_b) != (1, 1):
        raise op_error(_OP, "kernel shape", kernel.shape, "[F // fb, 1, KH, KW, 1, fb]")
    if block_of(layout, "layout", _OP) != ic_bn or block_of(out_layout, "out_layout", _OP) != oc_bn:
        raise op_error(_OP, "layouts", (layout, out_layout), f"NCHW{ic_bn}c, NCHW{oc_bn}c")
    in_channel, out_channel = ic_chunk * ic_bn, oc_chunk * oc_bn
    if out_channel % in_channel:
        raise op_error(_OP, "output channels", out_channel, f"a multiple of {in_channel}")
    multiplier = out_channel // in_channel
    dtype = out_dtype or data.dtype
    win = blocked_window(_OP, data, (ih, iw), (kh, kw), strides, padding, dilation)
    (sh, sw), (dh, dw), (pt, pl, pb, pr), (oh, ow) = win.stride, win.dilation, win.pads, win.out
    wkl = Workload(data.dtype, dtype, ih, iw, in_channel, in_channel, out_channel, kh, kw,
                   pt, pl, pb, pr, dh, dw, sh, sw)  # fmt: skip
    declare_knobs(cfg, wkl, ow)
    padded = win.padded
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")

    def body(b: Var, occ: Var, y: Var, x: Var, ocb: Var) -> PrimExpr:
        ic = (occ * oc_bn + ocb) // multiplier
        a = padded[b, ic // ic_bn, y * sh + ry * dh, x * sw + rx * dw, ic % ic_bn]
        k = kernel[occ, 0, ry, rx, 0, ocb]
        return _sum(a.astype(dtype) * k.astype(dtype), axis=[ry, rx])  # type: ignore[no-any-return]

    return compute((n, oc_chunk, oh, ow, oc_bn), body, name=_OP, tag=tag.DEPTHWISE_CONV2D_NCHWC)


@register_topi_schedule("depthwise_conv2d_NCHWc.x86")
def schedule_depthwise_conv2d_NCHWc(cfg: Any, outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`depthwise_conv2d_NCHWc` and the elementwise stages after it."""
    return schedule_blocked(cfg, outs, tag.DEPTHWISE_CONV2D_NCHWC)
