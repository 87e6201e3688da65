"""The CPU strategy table: every implementation of a convolution or matrix product, one row each.

A row (:class:`Implementation`) names its implementation, the tag of its anchor stage, when it
applies (a predicate over a :class:`OpWorkload`: shapes, dtypes, attributes; block sizes come from
the current target), its compute, its schedule, the weight layout it packs a constant weight
into (for ``AlterOpLayout``; None: the plain weight), and a priority. :func:`select` picks the
applicable row of an operator with the highest priority (the earlier row on a tie), as TVM's
``relay.op.strategy.x86`` does with ``plevel``.

The rules the rows read:

- ``nn.conv2d``: a packed kernel layout (``OIHW<fb>o``) is the packed convolution; so is a
  plain constant float kernel (or an 8/16-bit integer one accumulated in int32, in int32
  vectors) with one group over NCHW data whose output channels, the last
  block padded (:func:`~pytvm.topi.x86.conv2d_channel_block`), fill at least as much of the
  vectors as the direct schedule's output rows do (on a tie, a float convolution reducing
  over a few vectors per output value keeps the direct schedule), unless the pointwise convolution
  applies (1x1, stride 1, no padding, planes of whole vectors), which outranks it; a grouped
  (not depthwise) constant kernel too, in blocks within a group, where they fill more of the
  vectors than the direct schedule's rows. A float convolution of one group strided along
  the width whose input holds no more values than its output (stems) is
  ``conv2d_nchw_phases`` (the direct schedule over the input's column phases) where its
  rows fill at least as much of the vectors as the packed kernel's channel blocks (and then
  not packed). Otherwise one
  group is ``conv2d_nchw``; ``groups == C`` with one input channel per group is depthwise (over
  padded row planes when the padding is at most the width; with a constant float kernel of
  one filter a channel, over channel blocks in the vector lanes, kernel ``OIHW<cb>o``, where a
  padded block fits the stack and the lanes the rows waste on padding columns and strides
  outweigh the channel blocks' padding and the gathers into and out of blocks); any other
  grouping is grouped.
- ``qnn.conv2d`` (one group, 8-bit data, int8 kernel with zero point 0): ``conv2d_nchw_int8``
  through 8-bit dot products where the target has them (``vnni_lanes``; a constant kernel is
  packed ``OIHW<fb>o4i``), else the packed convolution of int16 operands (the data less its
  zero point; ``OIHW<fb>o``). A depthwise ``qnn.conv2d`` (``groups == C``) runs over padded
  row planes in exact float32 (or int32) lanes (``depthwise_conv2d_nchw_int8``), a pointwise
  or width-strided one (stems) whose reduction is short in float32 pixel lanes
  (``conv2d_nchw_pointwise_int8``, ``conv2d_nchw_phases_int8``: no transposition out of
  channel lanes; ``_qnn_float_lanes`` weighs them).
  On a one-lane target (a Cortex-M) a ``qnn.conv2d`` of one group is the DSP kernel
  (``topi.cortex_m``, ``OIHW4o4i``) where the target has the DSP extension and the data at
  least four channels, else the direct convolution of int16 operands over the plain kernel.
- ``nn.dense``: a packed weight layout (``NK<bn>n``, the last panel zero-filled past ``units``)
  or a constant float ``[N, K]`` weight is ``dense_pack``; else, like ``nn.matmul`` and
  ``nn.batch_matmul`` with a computed right operand, a float product with a vector's worth of
  rows (or with columns the plain schedule cannot vectorize) packs that operand into panels
  first (``matmul_pack``); else ``dense``/``matmul``/``batch_matmul``, whose tag says whether
  B's columns are contiguous.

The default schedule of a fused group (:mod:`.default`) looks its anchor up in this table too,
in table order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from ...ffi.errors import TVMValueError
from ...te.operation import compute
from ...te.tensor import Tensor
from ...tir.expr import const
from .. import nn, tag
from .._shape import const_int
from .._target import vector_lanes
from ..cortex_m.conv2d_int8 import CONV2D_NCHW_INT8_DSP, schedule_conv2d_nchw_int8_dsp
from ..cortex_m.depthwise_int8 import (
    CONV2D_NCHW_INT8_ONE_LANE,
    DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE,
    schedule_depthwise_conv2d_nchw_int8_one_lane,
)
from ..cortex_m.strategy import (
    qnn_conv2d_depthwise_one_lane,
    qnn_conv2d_depthwise_one_lane_applies,
    qnn_conv2d_dsp,
    qnn_conv2d_dsp_applies,
    qnn_conv2d_dsp_layout,
    qnn_conv2d_int8_one_lane,
    qnn_conv2d_one_lane_applies,
)
from ..generic._tiling import pow2_divisor
from ..generic.conv2d_guarded import (
    conv2d_guarded,
    conv2d_guarded_applies,
    schedule_conv2d_nchw_guarded,
)
from ..layout import layout_axes
from ..nn.conv2d_guarded import CONV2D_NCHW_GUARDED
from ..nn.conv2d_int8 import CONV2D_NCHW_INT8
from ..nn.conv2d_int8_lanes import conv2d_nchw_phases_int8
from ..nn.conv_window import padding4
from ..nn.depthwise import padded_row_pitch
from ..nn.depthwise_int8 import depthwise_conv2d_nchw_int8, depthwise_int8_accumulator
from ..nn.linear import default_panel_width
from ..nn.pointwise_int8 import conv2d_nchw_pointwise_int8
from ..transform import reshape
from .conv2d import (
    conv2d_width_use,
    schedule_conv2d_nchw,
    schedule_depthwise_conv2d_nchw,
    schedule_group_conv2d_nchw,
)
from .conv2d_int8 import schedule_conv2d_nchw_int8, vnni_lanes
from .conv2d_packed import (
    conv2d_channel_block,
    conv2d_channel_use,
    schedule_conv2d_nchw_packed,
)
from .conv2d_pointwise import conv2d_pointwise_applies, schedule_conv2d_nchw_pointwise
from .dense import schedule_batch_matmul, schedule_dense, schedule_dense_pack, schedule_matmul
from .depthwise import schedule_depthwise_conv2d_nchw_rows
from .depthwise_channels import schedule_depthwise_conv2d_nchw_channels
from .tunable import recording, register_rows, template_name

__all__ = ["STRATEGY", "Implementation", "OpWorkload", "implementations", "select"]

Schedule = Callable[[Tensor | Sequence[Tensor]], Any]


@dataclass(frozen=True, slots=True)
class OpWorkload:
    """What choosing an implementation reads: the operator, its data and weight shapes
    (None for a symbolic dimension) and dtypes, its attributes (the graph operator's), and
    whether the weight is a constant ``AlterOpLayout`` may pack.
    """

    op: str
    data_shape: tuple[int | None, ...]
    weight_shape: tuple[int | None, ...]
    data_dtype: str
    weight_dtype: str
    attrs: Mapping[str, Any] = field(default_factory=dict)
    weight_constant: bool = False

    @staticmethod
    def of(
        op: str, data: Any, weight: Any, attrs: Mapping[str, Any], weight_constant: bool = False
    ) -> OpWorkload:
        """The workload of ``op`` over ``data`` and ``weight`` (anything with ``shape`` and
        ``dtype``: tensors, tensor types).
        """
        return OpWorkload(
            op,
            tuple(const_int(d) for d in data.shape),
            tuple(const_int(d) for d in weight.shape),
            str(data.dtype),
            str(weight.dtype),
            attrs,
            weight_constant,
        )

    def get(self, key: str, default: Any = None) -> Any:
        """The attribute ``key`` (``default`` when absent or empty)."""
        value = self.attrs.get(key)
        return default if value is None or value == "" else value

    @property
    def out_dtype(self) -> str | None:
        """The requested output dtype (None: the data's)."""
        return self.get("out_dtype") or None


@dataclass(frozen=True, slots=True)
class Implementation:
    """One row of the table: an implementation of ``op`` and when it applies."""

    name: str
    op: str
    tag: str
    applies: Callable[[OpWorkload], bool]
    compute: Callable[[Tensor, Tensor, OpWorkload], Tensor]
    schedule: Schedule
    priority: int
    #: The layout a constant plain weight is packed into (None: kept plain).
    weight_layout: Callable[[OpWorkload], str] | None = None

    def __post_init__(self) -> None:
        tag.check(self.tag, self.name)

    @property
    def template(self) -> str:
        """The row's AutoTVM task name (``<name>.x86``, :mod:`.tunable`)."""
        return template_name(self.name)


# --- nn.conv2d ---------------------------------------------------------------------------

_NCHW = 4


def _kernel_layout(wl: OpWorkload) -> str:
    return str(wl.get("kernel_layout", "OIHW"))


def _plain_conv(wl: OpWorkload) -> bool:
    return _kernel_layout(wl) == "OIHW"


def _is_float(dtype: str) -> bool:
    return dtype.startswith("float")


def _conv_output_width(wl: OpWorkload) -> int | None:
    """The output width of an NCHW convolution (None: symbolic)."""
    w, kw = wl.data_shape[3], wl.weight_shape[3]
    if w is None or kw is None:
        return None
    _, left, _, right = padding4("nn.conv2d", wl.get("padding"))
    dw, sw = int(wl.get("dilation", (1, 1))[1]), int(wl.get("strides", (1, 1))[1])
    return (w + left + right - ((kw - 1) * dw + 1)) // sw + 1


_INTEGER_OPERANDS = ("int8", "uint8", "int16")


def _conv_lane_dtype(wl: OpWorkload) -> str | None:
    """The dtype of the packed convolution's vectors: the float kernel's own, or int32 for
    8/16-bit integer operands accumulated in int32 (quantized convolutions); None: neither.
    """
    if _is_float(wl.data_dtype) and _is_float(wl.weight_dtype):
        return wl.weight_dtype
    if (
        wl.data_dtype in _INTEGER_OPERANDS
        and wl.weight_dtype in _INTEGER_OPERANDS
        and wl.out_dtype == "int32"
    ):
        return "int32"
    return None


def _conv_phases(wl: OpWorkload) -> bool:
    """A float convolution of one group over NCHW data of constant shape, strided along the
    width, whose input holds no more values than its output, and whose output rows (read
    from the input's column phases, unstrided) fill at least as much of the vectors as the
    packed kernel's output-channel blocks: the phases copy each input value once where the
    packed kernel transposes each output value from its channel blocks into rows.
    """
    data, kernel = wl.data_shape, wl.weight_shape
    if not (
        _plain_conv(wl)
        and int(wl.get("groups", 1)) == 1
        and wl.get("data_layout", "NCHW") == "NCHW"
        and len(data) == len(kernel) == _NCHW
        and None not in data
        and None not in kernel
        and _is_float(wl.data_dtype)
        and _is_float(wl.weight_dtype)
    ):
        return False
    _, c, h, w = (int(d or 0) for d in data)
    f, _, kh, kw = (int(d or 0) for d in kernel)
    top, left, bottom, right = padding4("nn.conv2d", wl.get("padding"))
    (dh, dw), (sh, sw) = _pair(wl.get("dilation", 1)), _pair(wl.get("strides", 1))
    oh = (h + top + bottom - (kh - 1) * dh - 1) // sh + 1
    ow = (w + left + right - (kw - 1) * dw - 1) // sw + 1
    if sw == 1 or oh < 1 or ow < 1 or c * h * w > f * oh * ow:
        return False
    dtype = wl.weight_dtype
    return conv2d_width_use(ow, dtype) >= conv2d_channel_use(f, dtype)


def _pair(value: Any) -> tuple[int, int]:
    """An int or a pair attribute (strides, dilation) as a pair."""
    first, second = (value, value) if isinstance(value, int) else tuple(value)
    return int(first), int(second)


def _conv2d_phases(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    return nn.conv2d_nchw_phases(data, weight, *_conv_args(wl), wl.out_dtype)


def _conv_packable(wl: OpWorkload) -> bool:
    """A plain constant kernel (float, or integer accumulated in int32) of one group over NCHW
    data whose output channels fill at least as much of the vectors (the last block padded) as
    the direct schedule's output rows.
    """
    f = wl.weight_shape[0] if len(wl.weight_shape) == _NCHW else None
    lanes, groups = _conv_lane_dtype(wl), int(wl.get("groups", 1))
    if not (
        wl.weight_constant
        and _plain_conv(wl)
        and not _depthwise(wl)
        and wl.get("data_layout", "NCHW") == "NCHW"
        and len(wl.data_shape) == _NCHW
        and lanes is not None
        and f is not None
        and conv2d_channel_block(f, lanes, groups) is not None
        and not _conv_phases(wl)
    ):
        return False
    assert f is not None and lanes is not None
    ow = _conv_output_width(wl)
    stride = int(wl.get("strides", (1, 1))[1])
    width_use = 0.0 if ow is None else conv2d_width_use(ow, lanes, stride)
    use = conv2d_channel_use(f, lanes, groups)
    if groups > 1 or (use == width_use and _short_float_reduction(wl)):
        return use > width_use
    return use >= width_use


#: On a tie of lane use, the direct schedule (rows stored as computed) wins over the packed
#: kernel (each output value transposed out of its channel block, about a vector multiply-add
#: a value) while an output's reduction is at most this many vectors of multiply-adds: 3x3
#: convolutions of up to 56 input channels with AVX-512, 28 with AVX2 (1 thread Zen 5, 3x3
#: 16->16 on 256x256 1.34 -> 1.19 ms, 3->16 0.38 -> 0.24 ms; built for Zen 3, 32->32 on
#: 128x128 2.48 ms packed, 2.66 ms direct).
_DIRECT_REDUCTION_VECTORS = 32


def _short_float_reduction(wl: OpWorkload) -> bool:
    """A float convolution whose output values each reduce over at most
    ``_DIRECT_REDUCTION_VECTORS`` vectors of input channels x kernel taps.
    """
    kernel = wl.weight_shape
    if not (_is_float(wl.data_dtype) and _is_float(wl.weight_dtype)) or None in kernel[1:4]:
        return False
    c, kh, kw = (int(d or 0) for d in kernel[1:4])
    return c * kh * kw <= _DIRECT_REDUCTION_VECTORS * vector_lanes(wl.weight_dtype)


def _conv_packed_layout(wl: OpWorkload) -> str:
    lanes, groups = _conv_lane_dtype(wl) or wl.weight_dtype, int(wl.get("groups", 1))
    fb = conv2d_channel_block(int(wl.weight_shape[0] or 0), lanes, groups)
    return f"OIHW{fb}o"


def _conv_packed(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    # kernel [ceil(F / fb), C // groups, KH, KW, fb] (layout OIHW{fb}o, made by AlterOpLayout)
    layout, groups = _kernel_layout(wl), int(wl.get("groups", 1))
    if layout_axes(layout)[:4] != tuple((a, 0) for a in "OIHW"):
        raise TVMValueError(
            f"nn.conv2d: kernel_layout {layout!r}; expected 'OIHW' or 'OIHW<fb>o' (output "
            "channels in blocks of fb)"
        )
    strides, padding, dilation = wl.get("strides"), wl.get("padding"), wl.get("dilation")
    channels = wl.get("channels")  # the real output channels of a zero-padded last block
    return nn.conv2d_nchw_packed(
        data, weight, strides, padding, dilation, wl.out_dtype, channels, groups
    )


_INT8_LAYOUT = re.compile(r"OIHW(\d+)o4i")


def _conv_int8(wl: OpWorkload) -> bool:
    """A kernel packed for 8-bit dot products (``OIHW<fb>o4i``), or a plain constant int8
    kernel of one group over uint8 NCHW data accumulated in int32 on a target with the dot
    product instruction (:func:`~pytvm.topi.x86.vnni_lanes`).
    """
    if _INT8_LAYOUT.fullmatch(_kernel_layout(wl)):
        return True
    return (
        wl.weight_constant
        and _plain_conv(wl)
        and int(wl.get("groups", 1)) == 1
        and wl.get("data_layout", "NCHW") == "NCHW"
        and (wl.data_dtype, wl.weight_dtype, wl.out_dtype) == ("uint8", "int8", "int32")
        and len(wl.weight_shape) == _NCHW
        and None not in wl.weight_shape
        and vnni_lanes() is not None
    )


def _conv_int8_layout(wl: OpWorkload) -> str:
    return f"OIHW{conv2d_channel_block(int(wl.weight_shape[0] or 0), 'int32')}o4i"


def _conv2d_int8(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    # kernel [ceil(F / fb), ceil(C / 4), KH, KW, fb] int32 (OIHW{fb}o4i, made by AlterOpLayout)
    channels = wl.get("channels")
    return nn.conv2d_nchw_int8(data, weight, *_conv_args(wl), channels)


def _qnn_conv(wl: OpWorkload) -> bool:
    """``qnn.conv2d`` of one group over 8-bit NCHW data, an int8 kernel with a zero point of 0,
    int32 out.
    """
    return (
        int(wl.get("groups", 1)) == 1
        and wl.get("data_layout", "NCHW") == "NCHW"
        and wl.data_dtype in ("uint8", "int8")
        and wl.weight_dtype in ("int8", "int32")
        and int(wl.get("kernel_zero_point", 0)) == 0
        and wl.out_dtype in (None, "int32")
    )


def _qnn_conv_int8(wl: OpWorkload) -> bool:
    """A ``qnn.conv2d`` kernel packed for 8-bit dot products, or a plain int8 one on a target
    with them.
    """
    layout = _kernel_layout(wl)
    plain = layout == "OIHW" and wl.weight_dtype == "int8" and vnni_lanes() is not None
    return _qnn_conv(wl) and (plain or _INT8_LAYOUT.fullmatch(layout) is not None)


def _qnn_conv2d_int8(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    zero_point, dot = int(wl.get("input_zero_point", 0)), vnni_lanes() is not None
    channels = wl.get("channels")
    return nn.conv2d_nchw_int8(data, weight, *_conv_args(wl), channels, dot, zero_point)


def _qnn_conv_int16(wl: OpWorkload) -> bool:
    """A plain or ``OIHW<fb>o``-packed int8 ``qnn.conv2d`` kernel on a target without 8-bit dot
    products (as TVM legalizes ``qnn.conv2d`` there: int16 operands less their zero points).
    """
    layout = _kernel_layout(wl)
    if not _qnn_conv(wl) or wl.weight_dtype != "int8" or _INT8_LAYOUT.fullmatch(layout):
        return False
    return layout != "OIHW" or vnni_lanes() is None


def _qnn_conv2d_int16(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    zero_point = int(wl.get("input_zero_point", 0))
    shifted = compute(
        data.shape,
        lambda *i: data(*i).astype("int16") - const(zero_point, "int16"),
        name="qnn_shifted",
        tag=tag.ELEMWISE,
    )
    if _plain_conv(wl):  # a weight AlterOpLayout does not pack (not a constant)
        return nn.conv2d_nchw(shifted, weight, *_conv_args(wl), "int32")
    return _conv_packed(shifted, weight, wl)


def _qnn_depthwise(wl: OpWorkload) -> bool:
    """A depthwise ``qnn.conv2d`` (``groups == C``, one input channel a group) over 8-bit NCHW
    data of constant shape, a plain int8 kernel of zero point 0, left and right padding at most
    the width (padded row planes).
    """
    data, kernel = wl.data_shape, wl.weight_shape
    groups = int(wl.get("groups", 1))
    if (
        len(data) != _NCHW
        or len(kernel) != _NCHW
        or None in data
        or None in kernel
        or groups == 1
        or groups != data[1]
        or kernel[1] != 1
        or _kernel_layout(wl) != "OIHW"
        or wl.get("data_layout", "NCHW") != "NCHW"
        or wl.data_dtype not in ("uint8", "int8")
        or wl.weight_dtype != "int8"
        or int(wl.get("kernel_zero_point", 0)) != 0
        or wl.out_dtype not in (None, "int32")
    ):
        return False
    _, left, _, right = padding4("qnn.conv2d", wl.get("padding"))
    return max(left, right) <= int(data[3] or 0)


def _qnn_depthwise_conv2d(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    zero_point = int(wl.get("input_zero_point", 0))
    kernel = _depthwise_kernel(weight, wl)
    return depthwise_conv2d_nchw_int8(data, kernel, *_conv_args(wl), zero_point)


def _qnn_depthwise_lanes(wl: OpWorkload) -> OpWorkload:
    """The workload of the float32 (or int32) depthwise convolution whose lanes a depthwise
    ``qnn.conv2d`` computes in (:func:`~pytvm.topi.nn.depthwise_int8_accumulator`).
    """
    taps = int(wl.weight_shape[2] or 0) * int(wl.weight_shape[3] or 0)
    zero_point = int(wl.get("input_zero_point", 0))
    acc = depthwise_int8_accumulator(wl.data_dtype, zero_point, taps)
    return replace(wl, op="nn.conv2d", data_dtype=acc, weight_dtype=acc)


def _qnn_depthwise_channels(wl: OpWorkload) -> bool:
    """A depthwise ``qnn.conv2d`` kernel packed in channel blocks (``OIHW<cb>o``), or a plain
    constant one where the blocks win in its accumulators' lanes.
    """
    if _CHANNEL_BLOCK_LAYOUT.fullmatch(_kernel_layout(wl)):
        groups = int(wl.get("groups", 1))
        return (
            len(wl.weight_shape) == 5  # noqa: PLR2004
            and groups != 1
            and groups == wl.data_shape[1]
            and wl.weight_shape[1] == 1
            and wl.weight_dtype == "int8"
            and wl.data_dtype in ("uint8", "int8")
        )
    return (
        _qnn_depthwise(wl)
        and wl.weight_constant
        and (_depthwise_channels_win(_qnn_depthwise_lanes(wl)))
    )


def _qnn_depthwise_channels_layout(wl: OpWorkload) -> str:
    return _depthwise_channels_layout(_qnn_depthwise_lanes(wl))


def _qnn_depthwise_channels_conv2d(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    # kernel [ceil(C / cb), 1, KH, KW, cb] int8 (layout OIHW{cb}o, made by AlterOpLayout)
    zero_point = int(wl.get("input_zero_point", 0))
    return depthwise_conv2d_nchw_int8(data, weight, *_conv_args(wl), zero_point)


def _qnn_float_lanes(wl: OpWorkload) -> OpWorkload | None:
    """The float workload whose pixel lanes compute a ``qnn.conv2d`` of one group (a plain
    constant int8 kernel over 8-bit NCHW data of constant shape) exactly, where they beat the
    8-bit dot-product kernel: per output vector they cost ``C * KH * KW`` multiply-adds, the
    dot-product kernel ``ceil(C / 4) * KH * KW`` products and as many data broadcasts plus a
    transposition of about a vector's lanes out of its channel lanes. None otherwise.
    """
    data, kernel = wl.data_shape, wl.weight_shape
    if not (
        _qnn_conv(wl)
        and wl.weight_constant
        and _kernel_layout(wl) == "OIHW"
        and wl.weight_dtype == "int8"
        and len(data) == len(kernel) == _NCHW
        and None not in data
        and None not in kernel
    ):
        return None
    c, taps = int(data[1] or 0), int(kernel[2] or 0) * int(kernel[3] or 0)
    if c * taps >= 2 * -(-c // 4) * taps + vector_lanes("int32"):
        return None
    acc = depthwise_int8_accumulator(wl.data_dtype, int(wl.get("input_zero_point", 0)), c * taps)
    return replace(wl, op="nn.conv2d", data_dtype=acc, weight_dtype=acc)


def _qnn_pointwise(wl: OpWorkload) -> bool:
    """A pointwise ``qnn.conv2d`` (1x1, stride 1, unpadded) in pixel lanes
    (:func:`_qnn_float_lanes`; :mod:`~pytvm.topi.nn.pointwise_int8`).
    """
    lanes = _qnn_float_lanes(wl)
    return lanes is not None and _pointwise(lanes)


def _qnn_phases(wl: OpWorkload) -> bool:
    """A ``qnn.conv2d`` strided along the width in pixel lanes over column phases where the
    float convolution takes them (:func:`_qnn_float_lanes`, :func:`_conv_phases`: stems).
    """
    lanes = _qnn_float_lanes(wl)
    return lanes is not None and _conv_phases(lanes)


def _qnn_conv2d_phases(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    zero_point = int(wl.get("input_zero_point", 0))
    return conv2d_nchw_phases_int8(data, weight, *_conv_args(wl), zero_point)


def _qnn_conv2d_pointwise(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    return conv2d_nchw_pointwise_int8(data, weight, int(wl.get("input_zero_point", 0)))


def _pointwise(wl: OpWorkload) -> bool:
    """1x1, stride 1, no padding, one group, on planes of whole vectors of the data's dtype."""
    data, kernel = wl.data_shape, wl.weight_shape
    return (
        _plain_conv(wl)
        and len(data) == _NCHW
        and None not in data[2:]
        and None not in kernel
        and conv2d_pointwise_applies(
            [d or 0 for d in data],
            [k or 0 for k in kernel],
            wl.get("strides"),
            wl.get("padding"),
            wl.get("groups", 1),
            wl.data_dtype,
        )
    )


def _one_group(wl: OpWorkload) -> bool:
    return _plain_conv(wl) and wl.get("groups", 1) == 1


def _depthwise(wl: OpWorkload) -> bool:
    """``groups == C`` (more than one) with one input channel per group."""
    groups = wl.get("groups", 1)
    return (
        _plain_conv(wl)
        and groups != 1
        and groups == wl.data_shape[1]
        and len(wl.weight_shape) > 1
        and wl.weight_shape[1] == 1
    )


def _depthwise_rows(wl: OpWorkload) -> bool:
    """Depthwise, with left and right padding of at most the width (padded row planes)."""
    if not _depthwise(wl):
        return False
    _, left, _, right = padding4("nn.conv2d", wl.get("padding"))
    width = wl.data_shape[3]
    return width is not None and max(left, right) <= width


_CHANNEL_BLOCK_LAYOUT = re.compile(r"OIHW(\d+)o")
#: The largest padded channel block (``[H + pads, W + pads, cb]``) kept on the stack: the
#: code generators' stack limit, about a first-level data cache.
_CHANNEL_BLOCK_BYTES = 32 * 1024


def _depthwise_channel_shape(wl: OpWorkload) -> tuple[int, ...] | None:
    """``(C, H, W, KH, KW, OH, OW, top, left, bottom, right)`` of a depthwise convolution of
    one filter a channel over float NCHW data of constant shape (None: not one).
    """
    data, kernel = wl.data_shape, wl.weight_shape
    if (
        len(data) != _NCHW
        or None in data
        or None in kernel
        or len(kernel) < _NCHW
        or wl.get("groups", 1) != data[1]
        or kernel[1] != 1
        or wl.get("data_layout", "NCHW") != "NCHW"
        or not (_is_float(wl.data_dtype) and _is_float(wl.weight_dtype))
    ):
        return None
    _, c, h, w = (int(d or 0) for d in data)
    channels = wl.get("channels")
    if (channels is not None and int(channels) != c) or (_plain_conv(wl) and kernel[0] != c):
        return None  # several filters a channel
    kh, kw = int(kernel[2] or 0), int(kernel[3] or 0)
    top, left, bottom, right = padding4("nn.conv2d", wl.get("padding"))
    (dh, dw), (sh, sw) = wl.get("dilation", (1, 1)), wl.get("strides", (1, 1))
    oh = (h + top + bottom - (kh - 1) * int(dh) - 1) // int(sh) + 1
    ow = (w + left + right - (kw - 1) * int(dw) - 1) // int(sw) + 1
    if oh < 1 or ow < 1:
        return None
    return c, h, w, kh, kw, oh, ow, top, left, bottom, right


#: What a vector product costs the padded rows (an unaligned load a tap), and one input
#: pixel's gather into a channel block (its lanes loaded one by one; a last block past the
#: channels gathers each channel's row and scatters it, twice that), in aligned vector
#: products of the channel blocks.
_ROW_PRODUCT = 1.2
_GATHER_PRODUCTS = 4


def _depthwise_channels_win(wl: OpWorkload) -> bool:
    """Whether channel blocks beat padded rows for a depthwise convolution (see the module),
    in vector products per block of ``lanes`` channels: the rows compute ``taps * OH * Wq``
    (``Wq``: the padded row's pitch, whose values past ``OW`` or between strides are dropped),
    the blocks ``taps * OH * OW`` over the share of lanes holding channels, plus the gathers
    of the block's input pixels and output pixels (one product each).
    """
    shape = _depthwise_channel_shape(wl)
    if shape is None:
        return False
    c, h, w, kh, kw, oh, ow, top, left, bottom, right = shape
    lanes = vector_lanes(wl.data_dtype)
    itemsize = max(1, int("".join(ch for ch in wl.data_dtype if ch.isdigit()) or 32) // 8)
    if (h + top + bottom) * (w + left + right) * lanes * itemsize > _CHANNEL_BLOCK_BYTES:
        return False
    if not _depthwise_rows(wl):
        return True
    channel_use = c / (-(-c // lanes) * lanes)
    gather = _GATHER_PRODUCTS if c % lanes == 0 else 2 * _GATHER_PRODUCTS
    blocks = kh * kw * oh * ow / channel_use + gather * h * w + oh * ow
    sh = int(wl.get("strides", (1, 1))[0])
    _, pitch = padded_row_pitch(w, left, right, sh, wl.data_dtype)
    return blocks < _ROW_PRODUCT * kh * kw * oh * pitch


def _depthwise_channels(wl: OpWorkload) -> bool:
    """A depthwise kernel packed in channel blocks (``OIHW<cb>o``, one filter a channel), or a
    plain constant one where the blocks win (:func:`_depthwise_channels_win`).
    """
    if _CHANNEL_BLOCK_LAYOUT.fullmatch(_kernel_layout(wl)):
        return len(wl.weight_shape) == 5 and _depthwise_channel_shape(wl) is not None  # noqa: PLR2004
    return wl.weight_constant and _depthwise(wl) and _depthwise_channels_win(wl)


def _depthwise_channels_layout(wl: OpWorkload) -> str:
    return f"OIHW{vector_lanes(wl.weight_dtype)}o"


def _grouped(wl: OpWorkload) -> bool:
    return _plain_conv(wl) and wl.get("groups", 1) != 1


def _conv_args(wl: OpWorkload) -> tuple[Any, Any, Any]:
    return wl.get("strides"), wl.get("padding"), wl.get("dilation")


def _depthwise_kernel(weight: Tensor, wl: OpWorkload) -> Tensor:
    """``[C*M, 1, KH, KW]`` as the depthwise kernel ``[C, M, KH, KW]``."""
    channels, filters = wl.data_shape[1], wl.weight_shape[0]
    assert channels is not None and filters is not None  # _depthwise: groups == C
    return reshape(weight, (channels, filters // channels, weight.shape[2], weight.shape[3]))


def _conv2d_pointwise(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    return nn.conv2d_nchw_pointwise(data, weight, wl.out_dtype)


def _conv2d_nchw(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    return nn.conv2d_nchw(data, weight, *_conv_args(wl), wl.out_dtype)


def _conv2d_depthwise_rows(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    kernel = _depthwise_kernel(weight, wl)
    return nn.depthwise_conv2d_nchw_rows(data, kernel, *_conv_args(wl), wl.out_dtype)


def _conv2d_depthwise(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    kernel = _depthwise_kernel(weight, wl)
    return nn.depthwise_conv2d_nchw(data, kernel, *_conv_args(wl), wl.out_dtype)


def _conv2d_depthwise_channels(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    # kernel [ceil(C / cb), 1, KH, KW, cb] (layout OIHW{cb}o, made by AlterOpLayout)
    if weight.ndim != 5:  # noqa: PLR2004
        raise TVMValueError(
            f"nn.conv2d: depthwise kernel_layout {_kernel_layout(wl)!r} for a {weight.ndim}-d "
            "weight; expected 'OIHW<cb>o' (a 5-d weight of channel blocks [C // cb, 1, KH, KW, "
            "cb])"
        )
    return nn.depthwise_conv2d_nchw_channels(data, weight, *_conv_args(wl), wl.out_dtype)


def _conv2d_grouped(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    groups = wl.get("groups", 1)
    return nn.group_conv2d_nchw(data, weight, *_conv_args(wl), groups, wl.out_dtype)


# --- nn.dense, nn.matmul, nn.batch_matmul -----------------------------------------------


def _dense_panel(units: int, dtype: str) -> int:
    """Panel width for ``units`` output columns: the target's panel width (two vectors; one
    when the columns fit in one). The last panel is zero-filled past ``units``.
    """
    return default_panel_width(dtype, units)


def _plain_dense(wl: OpWorkload) -> bool:
    return str(wl.get("weight_layout", "NK")) == "NK"


def _dense_packable(wl: OpWorkload) -> bool:
    """A plain constant float ``[N, K]`` weight of known ``N`` (any ``N``: panels are padded)."""
    units = wl.weight_shape[0] if len(wl.weight_shape) == 2 else None  # noqa: PLR2004
    return (
        wl.weight_constant
        and _plain_dense(wl)
        and _is_float(wl.data_dtype)
        and _is_float(wl.weight_dtype)
        and units is not None
    )


def _dense_packed_layout(wl: OpWorkload) -> str:
    return f"NK{_dense_panel(int(wl.weight_shape[0] or 0), wl.weight_dtype)}n"


def _dense_pack(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    # weight [ceil(N / bn), K, bn] (layout NK{bn}n, made by AlterOpLayout; units: N)
    layout = str(wl.get("weight_layout", "NK"))
    if layout_axes(layout)[:2] != (("N", 0), ("K", 0)) or weight.ndim != 3:  # noqa: PLR2004
        raise TVMValueError(
            f"nn.dense: weight_layout {layout!r} for a {weight.ndim}-d weight; expected 'NK' "
            "or 'NK<bn>n' (a 3-d weight of panels [N // bn, K, bn])"
        )
    units = wl.get("units")
    return nn.dense_pack(data, weight, None, wl.out_dtype, None if units is None else int(units))


def _panel_rows(wl: OpWorkload) -> bool:
    """A float product of constant shapes whose right operand is worth packing into panels:
    at least a vector's worth of rows share each packed column, or (with at least two rows)
    the columns have no power-of-two factor of a whole vector for the plain schedule.
    """
    data, weight = wl.data_shape, wl.weight_shape
    if None in data or None in weight or len(data) != len(weight) or len(data) < 2:  # noqa: PLR2004
        return False
    if not (_is_float(wl.data_dtype) and _is_float(wl.weight_dtype)):
        return False
    transpose_b = wl.op == "nn.dense" or bool(wl.get("transpose_b", wl.op == "nn.batch_matmul"))
    rows = data[-1] if wl.get("transpose_a", False) else data[-2]
    cols = weight[-2] if transpose_b else weight[-1]
    lanes = vector_lanes(wl.data_dtype)
    assert rows is not None and cols is not None
    return rows >= lanes or (rows >= 2 and pow2_divisor(cols, lanes) < lanes)  # noqa: PLR2004


def _matmul_pack(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    transpose_b = wl.op == "nn.dense" or bool(wl.get("transpose_b", wl.op == "nn.batch_matmul"))
    transpose_a = bool(wl.get("transpose_a", False))
    return nn.matmul_pack(data, weight, wl.out_dtype, transpose_a, transpose_b)


def _dense(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    return nn.dense(data, weight, None, wl.out_dtype)


def _transpose_b(default: bool) -> Callable[[OpWorkload], bool]:
    return lambda wl: bool(wl.get("transpose_b", default))


def _matmul(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    transpose_a, transpose_b = wl.get("transpose_a", False), wl.get("transpose_b", False)
    return nn.matmul(data, weight, None, wl.out_dtype, transpose_a, transpose_b)


def _batch_matmul(data: Tensor, weight: Tensor, wl: OpWorkload) -> Tensor:
    transpose_a, transpose_b = wl.get("transpose_a", False), wl.get("transpose_b", True)
    return nn.batch_matmul(data, weight, None, wl.out_dtype, transpose_a, transpose_b)


# --- the table ----------------------------------------------------------------------------

I = Implementation  # noqa: E741

_ROWS: tuple[Implementation, ...] = (
    I(  # one-lane targets (a Cortex-M): padding read through guards, no padded copy
        "conv2d_nchw_guarded",
        "nn.conv2d",
        CONV2D_NCHW_GUARDED,
        conv2d_guarded_applies,
        conv2d_guarded,
        schedule_conv2d_nchw_guarded,
        50,
    ),
    I(
        "conv2d_nchw_packed",
        "nn.conv2d",
        tag.CONV2D_NCHW_PACKED,
        lambda wl: not _plain_conv(wl) or _conv_packable(wl),
        _conv_packed,
        schedule_conv2d_nchw_packed,
        20,
        _conv_packed_layout,
    ),
    I(
        "conv2d_nchw_int8",
        "nn.conv2d",
        CONV2D_NCHW_INT8,
        _conv_int8,
        _conv2d_int8,
        schedule_conv2d_nchw_int8,
        40,
        _conv_int8_layout,
    ),
    I(
        "qnn_conv2d_nchw_int8",
        "qnn.conv2d",
        CONV2D_NCHW_INT8,
        _qnn_conv_int8,
        _qnn_conv2d_int8,
        schedule_conv2d_nchw_int8,
        40,
        _conv_int8_layout,
    ),
    I(
        "qnn_conv2d_nchw_int16",
        "qnn.conv2d",
        tag.CONV2D_NCHW_PACKED,
        _qnn_conv_int16,
        _qnn_conv2d_int16,
        schedule_conv2d_nchw_packed,
        30,
        _conv_packed_layout,
    ),
    I(  # one-lane targets with the DSP extension (Cortex-M4/M7/M33): topi.cortex_m
        "qnn_conv2d_nchw_int8_dsp",
        "qnn.conv2d",
        CONV2D_NCHW_INT8_DSP,
        qnn_conv2d_dsp_applies,
        qnn_conv2d_dsp,
        schedule_conv2d_nchw_int8_dsp,
        50,
        qnn_conv2d_dsp_layout,
    ),
    I(  # one-lane targets: depthwise in int32, per-channel padded plane (topi.cortex_m)
        "qnn_depthwise_conv2d_nchw_int8_one_lane",
        "qnn.conv2d",
        DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE,
        qnn_conv2d_depthwise_one_lane_applies,
        qnn_conv2d_depthwise_one_lane,
        schedule_depthwise_conv2d_nchw_int8_one_lane,
        50,
    ),
    I(  # one-lane targets, one group, where the DSP kernel does not apply (topi.cortex_m)
        "qnn_conv2d_nchw_int8_one_lane",
        "qnn.conv2d",
        CONV2D_NCHW_INT8_ONE_LANE,
        qnn_conv2d_one_lane_applies,
        qnn_conv2d_int8_one_lane,
        schedule_depthwise_conv2d_nchw_int8_one_lane,
        35,
    ),
    I(
        "qnn_conv2d_nchw_pointwise",
        "qnn.conv2d",
        tag.CONV2D_NCHW_POINTWISE,
        _qnn_pointwise,
        _qnn_conv2d_pointwise,
        schedule_conv2d_nchw_pointwise,
        45,
    ),
    I(
        "qnn_conv2d_nchw_phases",
        "qnn.conv2d",
        tag.CONV2D_NCHW,
        _qnn_phases,
        _qnn_conv2d_phases,
        schedule_conv2d_nchw,
        45,
    ),
    I(
        "qnn_depthwise_conv2d_nchw_int8_channels",
        "qnn.conv2d",
        tag.DEPTHWISE_CONV2D_NCHW_CHANNELS,
        _qnn_depthwise_channels,
        _qnn_depthwise_channels_conv2d,
        schedule_depthwise_conv2d_nchw_channels,
        45,
        _qnn_depthwise_channels_layout,
    ),
    I(
        "qnn_depthwise_conv2d_nchw_int8",
        "qnn.conv2d",
        tag.DEPTHWISE_CONV2D_NCHW_ROWS,
        _qnn_depthwise,
        _qnn_depthwise_conv2d,
        schedule_depthwise_conv2d_nchw_rows,
        40,
    ),
    I(
        "conv2d_nchw_pointwise",
        "nn.conv2d",
        tag.CONV2D_NCHW_POINTWISE,
        _pointwise,
        _conv2d_pointwise,
        schedule_conv2d_nchw_pointwise,
        30,
    ),
    I(
        "depthwise_conv2d_nchw_rows",
        "nn.conv2d",
        tag.DEPTHWISE_CONV2D_NCHW_ROWS,
        _depthwise_rows,
        _conv2d_depthwise_rows,
        schedule_depthwise_conv2d_nchw_rows,
        20,
    ),
    I(
        "depthwise_conv2d_nchw_channels",
        "nn.conv2d",
        tag.DEPTHWISE_CONV2D_NCHW_CHANNELS,
        _depthwise_channels,
        _conv2d_depthwise_channels,
        schedule_depthwise_conv2d_nchw_channels,
        25,
        _depthwise_channels_layout,
    ),
    I(
        "conv2d_nchw_phases",
        "nn.conv2d",
        tag.CONV2D_NCHW,
        _conv_phases,
        _conv2d_phases,
        schedule_conv2d_nchw,
        15,
    ),
    I(
        "conv2d_nchw",
        "nn.conv2d",
        tag.CONV2D_NCHW,
        _one_group,
        _conv2d_nchw,
        schedule_conv2d_nchw,
        10,
    ),
    I(
        "group_conv2d_nchw",
        "nn.conv2d",
        tag.GROUP_CONV2D_NCHW,
        _grouped,
        _conv2d_grouped,
        schedule_group_conv2d_nchw,
        0,
    ),
    I(
        "depthwise_conv2d_nchw",
        "nn.conv2d",
        tag.DEPTHWISE_CONV2D_NCHW,
        _depthwise,
        _conv2d_depthwise,
        schedule_depthwise_conv2d_nchw,
        10,
    ),
    I(
        "dense_pack",
        "nn.dense",
        tag.DENSE_PACK,
        lambda wl: not _plain_dense(wl) or _dense_packable(wl),
        _dense_pack,
        schedule_dense_pack,
        20,
        _dense_packed_layout,
    ),
    I(
        "dense_matmul_pack",
        "nn.dense",
        tag.DENSE_PACK,
        lambda wl: _plain_dense(wl) and _panel_rows(wl),
        _matmul_pack,
        schedule_dense_pack,
        15,
    ),
    I("dense", "nn.dense", tag.DENSE, _plain_dense, _dense, schedule_dense, 10),
    I(
        "matmul_pack",
        "nn.matmul",
        tag.DENSE_PACK,
        _panel_rows,
        _matmul_pack,
        schedule_dense_pack,
        15,
    ),
    I("matmul_nt", "nn.matmul", tag.DENSE, _transpose_b(False), _matmul, schedule_dense, 10),
    I(
        "matmul",
        "nn.matmul",
        tag.MATMUL,
        lambda wl: not _transpose_b(False)(wl),
        _matmul,
        schedule_matmul,
        10,
    ),
    I(
        "batch_matmul_pack",
        "nn.batch_matmul",
        tag.DENSE_PACK,
        _panel_rows,
        _matmul_pack,
        schedule_dense_pack,
        15,
    ),
    I(
        "batch_matmul",
        "nn.batch_matmul",
        tag.BATCH_MATMUL,
        _transpose_b(True),
        _batch_matmul,
        schedule_batch_matmul,
        10,
    ),
    I(
        "batch_matmul_nn",
        "nn.batch_matmul",
        tag.BATCH_MATMUL_NN,
        lambda wl: not _transpose_b(True)(wl),
        _batch_matmul,
        schedule_batch_matmul,
        10,
    ),
)
del I

#: Every row, in the order a fused group's anchor is looked up (:mod:`.default`); each an
#: AutoTVM template ``<row>.x86`` whose compute records its workload (:mod:`.tunable`).
STRATEGY: tuple[Implementation, ...] = tuple(
    replace(row, compute=recording(row.template, row.compute)) for row in _ROWS
)
register_rows(STRATEGY, OpWorkload.of)


def implementations(op: str) -> tuple[Implementation, ...]:
    """The rows of ``op``, in table order (raises for an operator the table does not hold)."""
    rows = tuple(r for r in STRATEGY if r.op == op)
    if not rows:
        ops = sorted({r.op for r in STRATEGY})
        raise TVMValueError(
            f"no CPU implementation of {op!r}; the strategy table holds {ops}: add rows for it "
            "to pytvm/topi/x86/strategy.py"
        )
    return rows


def select(op: str, wl: OpWorkload) -> Implementation:
    """The applicable row of ``op`` with the highest priority (the earlier row on a tie).

    Examples
    --------
    >>> from pytvm.topi.x86.strategy import OpWorkload, select
    >>> attrs = {"strides": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": 8}
    >>> select("nn.conv2d", OpWorkload("nn.conv2d", (1, 8, 9, 9), (8, 1, 3, 3),
    ...                              "float32", "float32", attrs)).name
    'depthwise_conv2d_nchw_rows'
    """
    rows = implementations(op)
    best: Implementation | None = None
    for row in rows:
        if row.applies(wl) and (best is None or row.priority > best.priority):
            best = row
    if best is None:
        raise TVMValueError(
            f"no CPU implementation of {op} applies to data {list(wl.data_shape)} "
            f"{wl.data_dtype}, weight {list(wl.weight_shape)} {wl.weight_dtype}, attributes "
            f"{dict(wl.attrs)}; the rows are {[r.name for r in rows]}"
        )
    return best
