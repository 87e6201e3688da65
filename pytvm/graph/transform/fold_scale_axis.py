"""FoldScaleAxis: a per-output-channel scale after a convolution or dense moves into its weights.

``multiply(conv2d(x, W), s)`` with constant ``W`` and a constant ``s`` that varies only along
the output channels becomes ``conv2d(x, W * s)`` (and ``multiply(dense(x, W), s)`` likewise),
when the convolution has no other consumer. With :mod:`.simplify_inference` this folds batch
normalization into the convolution; a following ``add`` of the shift stays a bias.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Constant, Expr, Function
from ..functor import children, post_order, rewrite_pairs
from ..module import IRModule

__all__ = ["FoldScaleAxis", "fold_scale_axis"]


def _channel_scale(scale: np.ndarray, ndim: int, axis: int) -> np.ndarray | None:
    """``scale`` as a vector over ``axis`` of an ``ndim``-d output (None: it varies elsewhere)."""
    if scale.ndim > ndim:
        return None
    full = scale.reshape((1,) * (ndim - scale.ndim) + scale.shape)
    for i, n in enumerate(full.shape):
        if i != axis and n != 1:
            return None
    return full.reshape(-1)


def _fold_function(func: Function) -> Function:
    uses: Counter[int] = Counter()
    for node in post_order(func.body):
        for child in children(node):
            uses[id(child)] += 1

    def fold(old: Expr, node: Expr) -> Expr | None:
        if not (isinstance(node, Call) and node.op == "multiply"):
            return None
        assert isinstance(old, Call)
        producer, scale = node.args
        old_producer = old.args[0]
        if isinstance(producer, Constant):
            producer, scale, old_producer = scale, producer, old.args[1]
        if not (
            isinstance(producer, Call)
            and producer.op in ("nn.conv2d", "nn.dense")
            and isinstance(scale, Constant)
            and isinstance(producer.args[1], Constant)
            and uses[id(old_producer)] <= 1
        ):
            return None
        out_ty = producer.checked_type
        ndim = len(out_ty.shape)  # type: ignore[union-attr]
        axis = 1 if producer.op == "nn.conv2d" else ndim - 1
        vector = _channel_scale(scale.data, ndim, axis)
        if vector is None or node.checked_type != out_ty:
            return None
        weight = producer.args[1].data
        shape = (-1,) + (1,) * (weight.ndim - 1)
        folded = (weight * vector.reshape(shape)).astype(weight.dtype)
        return Call(
            producer.op, (producer.args[0], Constant(folded)), producer.attrs, producer.name
        )

    (body,), _ = rewrite_pairs((func.body,), fold)
    return func if body is func.body else Function(func.params, body, func.attrs)


def fold_scale_axis(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Fold constant per-channel scales into the weights of the convolution or dense before."""
    del ctx
    return map_functions(mod, _fold_function)


FoldScaleAxis = Pass("FoldScaleAxis", 2, fold_scale_axis)
