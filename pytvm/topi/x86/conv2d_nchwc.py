"""TVM's x86 blocked convolution ``conv2d_NCHWc`` and its schedule, an AutoTVM template.

Data ``[N, C // cb, H, W, cb]`` (layout ``NCHW<cb>c``) is convolved with a kernel
``[F // fb, C // groups // cb, KH, KW, cb, fb]`` (``OIHW<cb>i<fb>o``) into
``[N, F // fb, OH, OW, fb]`` (``NCHW<fb>c``). The knobs are TVM's: ``tile_ic``, ``tile_oc``
(the channel blocks, fixed here by the layouts), ``tile_ow`` (output columns kept in registers:
its inner size) and ``unroll_kw`` (unroll the kernel's columns). A block of ``ow`` columns times
``fb`` channels accumulates locally over the reduction (input-channel blocks, kernel rows and
columns, then the ``cb`` channels of a block), columns unrolled and channels vectorized; rows
of every (batch, channel block) run in parallel.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from ...autotvm.task.topi_integration import register_topi_compute, register_topi_schedule
from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import ComputeOp, Tensor
from ...tir.expr import PrimExpr, Var
from .. import tag
from .._shape import const_shape, op_error, pair
from .._target import vector_lanes
from ..generic._tiling import extent, fuse_parallel, product, vectorize_block
from ..generic._traverse import is_inlinable
from ..generic.anchored import schedule_anchored
from ..nn.conv2d import Workload
from ..nn.padding import pad
from ..nn.utils import get_pad_tuple
from .conv2d_avx_common import fallback_schedule

__all__ = [
    "BlockedWindow",
    "Workload",
    "block_of",
    "blocked_window",
    "conv2d_NCHWc",
    "declare_knobs",
    "schedule_blocked",
    "schedule_conv2d_NCHWc",
]

_OP = "conv2d_NCHWc"
#: Widest register block of output columns a tuned configuration may choose.
_MAX_OW_BLOCK = 64


def declare_knobs(cfg: Any, wkl: Workload, out_width: int) -> None:
    """Declare TVM's knobs of a blocked convolution on ``cfg`` (and set the fallback's)."""
    cfg.define_split("tile_ic", wkl.in_filter, num_outputs=2)
    cfg.define_split("tile_oc", wkl.out_filter, num_outputs=2)
    cfg.define_split(
        "tile_ow", out_width, num_outputs=2, filter=lambda e: e.size[-1] <= _MAX_OW_BLOCK
    )
    cfg.define_knob("unroll_kw", [True, False])
    if cfg.is_fallback:
        fallback_schedule(cfg, wkl)


def block_of(layout: str, what: str, op: str = _OP) -> int:
    """The channel block ``n`` of a layout ``NCHW<n>c`` (raises naming ``op`` and ``what``)."""
    m = re.fullmatch(r"NCHW(\d+)c", layout)
    if m is None:
        raise op_error(op, what, layout, "'NCHW<n>c'")
    return int(m.group(1))


class BlockedWindow(NamedTuple):
    """The window of a convolution over ``NCHW<n>c`` data: stride, dilation, the padding
    ``(top, left, bottom, right)``, the output ``(OH, OW)`` and the padded data.
    """

    stride: tuple[int, int]
    dilation: tuple[int, int]
    pads: tuple[int, int, int, int]
    out: tuple[int, int]
    padded: Tensor


def blocked_window(
    op: str,
    data: Tensor,
    input_hw: tuple[int, int],
    kernel_hw: tuple[int, int],
    strides: int | Sequence[int],
    padding: int | str | Sequence[int],
    dilation: int | Sequence[int],
) -> BlockedWindow:
    """Parse the window of ``op`` over ``data [N, C//n, H, W, n]`` (``input_hw = (H, W)``;
    ``padding`` as ``get_pad_tuple`` takes it, ``"SAME"``/``"VALID"`` too) and pad ``data``
    when needed.
    """
    (kh, kw), (ih, iw) = kernel_hw, input_hw
    sh, sw = pair(op, "strides", strides)
    dh, dw = pair(op, "dilation", dilation)
    dkh, dkw = (kh - 1) * dh + 1, (kw - 1) * dw + 1
    pt, pl, pb, pr = (int(p) for p in get_pad_tuple(padding, (dkh, dkw)))
    oh, ow = (ih + pt + pb - dkh) // sh + 1, (iw + pl + pr - dkw) // sw + 1
    if oh < 1 or ow < 1:
        raise op_error(op, "kernel", (kh, kw), f"a dilated window within {(ih, iw)} + padding")
    padded = data
    if pt or pl or pb or pr:
        padded = pad(data, [0, 0, pt, pl, 0], [0, 0, pb, pr, 0], name="data_pad")
    return BlockedWindow((sh, sw), (dh, dw), (pt, pl, pb, pr), (oh, ow), padded)


@register_topi_compute("conv2d_NCHWc.x86")
def conv2d_NCHWc(
    cfg: Any,
    data: Tensor,
    kernel: Tensor,
    strides: int | Sequence[int],
    padding: int | str | Sequence[int],
    dilation: int | Sequence[int],
    layout: str,
    out_layout: str,
    out_dtype: str = "float32",
) -> Tensor:
    """Blocked convolution (see the module); ``layout`` / ``out_layout`` are ``NCHW<n>c``."""
    n, ic_chunk, ih, iw, ic_bn = const_shape(_OP, "data", data, 5)
    oc_chunk, icg_chunk, kh, kw, kic_bn, oc_bn = const_shape(_OP, "kernel", kernel, 6)
    if kic_bn != ic_bn or block_of(layout, "layout") != ic_bn:
        raise op_error(_OP, "input channel block", (layout, kic_bn), f"NCHW{ic_bn}c, {ic_bn}")
    if block_of(out_layout, "out_layout") != oc_bn:
        raise op_error(_OP, "out_layout", out_layout, f"NCHW{oc_bn}c (the kernel's block)")
    in_channel, per_group, num_filter = ic_chunk * ic_bn, icg_chunk * ic_bn, oc_chunk * oc_bn
    if per_group < 1 or in_channel % per_group or num_filter % (in_channel // per_group):
        raise op_error(_OP, "kernel input channels", per_group, f"a divisor of {in_channel}")
    groups = in_channel // per_group
    win = blocked_window(_OP, data, (ih, iw), (kh, kw), strides, padding, dilation)
    (sh, sw), (dh, dw), (pt, pl, pb, pr), (oh, ow) = win.stride, win.dilation, win.pads, win.out
    wkl = Workload(data.dtype, out_dtype, ih, iw, in_channel, groups, num_filter, kh, kw,
                   pt, pl, pb, pr, dh, dw, sh, sw)  # fmt: skip
    declare_knobs(cfg, wkl, ow)
    padded = win.padded
    ic = reduce_axis((0, per_group), name="ic")
    ry = reduce_axis((0, kh), name="ry")
    rx = reduce_axis((0, kw), name="rx")
    filters_per_group = num_filter // groups

    def body(b: Var, occ: Var, y: Var, x: Var, ocb: Var) -> PrimExpr:
        channel: Any = ic
        if groups > 1:
            channel = (occ * oc_bn + ocb) // filters_per_group * per_group + ic
        a = padded[b, channel // ic_bn, y * sh + ry * dh, x * sw + rx * dw, channel % ic_bn]
        k = kernel[occ, ic // ic_bn, ry, rx, ic % ic_bn, ocb]
        return _sum(a.astype(out_dtype) * k.astype(out_dtype), axis=[ic, ry, rx])  # type: ignore[no-any-return]

    return compute((n, oc_chunk, oh, ow, oc_bn), body, name="conv2d_NCHWc", tag=tag.CONV2D_NCHWC)


def _carrier(conv: ComputeOp, outputs: list[Tensor]) -> Tensor:
    """The single elementwise output of ``conv``'s shape (bias, activation), else ``conv``."""
    out = conv.output(0)
    if len(outputs) == 1 and outputs[0].op is not conv and is_inlinable(outputs[0].op):
        if [extent(a) for a in outputs[0].op.axis] == [extent(a) for a in conv.axis]:
            return outputs[0]
    return out


