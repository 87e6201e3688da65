"""SimplifyInference: batch normalization becomes a per-channel scale and shift; dropout goes.

``nn.batch_norm(x, gamma, beta, mean, var)`` with constant statistics becomes
``x * scale + shift`` with ``scale = gamma / sqrt(var + eps)`` and ``shift = beta - mean * scale``
(shaped to broadcast along ``axis``); :mod:`.fold_scale_axis` then folds the scale into a
preceding convolution's weights. ``nn.dropout`` is the identity at inference.
"""

from __future__ import annotations

import numpy as np

from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Constant, Expr, call
from ..functor import rewrite_function
from ..module import IRModule

__all__ = ["SimplifyInference", "simplify_inference"]


def _batch_norm(node: Call) -> Expr | None:
    data, gamma, beta, mean, var = node.args
    if not all(isinstance(a, Constant) for a in (gamma, beta, mean, var)):
        return None
    attrs = node.attrs
    g, b, m, v = (a.data.astype(np.float64) for a in (gamma, beta, mean, var))  # type: ignore[union-attr]
    scale = 1.0 / np.sqrt(v + attrs.get("epsilon", 1e-5))
    if attrs.get("scale", True):
        scale = scale * g
    shift = -m * scale
    if attrs.get("center", True):
        shift = shift + b
    ndim = len(data.checked_type.shape)  # type: ignore[union-attr]
    axis = attrs.get("axis", 1) % ndim
    shape = (-1,) + (1,) * (ndim - axis - 1)
    dtype = data.checked_type.dtype  # type: ignore[union-attr]
    scaled = call("multiply", data, Constant(scale.reshape(shape).astype(dtype)), name=node.name)
    return call("add", scaled, Constant(shift.reshape(shape).astype(dtype)), name=node.name)


def _simplify(node: Expr) -> Expr | None:
    if not isinstance(node, Call) or not isinstance(node.op, str):
        return None
    if node.op == "nn.batch_norm":
        return _batch_norm(node)
    if node.op == "nn.dropout":
        return node.args[0]
    return None


def simplify_inference(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Replace training-time operators by their inference form."""
    del ctx
    return map_functions(mod, lambda f: rewrite_function(f, _simplify))


SimplifyInference = Pass("SimplifyInference", 0, simplify_inference)
