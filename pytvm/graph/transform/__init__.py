"""Graph passes, one module each, and the pipeline that orders them."""

from __future__ import annotations

from .alter_op_layout import AlterOpLayout, alter_op_layout
from .bind_params import bind_params
from .dead_code_elimination import DeadCodeElimination, dead_code_elimination
from .device_propagation import device_map
from .eliminate_common_subexpr import EliminateCommonSubexpr, eliminate_common_subexpr
from .fold_constant import FoldConstant, fold_constant
from .fold_scale_axis import FoldScaleAxis, fold_scale_axis
from .fuse_ops import FuseOps, fuse_ops
from .fuse_qdq import FuseQDQ, fuse_qdq
from .legalize_conv_transpose import LegalizeConvTranspose, legalize_conv_transpose
from .partition_graph import partition_graph
from .pipeline import OPTIMIZE_PASSES, optimize
from .rewrite_annotated_ops import RewriteAnnotatedOps, rewrite_annotated_ops
from .simplify_inference import SimplifyInference, simplify_inference

__all__ = [
    "OPTIMIZE_PASSES",
    "AlterOpLayout",
    "DeadCodeElimination",
    "EliminateCommonSubexpr",
    "FoldConstant",
    "FoldScaleAxis",
    "FuseOps",
    "FuseQDQ",
    "LegalizeConvTranspose",
    "RewriteAnnotatedOps",
    "SimplifyInference",
    "alter_op_layout",
    "bind_params",
    "dead_code_elimination",
    "device_map",
    "eliminate_common_subexpr",
    "fold_constant",
    "fold_scale_axis",
    "fuse_ops",
    "fuse_qdq",
    "legalize_conv_transpose",
    "optimize",
    "partition_graph",
    "rewrite_annotated_ops",
    "simplify_inference",
]
