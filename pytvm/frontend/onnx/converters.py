"""The table of ONNX operator converters: ``{op_type: (first opset, converter)}``.

A converter reads ``ctx.opset`` where an operator's attributes or inputs changed between
opsets (axes moving from attributes to inputs, ``Clip``'s bounds, ``Pad``'s pads, ...).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .einsum import EINSUM_CONVERTERS
from .node import NodeContext
from .ops_attention import ATTENTION_CONVERTERS
from .ops_bitwise import BITWISE_CONVERTERS
from .ops_control import CONTROL_CONVERTERS
from .ops_detection import DETECTION_CONVERTERS
from .ops_fused_norm import FUSED_NORM_CONVERTERS, FUSED_NORM_ONNX_CONVERTERS
from .ops_grid import GRID_CONVERTERS
from .ops_indexing import INDEXING_CONVERTERS
from .ops_loss import LOSS_CONVERTERS
from .ops_math import MATH_CONVERTERS
from .ops_matmul_integer import MATMUL_INTEGER_CONVERTERS, MATMUL_INTEGER_MICROSOFT_CONVERTERS
from .ops_microsoft import MICROSOFT_CONVERTERS, MICROSOFT_DOMAIN
from .ops_nn import NN_CONVERTERS
from .ops_normalization import NORMALIZATION_CONVERTERS
from .ops_pool import POOL_CONVERTERS
from .ops_qlinear_conv import QLINEAR_CONV_CONVERTERS
from .ops_qlinear_elementwise import QLINEAR_ELEMENTWISE_CONVERTERS
from .ops_quantize import QUANTIZE_CONVERTERS
from .ops_reduce import REDUCE_CONVERTERS
from .ops_resize import RESIZE_CONVERTERS
from .ops_rnn import RNN_CONVERTERS
from .ops_scatter import SCATTER_CONVERTERS
from .ops_shape_fit import SHAPE_FIT_CONVERTERS
from .ops_signal import SIGNAL_CONVERTERS
from .ops_sorting import SORTING_CONVERTERS
from .ops_tensor import TENSOR_CONVERTERS
from .ops_triangle import TRIANGLE_CONVERTERS
from .ops_unpool import UNPOOL_CONVERTERS

__all__ = ["CONVERTERS", "DOMAIN_CONVERTERS", "supported_operators"]

CONVERTERS: dict[str, tuple[int, Callable[[NodeContext], Any]]] = {
    **MATH_CONVERTERS,
    **TENSOR_CONVERTERS,
    **REDUCE_CONVERTERS,
    **NN_CONVERTERS,
    **POOL_CONVERTERS,
    **RESIZE_CONVERTERS,
    **EINSUM_CONVERTERS,
    **INDEXING_CONVERTERS,
    **NORMALIZATION_CONVERTERS,
    **QUANTIZE_CONVERTERS,
    **FUSED_NORM_ONNX_CONVERTERS,
    **QLINEAR_CONV_CONVERTERS,
    **BITWISE_CONVERTERS,
    **SCATTER_CONVERTERS,
    **TRIANGLE_CONVERTERS,
    **SORTING_CONVERTERS,
    **SIGNAL_CONVERTERS,
    **MATMUL_INTEGER_CONVERTERS,
    **UNPOOL_CONVERTERS,
    **DETECTION_CONVERTERS,
    **LOSS_CONVERTERS,
    **GRID_CONVERTERS,
    **SHAPE_FIT_CONVERTERS,
    **RNN_CONVERTERS,
    **CONTROL_CONVERTERS,
}

#: Converters of operators of other domains than ONNX's own, by domain.
DOMAIN_CONVERTERS: dict[str, dict[str, tuple[int, Callable[[NodeContext], Any]]]] = {
    MICROSOFT_DOMAIN: {
        **MICROSOFT_CONVERTERS,
        **MATMUL_INTEGER_MICROSOFT_CONVERTERS,
        **ATTENTION_CONVERTERS,
        **FUSED_NORM_CONVERTERS,
        **QLINEAR_ELEMENTWISE_CONVERTERS,
    },
}


def supported_operators() -> dict[str, int]:
    """Each ONNX operator the importer converts, with the first opset it converts it at."""
    return {op: entry[0] for op, entry in sorted(CONVERTERS.items())}
