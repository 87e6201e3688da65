"""Operator tags: what kind of computation a stage is, so schedules can find and treat it.

Every tag a ``topi`` compute carries is a constant of this module. The pattern tags rank like
TVM's: elementwise < broadcast < injective < reduction. A tag may carry a suffix after a comma
(``"elemwise,relu"``), as ``topi.nn.relu`` does; the part before the comma must be one of
:data:`KNOWN` (the empty tag marks an untagged stage, scheduled as injective work). Whoever
reads tags to choose a schedule calls :func:`check`, so a misspelt tag is an error rather than
a silent fallback.
"""

from __future__ import annotations

from ..ffi.errors import TVMValueError

__all__ = [
    "ADAPTIVE_POOL_MAX",
    "ADAPTIVE_POOL_SUM",
    "BATCH_MATMUL",
    "BATCH_MATMUL_NN",
    "BROADCAST",
    "COMM_REDUCE",
    "COMM_REDUCE_IDX",
    "CONV1D_NCW",
    "CONV1D_NWC",
    "CONV1D_TRANSPOSE_NCW",
    "CONV2D_HWCN",
    "CONV2D_NCHW",
    "CONV2D_NCHWC",
    "CONV2D_NCHW_GUARDED",
    "CONV2D_NCHW_INT8",
    "CONV2D_NCHW_INT8_DSP",
    "CONV2D_NCHW_INT8_ONE_LANE",
    "CONV2D_NCHW_PACKED",
    "CONV2D_NCHW_POINTWISE",
    "CONV2D_NHWC",
    "CONV2D_TRANSPOSE_NCHW",
    "CONV3D_NCDHW",
    "CONV3D_NDHWC",
    "CONV3D_TRANSPOSE_NCDHW",
    "DENSE",
    "DENSE_PACK",
    "DENSE_PACK_WEIGHT",
    "DEPTHWISE_CONV2D_NCHW",
    "DEPTHWISE_CONV2D_NCHWC",
    "DEPTHWISE_CONV2D_NCHW_CHANNELS",
    "DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE",
    "DEPTHWISE_CONV2D_NCHW_ROWS",
    "DEPTHWISE_CONV2D_NHWC",
    "DEPTHWISE_PACK",
    "DEPTHWISE_PAD_ROWS",
    "ELEMWISE",
    "GROUP_CONV1D_NCW",
    "GROUP_CONV1D_NWC",
    "GROUP_CONV1D_TRANSPOSE_NCW",
    "GROUP_CONV2D_NCHW",
    "GROUP_CONV2D_NHWC",
    "GROUP_CONV3D_TRANSPOSE_NCDHW",
    "INJECTIVE",
    "KNOWN",
    "LAYER_NORM_OUTPUT",
    "LOG_SOFTMAX_OUTPUT",
    "MATMUL",
    "POOL_GRAD_AVG",
    "POOL_GRAD_MAX",
    "POOL_MAX",
    "POOL_SUM",
    "SOFTMAX_EXP",
    "SOFTMAX_OUTPUT",
    "check",
    "is_broadcast",
    "is_injective",
]

