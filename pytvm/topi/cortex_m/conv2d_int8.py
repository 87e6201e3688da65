"""``conv2d_nchw_int8_dsp``: the int8 convolution (and, as a 1x1 one over rows, the int8 dense
layer) of a Cortex-M with the DSP extension, two int16 products per ``SMLAD``.

The operands are those of :func:`pytvm.topi.nn.conv2d_nchw_int8`: the kernel packed
``OIHW<fb>o4i`` (int32 words of four input channels' int8 weights, ``fb`` output channels a
block; ``AlterOpLayout`` packs a constant one at build time), the data packed in the kernel as a
stage of uint32 words of four channels' bytes (int8 data shifted into uint8, padded with the
zero point). One reduction step reads a data word and a weight word per output channel and
adds their four byte products with the DSP extension (:func:`~pytvm.topi.cortex_m.dsp.dot4_u8s8`:
``UXTB16``/``SXTB16`` into int16 halves, two ``SMLAD``). The zero point's share,
``zero_point * sum(w[f])``, is subtracted per output channel from a small stage of weight sums
(the same products with bytes of one).

:func:`schedule_conv2d_nchw_int8_dsp` keeps ``fb`` accumulators of one output pixel in registers
(the data word's halves extracted once for the block), the elementwise work after the
convolution (requantization) fused into the loop that stores them; no vectors, no parallel
loops.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from .. import tag
from .._shape import const_shape
from ..generic._tiling import extent
from ..generic._traverse import as_outputs, create_schedule, reads_output_of, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..nn.conv2d_int8 import (
    DATA_QUADS,
    KERNEL_WORDS,
    conv2d_int8_kernel_pack_te,
    conv2d_nchw_int8_blocked,
)
from .dsp import dot4_u8s8

__all__ = [
    "CONV2D_NCHW_INT8_DSP",
    "DSP_CHANNEL_BLOCK",
    "conv2d_nchw_int8_dsp",
    "schedule_conv2d_nchw_int8_dsp",
]

#: Tag of the channel-blocked product stage.
CONV2D_NCHW_INT8_DSP = tag.CONV2D_NCHW_INT8_DSP
#: Output channels a reduction step accumulates side by side (registers of a Cortex-M: four
#: accumulators, the data word's two halves, the weight word's two).
DSP_CHANNEL_BLOCK = 4
_SUMS = "weight_sums_dsp"
_NCHW = 4


def conv2d_nchw_int8_dsp(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    channels: int | None = None,
    zero_point: int = 0,
) -> Tensor:
    """int32 convolution ``sum((x - zero_point) * w)`` of uint8 or int8 ``data [N, C, H, W]``
    (padded with ``zero_point``) and a packed int8 ``kernel`` (``OIHW<fb>o4i``:
    :func:`~pytvm.topi.nn.conv2d_int8_kernel_pack`; a plain int8 ``[F, C, KH, KW]`` weight is
    packed by a stage in blocks of :data:`DSP_CHANNEL_BLOCK`), through the DSP extension's dual
    16-bit multiply-accumulate; the result has the first ``channels`` output channels.

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.cortex_m import conv2d_nchw_int8_dsp
    >>> x = te.placeholder((1, 8, 9, 9), "int8", name="x")
    >>> w = te.placeholder((2, 2, 3, 3, 4), "int32", name="w")
    >>> y = conv2d_nchw_int8_dsp(x, w, 1, 1, 1, channels=6, zero_point=-3)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '6', '9', '9'], 'int32')
    """
    op = "conv2d_nchw_int8_dsp"
    if kernel.dtype == "int8" and len(kernel.shape) == _NCHW:
        channels = const_shape(op, "weight", kernel, _NCHW)[0] if channels is None else channels
        kernel = conv2d_int8_kernel_pack_te(kernel, DSP_CHANNEL_BLOCK)
    return conv2d_nchw_int8_blocked(
        op,
        data,
        kernel,
        (stride, padding, dilation),
        channels,
        zero_point,
        dot4_u8s8,
        CONV2D_NCHW_INT8_DSP,
        _SUMS,
    )


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor) -> None:
    """``fb`` accumulators per output pixel of ``out`` (the stage storing the result)."""
    fb = extent(conv.axis[4])
    assert fb is not None  # const_shape checked the packed kernel
    stage = s[out.op]
    if out.op is not conv:
        n, ch, y, x = stage.op.axis
        fo, fi = stage.split(ch, factor=fb)
        stage.reorder(n, fo, y, x, fi)
        stage.unroll(fi)
        s[conv].compute_at(stage, x)
    s[conv].set_scope("local")  # the accumulators: registers
    cn, cfo, cy, cx, cfi = s[conv].op.axis
    s[conv].reorder(cn, cfo, cy, cx, *s[conv].op.reduce_axis, cfi)
    s[conv].unroll(cfi)


def schedule_conv2d_nchw_int8_dsp(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`conv2d_nchw_int8_dsp` and the elementwise stages after it: the
    accumulators of a pixel's channel block computed where the fused output stores them, the
    data words, the weight sums and a weight packed in the kernel as stages of their own.
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    anchors: list[ComputeOp] = []
    others: list[ComputeOp] = []

    def keep(op: ComputeOp) -> bool:
        return op.name in (DATA_QUADS, KERNEL_WORDS) or op.tag.endswith(",pad")

    def visit(op: ComputeOp) -> None:
        if op.tag == CONV2D_NCHW_INT8_DSP:
            anchors.append(op)
        elif op.name == _SUMS:
            stage = s[op]
            stage.reorder(*stage.op.axis[:1], *stage.op.reduce_axis, stage.op.axis[1])
            stage.unroll(stage.op.axis[1])
        elif keep(op) or id(op) in output_ops:
            others.append(op)

    traverse_inline(s, outputs, visit, keep=keep)
    carriers = set()
    for anchor in anchors:
        out = next(
            (
                t
                for t in outputs
                if reads_output_of(t.op, anchor, _NCHW, (DATA_QUADS, KERNEL_WORDS, _SUMS))
            ),
            None,
        )
        if out is None:
            continue
        carriers.add(id(out.op))
        _schedule_block(s, anchor, out)
    for op in others:
        if op.name == DATA_QUADS:
            continue  # its loop nest as it is: no fused index to divide back into four
        if id(op) not in carriers:
            schedule_injective_from_existing(s, op.output(0))
    return s
