"""CPU schedules (TVM's ``topi.x86``): matrix products, convolutions, pooling, softmax and
layer norm; injective operators and reductions use :mod:`pytvm.topi.generic`'s.

Vector widths, tile sizes and whether to run in parallel come from the current target
(``pytvm.target.Target.current()``) and the operator's shape. Which implementation computes a
convolution or matrix product is the strategy table's choice (:mod:`.strategy`).

TVM's x86 entry points are here under TVM's names and signatures: the AutoTVM templates
``dense_nopack``, ``dense_pack``, ``dense_dynamic``, ``batch_matmul``, ``conv2d_NCHWc`` and
``depthwise_conv2d_NCHWc`` (called without a configuration: the dispatch context of
:mod:`pytvm.autotvm` supplies it), ``conv2d_nchw``, ``conv2d_nhwc``, ``depthwise_conv2d_nchw``,
``conv2d_transpose_nchw`` and their ``schedule_*`` functions.
"""

from __future__ import annotations

from ..generic.injective import schedule_injective, schedule_injective_from_existing
from ..generic.reduction import schedule_reduce
from . import conv2d_avx_common, depthwise_conv2d
from .batch_norm import schedule_batch_norm
from .conv1d import (
    conv2d_transpose_nchw,
    schedule_conv1d_ncw,
    schedule_conv1d_nwc,
    schedule_conv2d_transpose_nchw,
    schedule_group_conv1d_ncw,
    schedule_group_conv1d_nwc,
)
from .conv2d import schedule_group_conv2d_nchw
from .conv2d_int8 import schedule_conv2d_nchw_int8, vnni_lanes
from .conv2d_nchwc import conv2d_NCHWc, schedule_conv2d_NCHWc
from .conv2d_packed import (
    conv2d_channel_block,
    conv2d_packed_block,
    schedule_conv2d_nchw_packed,
)
from .conv2d_pointwise import (
    conv2d_pointwise_applies,
    conv2d_pointwise_fits,
    schedule_conv2d_nchw_pointwise,
)
from .conv2d_templates import (
    conv2d_nchw,
    conv2d_nhwc,
    depthwise_conv2d_nchw,
    schedule_conv2d_nchw,
    schedule_conv2d_nhwc,
    schedule_depthwise_conv2d_nchw,
)
from .default import anchor_tag, schedule_default
from .dense import schedule_batch_matmul, schedule_dense, schedule_dense_pack, schedule_matmul
from .dense_templates import (
    batch_matmul,
    dense_dynamic,
    dense_nopack,
    dense_pack,
    schedule_dense_dynamic,
    schedule_dense_nopack,
)
from .depthwise import schedule_depthwise_conv2d_nchw_rows
from .depthwise_channels import schedule_depthwise_conv2d_nchw_channels
from .depthwise_nchwc import depthwise_conv2d_NCHWc, schedule_depthwise_conv2d_NCHWc
from .normalization import schedule_layer_norm, schedule_log_softmax, schedule_softmax
from .pooling import schedule_adaptive_pool, schedule_pool
from .strategy import STRATEGY, Implementation, OpWorkload, implementations, select

#: Concatenation is injective: the injective schedule, as in TVM.
schedule_concatenate = schedule_injective

__all__ = [
    "STRATEGY",
    "Implementation",
    "OpWorkload",
    "anchor_tag",
    "batch_matmul",
    "conv2d_NCHWc",
    "conv2d_avx_common",
    "conv2d_channel_block",
    "conv2d_nchw",
    "conv2d_nhwc",
    "conv2d_packed_block",
    "conv2d_pointwise_applies",
    "conv2d_pointwise_fits",
    "conv2d_transpose_nchw",
    "dense_dynamic",
    "dense_nopack",
    "dense_pack",
    "depthwise_conv2d",
    "depthwise_conv2d_NCHWc",
    "depthwise_conv2d_nchw",
    "implementations",
    "schedule_adaptive_pool",
    "schedule_batch_matmul",
    "schedule_batch_norm",
    "schedule_concatenate",
    "schedule_conv1d_ncw",
    "schedule_conv1d_nwc",
    "schedule_conv2d_NCHWc",
    "schedule_conv2d_nchw",
    "schedule_conv2d_nchw_int8",
    "schedule_conv2d_nchw_packed",
    "schedule_conv2d_nchw_pointwise",
    "schedule_conv2d_nhwc",
    "schedule_conv2d_transpose_nchw",
    "schedule_default",
    "schedule_dense",
    "schedule_dense_dynamic",
    "schedule_dense_nopack",
    "schedule_dense_pack",
    "schedule_depthwise_conv2d_NCHWc",
    "schedule_depthwise_conv2d_nchw",
    "schedule_depthwise_conv2d_nchw_channels",
    "schedule_depthwise_conv2d_nchw_rows",
    "schedule_group_conv1d_ncw",
    "schedule_group_conv1d_nwc",
    "schedule_group_conv2d_nchw",
    "schedule_injective",
    "schedule_injective_from_existing",
    "schedule_layer_norm",
    "schedule_log_softmax",
    "schedule_matmul",
    "schedule_pool",
    "schedule_reduce",
    "schedule_softmax",
    "select",
    "vnni_lanes",
]
