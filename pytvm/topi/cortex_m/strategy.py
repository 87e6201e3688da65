"""When a quantized convolution takes a Cortex-M kernel: the predicates and computes of the CPU
strategy table's rows for one-lane targets (``topi.x86.strategy`` holds the rows themselves).

- ``qnn_conv2d_nchw_int8_dsp``: a ``qnn.conv2d`` of one group over 8-bit NCHW data with an
  int8 kernel of zero point 0 and at least four input channels (the data words hold four
  channels' bytes; fewer would mostly multiply padding) on a one-lane target with the DSP
  extension (``Target.has_dsp``): :func:`~pytvm.topi.cortex_m.conv2d_nchw_int8_dsp`, the constant
  kernel packed ``OIHW4o4i``.
- ``qnn_depthwise_conv2d_nchw_int8_one_lane``: a depthwise ``qnn.conv2d`` (one int8 filter
  per channel, plain ``OIHW``) on a one-lane target:
  :func:`~pytvm.topi.cortex_m.depthwise_conv2d_nchw_int8_one_lane`, in int32 (no float lanes).
- ``qnn_conv2d_nchw_int8_one_lane``: any other ``qnn.conv2d`` of one group with a plain int8
  kernel on a one-lane target (where the DSP kernel does not apply: fewer than four input
  channels, a stem; or no DSP extension):
  :func:`~pytvm.topi.cortex_m.conv2d_nchw_int8_one_lane`, the same int32 kernel as the
  depthwise one.
"""

from __future__ import annotations

from typing import Any, Protocol

from ...target import Target
from ...te.tensor import Tensor
from .._target import vector_lanes
from .conv2d_int8 import DSP_CHANNEL_BLOCK, conv2d_nchw_int8_dsp
from .depthwise_int8 import conv2d_nchw_int8_one_lane, depthwise_conv2d_nchw_int8_one_lane

__all__ = [
    "qnn_conv2d_depthwise_one_lane",
    "qnn_conv2d_depthwise_one_lane_applies",
    "qnn_conv2d_dsp",
    "qnn_conv2d_dsp_applies",
    "qnn_conv2d_dsp_layout",
    "qnn_conv2d_int8_one_lane",
    "qnn_conv2d_one_lane_applies",
]


class _Workload(Protocol):
    """What the rows read of ``topi.x86.strategy.OpWorkload`` (not imported: that module
    imports this one).
    """

    @property
    def data_shape(self) -> tuple[int | None, ...]: ...
    @property
    def data_dtype(self) -> str: ...
    @property
    def weight_dtype(self) -> str: ...
    @property
    def weight_shape(self) -> tuple[int | None, ...]: ...
    @property
    def weight_constant(self) -> bool: ...
    @property
    def out_dtype(self) -> str | None: ...
    def get(self, key: str, default: Any = None) -> Any:
        """The attribute ``key`` (``default`` when absent)."""


_DSP_LAYOUT = f"OIHW{DSP_CHANNEL_BLOCK}o4i"
_QUAD = 4
_NCHW = 4


def _one_lane() -> bool:
    """Whether the current target has no SIMD vectors (a Cortex-M)."""
    return vector_lanes("int32") == 1


def _has_dsp() -> bool:
    """Whether the current target has the DSP extension and does not turn it off
    (``-mattr=-dsp``, LLVM's spelling: the scalar kernels on a Cortex-M4, to compare).
    """
    target = Target.current(allow_none=True)
    if target is None or not target.has_dsp:
        return False
    mattr = target.attrs.get("mattr") or ()
    features = mattr.split(",") if isinstance(mattr, str) else [str(m) for m in mattr]
    return "-dsp" not in features


def _qnn_one_group(wl: _Workload) -> bool:
    """``qnn.conv2d`` of one group over 8-bit NCHW data, a kernel zero point of 0, int32 out."""
    return int(wl.get("groups", 1)) == 1 and _qnn_nchw(wl)


