"""Neural-network operators: activations, dense and matmul, convolutions, pooling,
normalization, padding (TVM's ``topi.nn``).
"""

from __future__ import annotations

from ..elemwise import clip
from ..transform import flatten
from . import conv2d as _conv2d_module  # noqa: F401 - TVM's module name
from . import depthwise_conv2d as _depthwise_module  # noqa: F401
from . import utils
from .activation import gelu, hard_sigmoid, hard_swish, leaky_relu, prelu, relu
from .adaptive_pooling import adaptive_pool, adaptive_pool1d, adaptive_pool3d, global_pool
from .argmax_pool import max_pool2d_with_argmax
from .batch_norm import batch_norm
from .conv2d_int8 import conv2d_int8_kernel_pack, conv2d_nchw_int8
from .conv2d_int8_lanes import conv2d_nchw_phases_int8
from .conv2d_packed import conv2d_kernel_pack, conv2d_nchw_packed
from .conv2d_phases import conv2d_nchw_phases
from .conv2d_pointwise import conv2d_nchw_pointwise
from .conv2d_transpose import conv2d_transpose_nchw, subpixel_shuffle_nchw
from .conv_nd import (
    conv,
    conv1d,
    conv1d_ncw,
    conv1d_nwc,
    conv2d_hwcn,
    conv2d_nhwc,
    conv3d_ncdhw,
    conv3d_ndhwc,
    depthwise_conv2d_nhwc,
    group_conv1d_ncw,
    group_conv1d_nwc,
    group_conv2d_nhwc,
)
from .conv_transpose_nd import (
    conv1d_transpose_ncw,
    conv3d_transpose_ncdhw,
    group_conv1d_transpose_ncw,
    group_conv2d_transpose_nchw,
    group_conv3d_transpose_ncdhw,
)
from .convolution import conv2d, conv2d_nchw, depthwise_conv2d_nchw, group_conv2d_nchw
from .correlation import correlation_nchw
from .depthwise import depthwise_conv2d_nchw_rows
from .depthwise_channels import depthwise_conv2d_nchw_channels
from .depthwise_int8 import depthwise_conv2d_nchw_int8, depthwise_int8_accumulator
from .feature_norm import group_norm, instance_norm, rms_norm
from .linear import (
    batch_matmul,
    dense,
    dense_pack,
    dense_pack_weight,
    matmul,
    matmul_pack,
    pack_panels,
)
from .local_response_norm import lrn
from .loss import nll_loss
from .lstm import lstm
from .mirror_pad import mirror_pad
from .normalization import layer_norm, log_softmax, softmax
from .padding import pad
from .pointwise_int8 import conv2d_nchw_pointwise_int8
from .pool_grad import pool_grad
from .pooling import pool1d, pool2d, pool3d
from .scale_shift import scale_shift_nchw, scale_shift_nchwc, scale_shift_nhwc
from .space_rearrange import (
    batch_to_space_nd,
    depth_to_space,
    dilate,
    space_to_batch_nd,
    space_to_depth,
)
from .upsampling import upsampling, upsampling3d

__all__ = [
    "adaptive_pool",
    "adaptive_pool1d",
    "adaptive_pool3d",
    "batch_matmul",
    "batch_norm",
    "batch_to_space_nd",
    "clip",
    "conv",
    "conv1d",
    "conv1d_ncw",
    "conv1d_nwc",
    "conv1d_transpose_ncw",
    "conv2d",
    "conv2d_hwcn",
    "conv2d_int8_kernel_pack",
    "conv2d_kernel_pack",
    "conv2d_nchw",
    "conv2d_nchw_int8",
    "conv2d_nchw_packed",
    "conv2d_nchw_phases",
    "conv2d_nchw_phases_int8",
    "conv2d_nchw_pointwise",
    "conv2d_nchw_pointwise_int8",
    "conv2d_nhwc",
    "conv2d_transpose_nchw",
    "conv3d_ncdhw",
    "conv3d_ndhwc",
    "conv3d_transpose_ncdhw",
    "correlation_nchw",
    "dense",
    "dense_pack",
    "dense_pack_weight",
    "depth_to_space",
    "depthwise_conv2d_nchw",
    "depthwise_conv2d_nchw_channels",
    "depthwise_conv2d_nchw_int8",
    "depthwise_conv2d_nchw_rows",
    "depthwise_conv2d_nhwc",
    "depthwise_int8_accumulator",
    "dilate",
    "flatten",
    "gelu",
    "global_pool",
    "group_conv1d_ncw",
    "group_conv1d_nwc",
    "group_conv1d_transpose_ncw",
    "group_conv2d_nchw",
    "group_conv2d_nhwc",
    "group_conv2d_transpose_nchw",
    "group_conv3d_transpose_ncdhw",
    "group_norm",
    "hard_sigmoid",
    "hard_swish",
    "instance_norm",
    "layer_norm",
    "leaky_relu",
    "log_softmax",
    "lrn",
    "lstm",
    "matmul",
    "matmul_pack",
    "max_pool2d_with_argmax",
    "mirror_pad",
    "nll_loss",
    "pack_panels",
    "pad",
    "pool1d",
    "pool2d",
    "pool3d",
    "pool_grad",
    "prelu",
    "relu",
    "rms_norm",
    "scale_shift_nchw",
    "scale_shift_nchwc",
    "scale_shift_nhwc",
    "softmax",
    "space_to_batch_nd",
    "space_to_depth",
    "subpixel_shuffle_nchw",
    "upsampling",
    "upsampling3d",
    "utils",
]
