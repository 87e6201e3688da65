"""TVM's generic operator schedules (``topi.generic.nn``, ``topi.generic.extern``): the schedule
a target without a tuned one gets, which computes each operator as written.

pytvm's CPU schedules (vectorized, tiled, parallel) are in :mod:`pytvm.topi.x86`; these are
TVM's portable defaults, for tests and for comparing against the tuned ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ._traverse import as_outputs, create_schedule, traverse_inline
from .default import as_written, check_cpu_target, default_schedule

__all__ = [
    "schedule_adaptive_pool",
    "schedule_batch_matmul",
    "schedule_batch_norm",
    "schedule_binarize_pack",
    "schedule_binary_dense",
    "schedule_bitpack",
    "schedule_bitserial_conv2d_nchw",
    "schedule_bitserial_conv2d_nhwc",
    "schedule_bitserial_dense",
    "schedule_concatenate",
    "schedule_conv1d_ncw",
    "schedule_conv1d_nwc",
    "schedule_conv1d_transpose_ncw",
    "schedule_conv2d_NCHWc",
    "schedule_conv2d_NCHWc_int8",
    "schedule_conv2d_gemm_weight_transform",
    "schedule_conv2d_hwcn",
    "schedule_conv2d_nchw",
    "schedule_conv2d_nhwc",
    "schedule_conv2d_nhwc_pack",
    "schedule_conv2d_transpose_nchw",
    "schedule_conv2d_winograd_nnpack_weight_transform",
    "schedule_conv2d_winograd_weight_transform",
    "schedule_conv2d_winograd_without_weight_transform",
    "schedule_conv3d_ncdhw",
    "schedule_conv3d_ndhwc",
    "schedule_conv3d_transpose_ncdhw",
    "schedule_conv3d_winograd_weight_transform",
    "schedule_correlation_nchw",
    "schedule_deformable_conv2d_nchw",
    "schedule_deformable_conv2d_nhwc",
    "schedule_dense",
    "schedule_depthwise_conv2d_NCHWc",
    "schedule_depthwise_conv2d_nchw",
    "schedule_depthwise_conv2d_nhwc",
    "schedule_extern",
    "schedule_fast_softmax",
    "schedule_group_conv1d_ncw",
    "schedule_group_conv1d_nwc",
    "schedule_group_conv1d_transpose_ncw",
    "schedule_group_conv2d_nchw",
    "schedule_group_conv2d_nhwc",
    "schedule_group_conv2d_transpose_nchw",
    "schedule_group_conv3d_transpose_ncdhw",
    "schedule_lrn",
    "schedule_lstm",
    "schedule_matmul",
    "schedule_pool",
    "schedule_pool_grad",
    "schedule_softmax",
    "schedule_sparse_conv2d",
    "schedule_sparse_dense",
    "schedule_sparse_transpose",
]

schedule_conv1d_ncw = as_written("schedule_conv1d_ncw", "topi.nn.conv1d_ncw")
schedule_conv1d_nwc = as_written("schedule_conv1d_nwc", "topi.nn.conv1d_nwc")
schedule_group_conv1d_ncw = as_written("schedule_group_conv1d_ncw", "topi.nn.group_conv1d_ncw")
schedule_group_conv1d_nwc = as_written("schedule_group_conv1d_nwc", "topi.nn.group_conv1d_nwc")
schedule_conv2d_hwcn = as_written("schedule_conv2d_hwcn", "topi.nn.conv2d_hwcn")
schedule_conv2d_nchw = as_written("schedule_conv2d_nchw", "topi.nn.conv2d_nchw")
schedule_conv2d_nhwc = as_written("schedule_conv2d_nhwc", "topi.nn.conv2d_nhwc")
schedule_conv2d_NCHWc = as_written("schedule_conv2d_NCHWc", "topi.nn.conv2d_NCHWc")
schedule_conv3d_ncdhw = as_written("schedule_conv3d_ncdhw", "topi.nn.conv3d_ncdhw")
schedule_conv3d_ndhwc = as_written("schedule_conv3d_ndhwc", "topi.nn.conv3d_ndhwc")
schedule_conv3d_transpose_ncdhw = as_written(
    "schedule_conv3d_transpose_ncdhw", "topi.nn.conv3d_transpose_ncdhw"
)
schedule_conv2d_transpose_nchw = as_written(
    "schedule_conv2d_transpose_nchw", "topi.nn.conv2d_transpose_nchw"
)
schedule_conv1d_transpose_ncw = as_written(
    "schedule_conv1d_transpose_ncw", "topi.nn.conv1d_transpose_ncw"
)
schedule_group_conv1d_transpose_ncw = as_written(
    "schedule_group_conv1d_transpose_ncw", "topi.nn.group_conv1d_transpose_ncw"
)
schedule_depthwise_conv2d_nchw = as_written(
    "schedule_depthwise_conv2d_nchw", "topi.nn.depthwise_conv2d_nchw"
)
schedule_depthwise_conv2d_nhwc = as_written(
    "schedule_depthwise_conv2d_nhwc", "topi.nn.depthwise_conv2d_nhwc"
)
schedule_depthwise_conv2d_NCHWc = as_written(
    "schedule_depthwise_conv2d_NCHWc", "topi.nn.depthwise_conv2d_NCHWc"
)
schedule_group_conv2d_nchw = as_written("schedule_group_conv2d_nchw", "topi.nn.group_conv2d_nchw")
schedule_group_conv2d_nhwc = as_written("schedule_group_conv2d_nhwc", "topi.nn.group_conv2d_nhwc")
schedule_group_conv2d_transpose_nchw = as_written(
    "schedule_group_conv2d_transpose_nchw", "topi.nn.group_conv2d_transpose_nchw"
)
schedule_group_conv3d_transpose_ncdhw = as_written(
    "schedule_group_conv3d_transpose_ncdhw", "topi.nn.group_conv3d_transpose_ncdhw"
)
schedule_deformable_conv2d_nchw = as_written(
    "schedule_deformable_conv2d_nchw", "topi.nn.deformable_conv2d_nchw"
)
schedule_deformable_conv2d_nhwc = as_written(
    "schedule_deformable_conv2d_nhwc", "topi.nn.deformable_conv2d_nhwc"
)
schedule_correlation_nchw = as_written("schedule_correlation_nchw", "topi.nn.correlation_nchw")
schedule_softmax = as_written("schedule_softmax", "topi.nn.softmax")
schedule_fast_softmax = as_written("schedule_fast_softmax", "topi.nn.fast_softmax")
schedule_matmul = as_written("schedule_matmul", "topi.nn.matmul")
schedule_dense = as_written("schedule_dense", "topi.nn.dense")
schedule_batch_matmul = as_written("schedule_batch_matmul", "topi.nn.batch_matmul")
schedule_pool = as_written("schedule_pool", "topi.nn.pool2d")
schedule_pool_grad = as_written("schedule_pool_grad", "topi.nn.pool_grad")
schedule_adaptive_pool = as_written("schedule_adaptive_pool", "topi.nn.adaptive_pool")
schedule_lrn = as_written("schedule_lrn", "topi.nn.lrn")
schedule_batch_norm = as_written("schedule_batch_norm", "topi.nn.batch_norm")
schedule_lstm = as_written("schedule_lstm", "topi.nn.lstm")

schedule_conv2d_nhwc_pack = as_written(
    "schedule_conv2d_nhwc_pack", "topi.nn.conv2d_nhwc (packed int8)"
)
schedule_conv2d_NCHWc_int8 = as_written("schedule_conv2d_NCHWc_int8", "topi.nn.conv2d_NCHWc_int8")
schedule_conv2d_winograd_weight_transform = as_written(
    "schedule_conv2d_winograd_weight_transform", "topi.nn.conv2d_winograd_weight_transform"
)
schedule_conv2d_gemm_weight_transform = as_written(
    "schedule_conv2d_gemm_weight_transform", "topi.nn.conv2d_gemm_weight_transform"
)
schedule_conv3d_winograd_weight_transform = as_written(
    "schedule_conv3d_winograd_weight_transform", "topi.nn.conv3d_winograd_weight_transform"
)
schedule_conv2d_winograd_without_weight_transform = as_written(
    "schedule_conv2d_winograd_without_weight_transform",
    "topi.nn.conv2d_winograd_without_weight_transform",
)
schedule_conv2d_winograd_nnpack_weight_transform = as_written(
    "schedule_conv2d_winograd_nnpack_weight_transform",
    "topi.nn.conv2d_winograd_nnpack_weight_transform",
)
schedule_bitserial_conv2d_nchw = as_written(
    "schedule_bitserial_conv2d_nchw", "topi.nn.bitserial_conv2d_nchw"
)
schedule_bitserial_conv2d_nhwc = as_written(
    "schedule_bitserial_conv2d_nhwc", "topi.nn.bitserial_conv2d_nhwc"
)
schedule_bitserial_dense = as_written("schedule_bitserial_dense", "topi.nn.bitserial_dense")
schedule_binarize_pack = as_written("schedule_binarize_pack", "topi.nn.binarize_pack")
schedule_bitpack = as_written("schedule_bitpack", "topi.nn.bitpack")
schedule_binary_dense = as_written("schedule_binary_dense", "topi.nn.binary_dense")
schedule_sparse_dense = as_written("schedule_sparse_dense", "topi.nn.sparse_dense")
schedule_sparse_transpose = as_written("schedule_sparse_transpose", "topi.nn.sparse_transpose")
schedule_sparse_conv2d = as_written("schedule_sparse_conv2d", "topi.nn.sparse_conv2d")


def schedule_concatenate(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of ``topi.concatenate``: its inputs' injective stages inlined, its loops fused."""
    return default_schedule(outs, True)


def schedule_extern(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule of an operator computed outside tensor expressions followed by injective
    stages: the injective stages are inlined and each computed output's loops fused.
    """
    check_cpu_target("schedule_extern")
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    traverse_inline(s, outputs)
    for out in outputs:
        if isinstance(out.op, ComputeOp) and len(out.op.axis) > 1:
            s[out].fuse(*out.op.axis)
    return s
