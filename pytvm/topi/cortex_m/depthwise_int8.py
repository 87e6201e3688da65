"""``depthwise_conv2d_nchw_int8_one_lane`` and ``conv2d_nchw_int8_one_lane``: the int8
depthwise convolution, and the one of a single group (a stem of few input channels), of a CPU
with one lane (a Cortex-M) in int32 integer arithmetic.

``sum((x - zero_point) * w)`` over a window is computed as ``sum(x' * w) - zero_point *
sum(w)``, where ``x'`` is the input padded with ``zero_point`` (its padding then adds exactly
the zero point's share): the taps are plain byte loads and multiply-accumulates (``MLA``), no
subtraction per tap, no float conversion. The correction ``zero_point * sum(w[c])`` is one
multiply-subtract per output from a stage of per-filter weight sums.

:func:`schedule_depthwise_conv2d_nchw_int8_one_lane` (both kernels) pads one channel's plane at
a time for the depthwise one (the scratch is a plane, not the input), and keeps a block of a
row's output columns (:func:`row_block`: :data:`ONE_LANE_COLUMNS`, or a whole short row) as int32
accumulators in registers, every tap unrolled (the compiler reuses the bytes the
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
from ...tir.expr import Call, PrimExpr, Var, const
from ...tir.op import all as _all
from ...tir.op import if_then_else
from .. import tag
from .._shape import const_shape, op_error
from ..generic._tiling import extent
from ..generic._traverse import as_outputs, create_schedule, reads_output_of, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..nn.conv_window import conv_window

__all__ = [
    "CONV2D_NCHW_INT8_ONE_LANE",
    "DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE",
    "ONE_LANE_COLUMNS",
    "conv2d_nchw_int8_one_lane",
    "depthwise_conv2d_nchw_int8_one_lane",
    "row_block",
    "schedule_depthwise_conv2d_nchw_int8_one_lane",
]

#: Tag of the int32 product stage of the depthwise convolution.
DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE = tag.DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE
#: Tag of the int32 product stage of the convolution of one group.
CONV2D_NCHW_INT8_ONE_LANE = tag.CONV2D_NCHW_INT8_ONE_LANE
_ONE_LANE_TAGS = (DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE, CONV2D_NCHW_INT8_ONE_LANE)
#: Output columns a block accumulates in registers (four accumulators on a Cortex-M leave
#: registers for the tap's bytes, the weight and the addresses).
ONE_LANE_COLUMNS = 4
#: The longest row that is one block (a lone column left over costs more than a fifth
#: accumulator does).
_SHORT_ROW = 6
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
    return _conv_int8_one_lane(op, data, kernel, (stride, padding, dilation), zero_point, True)


def conv2d_nchw_int8_one_lane(
    data: Tensor,
    kernel: Tensor,
    stride: int | Sequence[int],
    padding: int | Sequence[int],
    dilation: int | Sequence[int],
    zero_point: int = 0,
) -> Tensor:
    """int32 convolution (one group) ``sum((x - zero_point) * w)`` of uint8 or int8 ``data
    [N, C, H, W]`` (padded with ``zero_point``) and an int8 ``kernel [F, C, KH, KW]``, as
    :func:`depthwise_conv2d_nchw_int8_one_lane` computes it (for a network's stem, whose few
    input channels leave the DSP kernel's data words mostly padding).

    Examples
    --------
    >>> from pytvm import te
    >>> from pytvm.topi.cortex_m import conv2d_nchw_int8_one_lane
    >>> x = te.placeholder((1, 1, 49, 10), "int8", name="x")
    >>> w = te.placeholder((64, 1, 10, 4), "int8", name="w")
    >>> y = conv2d_nchw_int8_one_lane(x, w, 2, (4, 1, 5, 1), 1, zero_point=-10)
    >>> [str(d) for d in y.shape]
    ['1', '64', '25', '5']
    """
    op = "conv2d_nchw_int8_one_lane"
    return _conv_int8_one_lane(op, data, kernel, (stride, padding, dilation), zero_point, False)


def _conv_int8_one_lane(
    op: str,
    data: Tensor,
    kernel: Tensor,
    window: tuple[int | Sequence[int], int | Sequence[int], int | Sequence[int]],
    zero_point: int,
    depthwise: bool,
) -> Tensor:
    """The int32 product stage (tagged for the schedule) less the zero point's share."""
    stride, padding, dilation = window
    n, c, h, w = const_shape(op, "input", data, _NCHW)
    f, kc, kh, kw = const_shape(op, "kernel", kernel, _NCHW)
    if data.dtype not in ("uint8", "int8") or kernel.dtype != "int8":
        raise op_error(op, "dtypes", (data.dtype, kernel.dtype), "8-bit data, an int8 kernel")
    if depthwise and (f != c or kc != 1):
        raise op_error(op, "kernel", kernel.shape, f"[{c}, 1, KH, KW]: one filter per channel")
    if not depthwise and kc != c:
        raise op_error(op, "kernel", kernel.shape, f"[F, {c}, KH, KW]: all input channels")
    info = np.iinfo(np.dtype(data.dtype))
    if not info.min <= zero_point <= info.max:
        raise op_error(op, "zero_point", zero_point, f"a {data.dtype} value")
    win = conv_window(op, data, (kh, kw), stride, padding, dilation, "int32")
    oh, ow = win.output_size(h, w)
    top, left, bottom, right = win.padding
    padded = data
    if top or left or bottom or right:
        padded = _pad_guarded(data, win.padding, zero_point)
    ry, rx = win.ry, win.rx
    rc = reduce_axis((0, 1 if depthwise else c), name="rc")

    def body(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        chan = ch if depthwise else rc.var
        a = padded(b, chan, *win.taps(y, x)).astype("int32")
        k = kernel(ch, rc.var, ry.var, rx.var).astype("int32")
        return _sum(a * k, axis=[rc, ry, rx])  # type: ignore[no-any-return]

    product_tag = DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE if depthwise else CONV2D_NCHW_INT8_ONE_LANE
    conv = compute((n, f, oh, ow), body, name=op, tag=product_tag)
    if zero_point == 0:
        return conv
    sc = reduce_axis((0, kc), name="sc")
    sy = reduce_axis((0, kh), name="sy")
    sx = reduce_axis((0, kw), name="sx")
    sums = compute(
        (f,),
        lambda ch: _sum(kernel(ch, sc.var, sy.var, sx.var).astype("int32"), axis=[sc, sy, sx]),
        name=_SUMS,
    )
    zp = const(int(zero_point), "int32")
    corrected: Tensor = compute(
        (n, f, oh, ow),
        lambda b, ch, y, x: conv(b, ch, y, x) - sums(ch) * zp,
        name=f"{op}_zero_point",
        tag=tag.ELEMWISE,
    )
    return corrected


def _likely(cond: PrimExpr) -> PrimExpr:
    return Call("bool", "tir.likely", (cond,))


def _pad_guarded(data: Tensor, pads: tuple[int, int, int, int], value: int) -> Tensor:
    """``data`` padded with ``value``, each bound a ``likely`` guard: the loop-partition pass
    cuts the plane's loops at them, so its interior is a plain copy.
    """
    n, c, h, w = (int(d) for d in const_shape("pad", "input", data, _NCHW))
    top, left, bottom, right = pads

    def body(b: Var, ch: Var, y: Var, x: Var) -> PrimExpr:
        row, col = y - top, x - left
        conds = []
        if top:
            conds.append(_likely(y >= top))
        if bottom:
            conds.append(_likely(row < h))
        if left:
            conds.append(_likely(x >= left))
        if right:
            conds.append(_likely(col < w))
        return if_then_else(_all(*conds), data(b, ch, row, col), const(value, data.dtype))

    shape = (n, c, h + top + bottom, w + left + right)
    return compute(shape, body, name=_PAD, tag=tag.INJECTIVE + ",pad")


def row_block(width: int) -> int:
    """Output columns of a block for rows of ``width``: the whole row up to six columns, else
    :data:`ONE_LANE_COLUMNS` (or three, when it divides ``width`` and four does not).

    >>> [row_block(w) for w in (5, 6, 8, 9, 12, 13, 48)]
    [5, 6, 4, 3, 4, 4, 4]
    """
    if width <= _SHORT_ROW:
        return width
    if width % ONE_LANE_COLUMNS and width % (ONE_LANE_COLUMNS - 1) == 0:
        return ONE_LANE_COLUMNS - 1
    return ONE_LANE_COLUMNS


def _schedule_block(s: Any, conv: ComputeOp, out: Tensor, padded: ComputeOp | None) -> None:
    """The accumulators of :data:`ONE_LANE_COLUMNS` columns of ``out``'s rows in registers,
    the taps unrolled, the padded plane made per channel.
    """
    acc = s.cache_write(conv.output(0), "local")  # the accumulators: registers
    if out.op is not conv:
        s[conv].compute_inline()
    stage = s[out.op]
    n, ch, y, x = stage.op.axis
    xo, xi = stage.split(x, factor=row_block(extent(x) or ONE_LANE_COLUMNS))
    stage.reorder(n, ch, y, xo, xi)
    stage.unroll(xi)
    s[acc].compute_at(stage, xo)
    cn, cc, cy, cx = s[acc].op.axis
    crc, cry, crx = s[acc].op.reduce_axis
    s[acc].reorder(cn, cc, cy, crc, cry, crx, cx)
    for axis in (cry, crx, cx):
        s[acc].unroll(axis)
    if padded is not None and conv.tag == DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE:
        s[padded].compute_at(stage, ch)  # one channel's plane


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
        if op.tag in _ONE_LANE_TAGS:
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
        out = next(
            (t for t in outputs if reads_output_of(t.op, anchor, _NCHW, (_PAD, _SUMS))), None
        )
        if out is None:
            out = anchor.output(0)
        carriers.add(id(out.op))
        padded = next((pads[id(t.op)] for t in anchor.input_tensors if id(t.op) in pads), None)
        _schedule_block(s, anchor, out, padded)
    for op in others:
        if id(op) not in carriers:
            schedule_injective_from_existing(s, op.output(0))
    return s