def schedule_blocked(cfg: Any, outs: Tensor | Sequence[Tensor], anchor_tag: str) -> Any:
    """Schedule a blocked convolution (``conv2d_NCHWc``, ``depthwise_conv2d_NCHWc``; the stage
    tagged ``anchor_tag``) and the elementwise stages after it, from ``cfg``'s ``tile_ow`` and
    ``unroll_kw``.
    """
    reg_n = int(cfg["tile_ow"].size[-1])
    unroll_kw = bool(cfg["unroll_kw"].val)

    def block(s: Any, conv: ComputeOp, out: Tensor) -> None:
        lanes = vector_lanes(out.dtype)
        c = conv.output(0)
        oc_bn = extent(conv.axis[4]) or 1
        cc = s.cache_write(c, "local")
        if out.op is not conv:
            s[c].compute_inline()
        stage = s[out.op]
        b, occ, y, x, ocb = stage.op.axis
        xo, xi = stage.split(x, factor=reg_n)
        stage.reorder(b, occ, y, xo, xi, ocb)
        work = product([*(extent(a) for a in conv.axis), *(extent(r) for r in conv.reduce_axis)])
        fuse_parallel(stage, [b, occ, y], work)
        s[cc].compute_at(stage, xo)
        vectorize_block(stage, ocb, oc_bn, lanes)
        _, _, _, cx, cocb = s[cc].op.axis
        *channels, ry, rx = s[cc].op.reduce_axis
        if channels:  # the input channels of a dense convolution, by the kernel's block
            ico, ici = s[cc].split(channels[0], factor=_input_block(conv))
            s[cc].reorder(ico, ry, rx, ici, cx, cocb)
        else:
            s[cc].reorder(ry, rx, cx, cocb)
        if unroll_kw:
            s[cc].unroll(rx)
        s[cc].unroll(cx)
        vectorize_block(s[cc], cocb, oc_bn, lanes)

    return schedule_anchored(outs, anchor_tag, _carrier, block, keep_pads=True)


@register_topi_schedule("conv2d_NCHWc.x86")
def schedule_conv2d_NCHWc(cfg: Any, outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`conv2d_NCHWc` and the elementwise stages after it, from ``cfg``'s
    ``tile_ow`` and ``unroll_kw``.
    """
    return schedule_blocked(cfg, outs, tag.CONV2D_NCHWC)


def _input_block(conv: ComputeOp) -> int:
    """The kernel's input-channel block ``cb`` (its fifth axis)."""
    kernel = next(t for t in conv.input_tensors if t.ndim == 6)  # noqa: PLR2004
    return int(const_shape(_OP, "kernel", kernel, 6)[4])