def _qnn_nchw(wl: _Workload) -> bool:
    """``qnn.conv2d`` over 8-bit NCHW data of constant shape, a kernel zero point of 0, int32
    out.
    """
    return (
        wl.get("data_layout", "NCHW") == "NCHW"
        and wl.data_dtype in ("uint8", "int8")
        and int(wl.get("kernel_zero_point", 0)) == 0
        and wl.out_dtype in (None, "int32")
        and len(wl.data_shape) == _NCHW
        and None not in wl.data_shape
    )


def qnn_conv2d_dsp_applies(wl: _Workload) -> bool:
    """See the module: the DSP kernel on a one-lane target with the DSP extension, for a plain
    constant int8 kernel of at least four input channels or one packed ``OIHW4o4i``.
    """
    if not (_one_lane() and _has_dsp() and _qnn_one_group(wl)):
        return False
    layout = str(wl.get("kernel_layout", "OIHW"))
    if layout == _DSP_LAYOUT:
        return wl.weight_dtype == "int32"
    channels = wl.data_shape[1]
    return (
        layout == "OIHW"
        and wl.weight_dtype == "int8"
        and wl.weight_constant
        and channels is not None
        and channels >= _QUAD
    )


def qnn_conv2d_dsp_layout(wl: _Workload) -> str:
    """The kernel layout the DSP kernel reads (``OIHW4o4i``)."""
    del wl
    return _DSP_LAYOUT


def qnn_conv2d_dsp(data: Tensor, weight: Tensor, wl: _Workload) -> Tensor:
    """The ``qnn.conv2d`` of ``wl`` through :func:`conv2d_nchw_int8_dsp`."""
    strides, padding, dilation = wl.get("strides"), wl.get("padding"), wl.get("dilation")
    zero_point = int(wl.get("input_zero_point", 0))
    return conv2d_nchw_int8_dsp(
        data, weight, strides, padding, dilation, wl.get("channels"), zero_point
    )


def qnn_conv2d_int8_one_lane(data: Tensor, weight: Tensor, wl: _Workload) -> Tensor:
    """The ``qnn.conv2d`` of ``wl`` (one group) through :func:`conv2d_nchw_int8_one_lane`."""
    strides, padding, dilation = wl.get("strides"), wl.get("padding"), wl.get("dilation")
    zero_point = int(wl.get("input_zero_point", 0))
    return conv2d_nchw_int8_one_lane(data, weight, strides, padding, dilation, zero_point)


def qnn_conv2d_one_lane_applies(wl: _Workload) -> bool:
    """See the module: a plain int8 kernel of one group on a one-lane target."""
    return (
        _one_lane()
        and _qnn_one_group(wl)
        and str(wl.get("kernel_layout", "OIHW")) == "OIHW"
        and wl.weight_dtype == "int8"
    )


def qnn_conv2d_depthwise_one_lane_applies(wl: _Workload) -> bool:
    """See the module: a depthwise ``qnn.conv2d`` (``groups`` = channels, an int8 ``OIHW``
    kernel ``[C, 1, KH, KW]``) on a one-lane target.
    """
    if not (_one_lane() and _qnn_nchw(wl) and wl.weight_dtype == "int8"):
        return False
    channels, kernel = wl.data_shape[1], wl.weight_shape
    return (
        str(wl.get("kernel_layout", "OIHW")) == "OIHW"
        and int(wl.get("groups", 1)) == channels
        and len(kernel) == _NCHW
        and kernel[0] == channels
        and kernel[1] == 1
    )


def qnn_conv2d_depthwise_one_lane(data: Tensor, weight: Tensor, wl: _Workload) -> Tensor:
    """The ``qnn.conv2d`` of ``wl`` through :func:`depthwise_conv2d_nchw_int8_one_lane`."""
    strides, padding, dilation = wl.get("strides"), wl.get("padding"), wl.get("dilation")
    zero_point = int(wl.get("input_zero_point", 0))
    return depthwise_conv2d_nchw_int8_one_lane(data, weight, strides, padding, dilation, zero_point)
