"""``depthwise_conv2d_nchw_int8_one_lane``: the int8 depthwise convolution of a CPU with one
lane (a Cortex-M) in int32 integer arithmetic.

``sum((x - zero_point) * w)`` over a window is computed as ``sum(x' * w) - zero_point *
sum(w)``, where ``x'`` is the input padded with ``zero_point`` (its padding then adds exactly
the zero point's share): the taps are plain byte loads and multiply-accumulates (``MLA``), no
subtraction per tap, no float conversion. The correction ``zero_point * sum(w[c])`` is one
multiply-subtract per output from a stage of per-channel weight sums.

:func:`schedule_depthwise_conv2d_nchw_int8_one_lane` pads one channel's plane at a time (the
scratch is a plane, not the input), and keeps :data:`ONE_LANE_COLUMNS` output columns of a row
as int32 accumulators in registers, every tap unrolled (the compiler reuses the bytes the
neighbouring columns share); the elementwise stages after the convolution (requantization)
are fused into the loop that stores the accumulators.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ...te.operation import compute, reduce_axis
from ...te.reduction import sum as _sum
from ...te.tensor import ComputeOp, Tensor
from ...tir.expr import PrimExpr, Var, const
from .. import tag
from .._shape import const_shape, op_error
from ..generic._traverse import as_outputs, create_schedule, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..nn.conv_window import conv_window
from ..nn.padding import pad

__all__ = [
    "DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE",
    "ONE_LANE_COLUMNS",
    "depthwise_conv2d_nchw_int8_one_lane",
    "schedule_depthwise_conv2d_nchw_int8_one_lane",
]

#: Tag of the int32 product stage.
DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE = tag.DEPTHWISE_CONV2D_NCHW + ",int8_one_lane"
#: Output columns a block accumulates in registers (four accumulators on a Cortex-M leave
#: registers for the tap's bytes, the weight and the addresses).
ONE_LANE_COLUMNS = 4
_PAD = "depthwise_int8_pad"
_SUMS = "depthwise_int8_weight_sums"
_NCHW = 4


def depthwise_conv2d_nchw_int8_one_lane(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    zero_point: int = 0,
) -> Tensor:
    """int32 depthwise convolution ``sum((x - zero_point) * w)`` of uint8 or int8 ``data [N,
    C, H, W]`` (padded with ``zero_point``) and an int8 ``kernel [C, 1, KH, KW]`` (one filter per
    channel).

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.cortex_m import depthwise_conv2d_nchw_int8_one_lane
    >>> x = te.placeholder((1, 8, 9, 9), "uint8", name="x")
    >>> w = te.placeholder((8, 1, 3, 3), "int8", name="w")
    >>> y = depthwise_conv2d_nchw_int8_one_lane(x, w, 2, 1, 1, zero_point=3)
    >>> [str(d) for d in y.shape], y.dtype
    (['1', '8', '5', '5'], 'int32')
    """
    op = "depthwise_conv2d_nchw_int8_one_lane"
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    f, mult, kh, kw = const_shape(op, "kernel", kernel, _NCHW)
    if data.dtype not in ("uint8", "int8") or kernel.dtype != "int8":
        raise op_error(op, "dtypes", (data.dtype, kernel.dtype), "8-bit data, an int8 kernel")
    if f != c or mult != 1:
        raise op_error(op, "kernel", kernel.shape, f"[{c}, 1, KH, KW]: one filter per channel")
    info = np.iinfo(np.dtype(data.dtype))
    if not info.min <= zero_point <= info.max:
        raise op_error(op, "zero_point", zero_point, f"a {data.dtype} value")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, "int32")
    oh, ow = win.output_size(h, w)
    top, left, bottom, right = win.padding
    padded = data
    if top or left or bottom or right:
        padded = pad(data, (0, 0, top, left), (0, 0, bottom, right), zero_point, name=_PAD)
    ry, rx = win.ry, win.rx

    def body(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        a = padded(b, ch, *win.taps(y, x)).astype("int32")
        return _sum(a * kernel(ch, 0, ry.var, rx.var).astype("int32"), axis=[ry, rx])  # type: ignore[no-any-return]

    conv = compute((n, c, oh, ow), body, name=op, tag=DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE)
    if zero_point == 0:
        return conv
    sy = reduce_axis((0, kh), name="sy")
    sx = reduce_axis((0, kw), name="sx")
    sums = compute(
        (c,),
        lambda ch: _sum(kernel(ch, 0, sy.var, sx.var).astype("int32"), axis=[sy, sx]),
        name=_SUMS,
    )
    zp = const(int(zero_point), "int32")
    corrected: Tensor = compute(
        (n, c, oh, ow),
        lambda b, ch, y, x: conv(b, ch, y, x) - sums(ch) * zp,
        name=f"{op}_zero_point",
        tag=tag.ELEMWISE,
    )
    return corrected


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor, padded: ComputeOp | None) -> None:
    """The accumulators of :data:`ONE_LANE_COLUMNS` columns of ``out``'s rows in registers,
    the taps unrolled, the padded plane made per channel.
    """
    acc = s.cache_write(conv.output(0), "local")  # the accumulators: registers
    if out.op is not conv:
        s[conv].compute_inline()
    stage = s[out.op]
    n, ch, y, x = stage.op.axis
    xo, xi = stage.split(x, factor=ONE_LANE_COLUMNS)
    stage.reorder(n, ch, y, xo, xi)
    stage.unroll(xi)
    s[acc].compute_at(stage, xo)
    cn, cc, cy, cx = s[acc].op.axis
    cry, crx = s[acc].op.reduce_axis
    s[acc].reorder(cn, cc, cy, cry, crx, cx)
    for axis in (cry, crx, cx):
        s[acc].unroll(axis)
    if padded is not None:
        s[padded].compute_at(stage, ch)


def schedule_depthwise_conv2d_nchw_int8_one_lane(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of :func:`depthwise_conv2d_nchw_int8_one_lane` and the elementwise stages
    after it (see the module).
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    output_ops = {id(t.op) for t in outputs}
    anchors: list[ComputeOp] = []
    pads: dict[int, ComputeOp] = {}
    others: list[ComputeOp] = []

    def keep(op: ComputeOp) -> bool:
        return op.name in (_PAD, _SUMS)

    def visit(op: ComputeOp) -> None:
        if op.tag == DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE:
            anchors.append(op)
        elif op.name == _PAD:
            pads[id(op)] = op
        elif op.name == _SUMS:
            pass  # a small root stage: one sum per channel
        elif id(op) in output_ops:
            others.append(op)

    traverse_inline(s, outputs, visit, keep=keep)
    carriers: set[int] = set()
    for anchor in anchors:
        out = next((t for t in outputs if _reads(t.op, anchor)), None)
        if out is None:
            out = anchor.output(0)
        carriers.add(id(out.op))
        padded = next((pads[id(t.op)] for t in anchor.input_tensors if id(t.op) in pads), None)
        _schedule_block(s, anchor, out, padded)
    for op in others:
        if id(op) not in carriers:
            schedule_injective_from_existing(s, op.output(0))
    return s


def _reads(op: Any, anchor: ComputeOp) -> bool:
    """Whether stage ``op`` is ``anchor`` or reads it (through inlined stages) as a 4-d
    ``[N, C, OH, OW]`` output.
    """
    if op is anchor:
        return True
    if not isinstance(op, ComputeOp) or len(op.axis) != _NCHW:
        return False
    seen: set[int] = set()
    todo = list(op.input_tensors)
    while todo:
        t = todo.pop()
        if t.op is anchor:
            return True
        if id(t.op) in seen or not isinstance(t.op, ComputeOp):
            continue
        seen.add(id(t.op))
        if t.op.name not in (_PAD, _SUMS):
            todo.extend(t.op.input_tensors)
    return False