# Patterns.
ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"
# Convolutions.
CONV2D_NCHW = "conv2d_nchw"
#: ``conv2d_nchw_guarded``: a convolution reading its padding through bounds guards (one lane).
CONV2D_NCHW_GUARDED = "conv2d_nchw_guarded"
#: TVM's ``conv2d_NCHWc``: data ``[N, C // cb, H, W, cb]`` to ``[N, F // fb, OH, OW, fb]``.
CONV2D_NCHWC = "conv2d_NCHWc"
#: The channel-blocked product stage ``[N, F // fb, OH, OW, fb]`` of ``conv2d_nchw_packed``.
CONV2D_NCHW_PACKED = "conv2d_nchw_packed"
#: ``topi.nn.conv2d_nchw_int8``: u8 x s8 products accumulated in int32, packed weights.
CONV2D_NCHW_INT8 = "conv2d_nchw_int8"
#: The int8 convolution through the Cortex-M DSP extension's dual 16-bit multiply-adds.
CONV2D_NCHW_INT8_DSP = CONV2D_NCHW_INT8 + ",dsp"
#: The int8 convolutions of one-lane targets (Cortex-M) in int32 arithmetic.
CONV2D_NCHW_INT8_ONE_LANE = CONV2D_NCHW + ",int8_one_lane"
#: The product stage ``[N, F, H * W]`` of ``conv2d_nchw_pointwise``.
CONV2D_NCHW_POINTWISE = "conv2d_nchw_pointwise"
CONV2D_TRANSPOSE_NCHW = "conv2d_transpose_nchw"
GROUP_CONV2D_NCHW = "group_conv2d_nchw"
CONV1D_TRANSPOSE_NCW = "conv1d_transpose_ncw"
GROUP_CONV1D_TRANSPOSE_NCW = "group_conv1d_transpose_ncw"
CONV3D_TRANSPOSE_NCDHW = "conv3d_transpose_ncdhw"
GROUP_CONV3D_TRANSPOSE_NCDHW = "group_conv3d_transpose_ncdhw"
CONV1D_NCW = "conv1d_ncw"
CONV1D_NWC = "conv1d_nwc"
GROUP_CONV1D_NCW = "group_conv1d_ncw"
GROUP_CONV1D_NWC = "group_conv1d_nwc"
CONV2D_NHWC = "conv2d_nhwc"
CONV2D_HWCN = "conv2d_hwcn"
GROUP_CONV2D_NHWC = "group_conv2d_nhwc"
DEPTHWISE_CONV2D_NHWC = "depthwise_conv2d_nhwc"
CONV3D_NCDHW = "conv3d_ncdhw"
CONV3D_NDHWC = "conv3d_ndhwc"
DEPTHWISE_CONV2D_NCHW = "depthwise_conv2d_nchw"
DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE = DEPTHWISE_CONV2D_NCHW + ",int8_one_lane"
#: TVM's ``depthwise_conv2d_NCHWc``: blocked data and output channels, as ``conv2d_NCHWc``.
DEPTHWISE_CONV2D_NCHWC = "depthwise_conv2d_NCHWc"
#: The product stage (over whole padded rows) of ``depthwise_conv2d_nchw_rows``.
DEPTHWISE_CONV2D_NCHW_ROWS = "depthwise_conv2d_nchw_rows"
#: The padded plane stage of ``depthwise_conv2d_nchw_rows``.
DEPTHWISE_PAD_ROWS = "depthwise_pad_rows"
#: The product stage (channels in vector lanes) of ``depthwise_conv2d_nchw_channels``.
DEPTHWISE_CONV2D_NCHW_CHANNELS = "depthwise_conv2d_nchw_channels"
#: The channel-block stages (gathered, padded) of ``depthwise_conv2d_nchw_channels``.
DEPTHWISE_PACK = "depthwise_pack"
# Matrix products.
#: ``A @ B.T``: the right operand's columns are rows of ``B``.
DENSE = "dense"
DENSE_PACK = "dense_pack"
DENSE_PACK_WEIGHT = "dense_pack_weight"
#: ``A @ B`` with ``B`` ``[K, N]``: columns contiguous in ``B``.
MATMUL = "matmul"
BATCH_MATMUL = "batch_matmul"
#: ``batch_matmul`` with ``B`` ``[batch, K, N]``: columns contiguous in ``B``.
BATCH_MATMUL_NN = "batch_matmul_nn"
# Pooling and normalization.
POOL_MAX = "pool_max"
POOL_SUM = "pool_sum"
ADAPTIVE_POOL_MAX = "adaptive_pool_max"
ADAPTIVE_POOL_SUM = "adaptive_pool_sum"
POOL_GRAD_MAX = "pool_grad_max"
POOL_GRAD_AVG = "pool_grad_avg"
SOFTMAX_EXP = "softmax_exp"
SOFTMAX_OUTPUT = "softmax_output"
LOG_SOFTMAX_OUTPUT = "log_softmax_output"
LAYER_NORM_OUTPUT = "layer_norm_output"

