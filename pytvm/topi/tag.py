"""Operator tags: what kind of computation a stage is, so schedules can find and treat it.

The pattern tags rank like TVM's: elementwise < broadcast < injective < reduction. A tag may
carry a suffix after a comma (``"elemwise,relu"``), as ``topi.nn.relu`` does.
"""

from __future__ import annotations

__all__ = [
    "BROADCAST",
    "COMM_REDUCE",
    "COMM_REDUCE_IDX",
    "CONV2D_NCHW",
    "DENSE",
    "DENSE_PACK",
    "DEPTHWISE_CONV2D_NCHW",
    "ELEMWISE",
    "GROUP_CONV2D_NCHW",
    "INJECTIVE",
    "is_broadcast",
    "is_injective",
]

ELEMWISE = "elemwise"
BROADCAST = "broadcast"
INJECTIVE = "injective"
COMM_REDUCE = "comm_reduce"
COMM_REDUCE_IDX = "comm_reduce_idx"
CONV2D_NCHW = "conv2d_nchw"
GROUP_CONV2D_NCHW = "group_conv2d_nchw"
DEPTHWISE_CONV2D_NCHW = "depthwise_conv2d_nchw"
DENSE = "dense"
DENSE_PACK = "dense_pack"


def is_broadcast(tag: str) -> bool:
    """Whether ``tag`` is elementwise or broadcast."""
    base = tag.split(",", maxsplit=1)[0]
    return base in (ELEMWISE, BROADCAST)


def is_injective(tag: str) -> bool:
    """Whether ``tag`` marks a stage whose every output element reads its inputs injectively."""
    return is_broadcast(tag) or tag.split(",", maxsplit=1)[0] == INJECTIVE
