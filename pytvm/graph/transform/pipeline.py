"""The graph optimization pipeline, in order (``optimize`` runs it)."""

from __future__ import annotations

from ...ir.transform import Pass, PassContext, sequential
from ..module import IRModule
from .alter_op_layout import AlterOpLayout
from .dead_code_elimination import DeadCodeElimination
from .eliminate_common_subexpr import EliminateCommonSubexpr
from .fold_constant import FoldConstant
from .fold_scale_axis import FoldScaleAxis
from .fuse_ops import FuseOps
from .fuse_qdq import FuseQDQ
from .legalize_conv_transpose import LegalizeConvTranspose
from .rewrite_annotated_ops import RewriteAnnotatedOps
from .simplify_inference import SimplifyInference

__all__ = ["OPTIMIZE_PASSES", "optimize"]

OPTIMIZE_PASSES: tuple[Pass[IRModule], ...] = (
    # batch norm -> scale and shift, dropout removed
    SimplifyInference,
    # on_device annotations resolved: device_copy nodes where values cross devices
    RewriteAnnotatedOps,
    # transposed convolutions -> a convolution over all stride phases + a pixel shuffle
    LegalizeConvTranspose,
    # conv2d/dense of dequantized 8-bit codes -> integer products (before their weights fold)
    FuseQDQ,
    # weight-only subexpressions (and the scale/shift above) computed now, once
    FoldConstant,
    # per-channel scales after conv/dense moved into the weights (batch norm folding)
    FoldScaleAxis,
    # constant weights of convolutions and dense layers packed for the target's vector kernels
    AlterOpLayout,
    # ... and the weights scaled or packed above folded again
    FoldConstant,
    # repeated computations shared
    EliminateCommonSubexpr,
    # no-op copies, reshapes and tuple round trips dropped
    DeadCodeElimination,
    # operators grouped into primitive functions, one kernel each
    FuseOps,
)


def optimize(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Run :data:`OPTIMIZE_PASSES` on ``mod`` under ``ctx`` (default: the current context)."""
    return sequential(OPTIMIZE_PASSES, mod, ctx)
