"""Numpy reference implementations of topi operators, used by tests (TVM's ``topi.testing``).

Every function computes the real result with numpy, following TVM's names, signatures and
semantics (layouts, padding conventions, dilation, groups), so a compiled kernel can be
compared against it.
"""

from __future__ import annotations

from ._conv import (
    conv1d_ncw_python,
    conv2d_backward_weight_python,
    conv2d_hwcn_python,
    conv2d_nchw_python,
    conv2d_nhwc_python,
    conv3d_ncdhw_python,
    conv3d_ndhwc_python,
    depthwise_conv2d_python_nchw,
    depthwise_conv2d_python_nchwc,
    depthwise_conv2d_python_nhwc,
    group_conv1d_ncw_python,
)
from ._conv_transpose import (
    conv1d_transpose_ncw_python,
    conv2d_transpose_nchw_python,
    conv2d_transpose_nhwc_python,
    conv3d_transpose_ncdhw_python,
    group_conv1d_transpose_ncw_python,
)
from ._grid import (
    affine_grid_python,
    grid_sample_python,
)
from ._indexing import (
    gather_nd_python,
    gather_python,
    matrix_set_diag,
    nll_loss,
    one_hot,
    searchsorted_ref,
    sequence_mask,
    slice_axis_python,
    strided_set_python,
    strided_slice_python,
)
from ._matmul import (
    attention_python,
    batch_matmul,
    dense,
    lstm_python,
)
from ._normalization import (
    batch_norm,
    group_norm_python,
    instance_norm_python,
    l2_normalize_python,
    layer_norm_python,
    log_softmax_python,
    lrn_python,
    rms_norm_python,
    softmax_python,
)
from ._pooling import (
    adaptive_pool,
    pool_grad_nchw,
    poolnd_python,
)
from ._rearrange import (
    batch_to_space_nd_python,
    depth_to_space_python,
    reorg_python,
    space_to_batch_nd_python,
    space_to_depth_python,
)
from ._resize import (
    crop_and_resize_python,
    resize1d_python,
    resize2d_python,
    resize3d_python,
)
from ._roi import (
    correlation_nchw_python,
    deformable_conv2d_nchw_python,
    deformable_conv2d_nhwc_python,
    roi_align_nchw_python,
    roi_align_nhwc_python,
    roi_pool_nchw_python,
)
from ._window import (
    dilate_python,
)
from .common import (
    compare_numpy_tvm,
    dispatch,
    get_broadcast_schedule,
    get_conv2d_nchw_implement,
    get_conv2d_nhwc_implement,
    get_elemwise_schedule,
    get_injective_schedule,
    get_reduce_schedule,
)

__all__ = [
    "adaptive_pool",
    "affine_grid_python",
    "attention_python",
    "batch_matmul",
    "batch_norm",
    "batch_to_space_nd_python",
    "compare_numpy_tvm",
    "conv1d_ncw_python",
    "conv1d_transpose_ncw_python",
    "conv2d_backward_weight_python",
    "conv2d_hwcn_python",
    "conv2d_nchw_python",
    "conv2d_nhwc_python",
    "conv2d_transpose_nchw_python",
    "conv2d_transpose_nhwc_python",
    "conv3d_ncdhw_python",
    "conv3d_ndhwc_python",
    "conv3d_transpose_ncdhw_python",
    "correlation_nchw_python",
    "crop_and_resize_python",
    "deformable_conv2d_nchw_python",
    "deformable_conv2d_nhwc_python",
    "dense",
    "depth_to_space_python",
    "depthwise_conv2d_python_nchw",
    "depthwise_conv2d_python_nchwc",
    "depthwise_conv2d_python_nhwc",
    "dilate_python",
    "dispatch",
    "gather_nd_python",
    "gather_python",
    "get_broadcast_schedule",
    "get_conv2d_nchw_implement",
    "get_conv2d_nhwc_implement",
    "get_elemwise_schedule",
    "get_injective_schedule",
    "get_reduce_schedule",
    "grid_sample_python",
    "group_conv1d_ncw_python",
    "group_conv1d_transpose_ncw_python",
    "group_norm_python",
    "instance_norm_python",
    "l2_normalize_python",
    "layer_norm_python",
    "log_softmax_python",
    "lrn_python",
    "lstm_python",
    "matrix_set_diag",
    "nll_loss",
    "one_hot",
    "pool_grad_nchw",
    "poolnd_python",
    "reorg_python",
    "resize1d_python",
    "resize2d_python",
    "resize3d_python",
    "rms_norm_python",
    "roi_align_nchw_python",
    "roi_align_nhwc_python",
    "roi_pool_nchw_python",
    "searchsorted_ref",
    "sequence_mask",
    "slice_axis_python",
    "softmax_python",
    "space_to_batch_nd_python",
    "space_to_depth_python",
    "strided_set_python",
    "strided_slice_python",
]