#: Every tag a stage may carry before its suffix ("" is an untagged stage).
KNOWN: frozenset[str] = frozenset(
    {
        "",
        ELEMWISE,
        BROADCAST,
        INJECTIVE,
        COMM_REDUCE,
        COMM_REDUCE_IDX,
        CONV2D_NCHW,
        CONV2D_NCHW_GUARDED,
        CONV2D_NCHWC,
        CONV2D_NCHW_PACKED,
        CONV2D_NCHW_INT8,
        CONV2D_NCHW_INT8_DSP,
        CONV2D_NCHW_INT8_ONE_LANE,
        DEPTHWISE_CONV2D_NCHW_INT8_ONE_LANE,
        CONV2D_NCHW_POINTWISE,
        CONV2D_TRANSPOSE_NCHW,
        GROUP_CONV2D_NCHW,
        CONV1D_TRANSPOSE_NCW,
        GROUP_CONV1D_TRANSPOSE_NCW,
        CONV3D_TRANSPOSE_NCDHW,
        GROUP_CONV3D_TRANSPOSE_NCDHW,
        CONV1D_NCW,
        CONV1D_NWC,
        GROUP_CONV1D_NCW,
        GROUP_CONV1D_NWC,
        CONV2D_NHWC,
        CONV2D_HWCN,
        GROUP_CONV2D_NHWC,
        DEPTHWISE_CONV2D_NHWC,
        CONV3D_NCDHW,
        CONV3D_NDHWC,
        DEPTHWISE_CONV2D_NCHW,
        DEPTHWISE_CONV2D_NCHWC,
        DEPTHWISE_CONV2D_NCHW_ROWS,
        DEPTHWISE_PAD_ROWS,
        DEPTHWISE_CONV2D_NCHW_CHANNELS,
        DEPTHWISE_PACK,
        DENSE,
        DENSE_PACK,
        DENSE_PACK_WEIGHT,
        MATMUL,
        BATCH_MATMUL,
        BATCH_MATMUL_NN,
        POOL_MAX,
        POOL_SUM,
        ADAPTIVE_POOL_MAX,
        ADAPTIVE_POOL_SUM,
        POOL_GRAD_MAX,
        POOL_GRAD_AVG,
        SOFTMAX_EXP,
        SOFTMAX_OUTPUT,
        LOG_SOFTMAX_OUTPUT,
        LAYER_NORM_OUTPUT,
    }
)


def _base(tag: str) -> str:
    return tag.split(",", maxsplit=1)[0]


def check(tag: str, stage: str = "") -> str:
    """``tag`` itself when its part before the comma is a known tag; else raise.

    Examples
    --------
    >>> from pytvm.topi import tag
    >>> tag.check("elemwise,relu")
    'elemwise,relu'
    """
    if _base(tag) not in KNOWN:
        where = f" of stage {stage!r}" if stage else ""
        raise TVMValueError(
            f"unknown tag {tag!r}{where}; the known tags are {sorted(t for t in KNOWN if t)} "
            "(optionally followed by ',<suffix>'): use a constant of pytvm.topi.tag, or add "
            "the new tag there"
        )
    return tag


def is_broadcast(tag: str) -> bool:
    """Whether ``tag`` is elementwise or broadcast."""
    return _base(tag) in (ELEMWISE, BROADCAST)


def is_injective(tag: str) -> bool:
    """Whether ``tag`` marks a stage whose every output element reads its inputs injectively."""
    return is_broadcast(tag) or _base(tag) == INJECTIVE
