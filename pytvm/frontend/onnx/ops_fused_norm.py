"""Converters of ONNX Runtime's fused normalizations (what its transformer optimizer writes):
``SkipLayerNormalization``, ``SkipSimplifiedLayerNormalization``, ``SimplifiedLayerNormalization``
(RMSNorm) and ``EmbedLayerNormalization``, as ``com.microsoft``'s operator schemas define them.

A skip normalization normalizes ``input + skip (+ bias)`` over the last axis; its optional outputs
are the mean and ``1 / sqrt(variance + epsilon)`` (shape ``[..., 1]``) and the sum itself. The
simplified (RMS) forms scale by ``1 / sqrt(mean(x²) + epsilon)`` with no centring and no beta;
their ``mean`` output is zeros, as ONNX Runtime writes it.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from .node import ConverterTable, NodeContext

__all__ = ["FUSED_NORM_CONVERTERS", "FUSED_NORM_ONNX_CONVERTERS"]

_DEFAULT_EPS = 1e-12  # the skip and embed normalizations' default epsilon


def _eps(ctx: NodeContext, x: Expr, default: float) -> Expr:
    dtype = str(x.checked_type.dtype)  # type: ignore[union-attr]
    return ctx.const(np.asarray(float(ctx.attr("epsilon", default)), dtype=dtype))


def _hidden_vector(ctx: NodeContext, i: int, hidden: int, what: str) -> Expr:
    """Input ``i`` (gamma, beta or bias), which must hold ``hidden`` values, as a 1-d tensor."""
    shape = ctx.shape(i)
    if int(np.prod(shape)) != hidden or (shape and shape[-1] != hidden):
        raise ctx.error(f"{what} (input {i}) has shape {list(shape)}; expected [{hidden}]")
    return ctx.expr(i) if len(shape) == 1 else ctx.call("reshape", ctx.expr(i), newshape=(hidden,))


def _moments(ctx: NodeContext, x: Expr, eps: Expr, centred: bool) -> tuple[Expr, Expr]:
    """``(mean, inv_std)`` of ``x`` over its last axis, kept as ``[..., 1]``; the RMS form
    (``centred=False``) has a mean of zeros and ``inv_std = 1 / sqrt(mean(x²) + eps)``.
    """
    ty = x.checked_type
    if centred:
        mean = ctx.call("mean", x, axis=(-1,), keepdims=True)
        diff = ctx.call("subtract", x, mean)
    else:
        mean = ctx.const(np.zeros((*ty.shape[:-1], 1), dtype=ty.dtype))  # type: ignore[union-attr]
        diff = x
    var = ctx.call("mean", ctx.call("multiply", diff, diff), axis=(-1,), keepdims=True)
    return mean, ctx.call("rsqrt", ctx.call("add", var, eps))


def _rms_norm(ctx: NodeContext, x: Expr, gamma: Expr, eps: Expr) -> tuple[Expr, Expr, Expr]:
    """``(y, mean, inv_std)`` of RMS normalization over the last axis."""
    mean, inv_std = _moments(ctx, x, eps, centred=False)
    return ctx.call("multiply", ctx.call("multiply", x, inv_std), gamma), mean, inv_std


def _skip_sum(ctx: NodeContext, bias_input: int) -> tuple[Expr, int]:
    """``input + skip (+ bias)`` and the hidden size (the input's last axis)."""
    shape = ctx.shape(0)
    if len(shape) not in (2, 3):
        raise ctx.error(f"the input has shape {list(shape)}; expected 3-d or 2-d")
    hidden = shape[-1]
    skip = ctx.shape(1)
    if skip[-1:] != (hidden,) or len(skip) > len(shape):
        raise ctx.error(f"skip has shape {list(skip)}, which does not broadcast to {list(shape)}")
    total = ctx.call("add", ctx.expr(0), ctx.expr(1))
    if ctx.has(bias_input):
        total = ctx.call("add", total, _hidden_vector(ctx, bias_input, hidden, "bias"))
    return total, hidden


def _skip_layer_norm(ctx: NodeContext) -> list[Expr]:
    """Inputs: input, skip, gamma, beta?, bias?; outputs: output, mean?, inv_std_var?, sum?."""
    total, hidden = _skip_sum(ctx, 4)
    gamma = _hidden_vector(ctx, 2, hidden, "gamma")
    if ctx.has(3):
        beta = _hidden_vector(ctx, 3, hidden, "beta")
    else:
        beta = ctx.const(np.zeros(hidden, dtype=ctx.dtype(0)))
    epsilon = float(ctx.attr("epsilon", _DEFAULT_EPS))
    out = ctx.call("nn.layer_norm", total, gamma, beta, axis=-1, epsilon=epsilon)
    mean = inv_std = total  # placeholders for outputs the node leaves unnamed
    if ctx.output_used(1) or ctx.output_used(2):
        mean, inv_std = _moments(ctx, total, _eps(ctx, total, _DEFAULT_EPS), centred=True)
    return [out, mean, inv_std, total][: max(1, ctx.num_outputs)]


def _skip_simplified_layer_norm(ctx: NodeContext) -> list[Expr]:
    """Inputs: input, skip, gamma, bias?; outputs: output, mean?, inv_std_var?, sum?."""
    total, hidden = _skip_sum(ctx, 3)
    gamma = _hidden_vector(ctx, 2, hidden, "gamma")
    out, mean, inv_std = _rms_norm(ctx, total, gamma, _eps(ctx, total, _DEFAULT_EPS))
    return [out, mean, inv_std, total][: max(1, ctx.num_outputs)]


def _simplified_layer_norm(ctx: NodeContext) -> list[Expr]:
    """RMSNorm (``X``, ``scale``; outputs ``Y``, ``inv_std_var``) over the last axis."""
    ndim = ctx.ndim(0)
    axis = int(ctx.attr("axis", -1))
    if axis % max(ndim, 1) != ndim - 1:
        raise ctx.error(
            f"attribute axis={axis} normalizes over several axes; only the last axis "
            f"({ndim - 1} or -1) is supported"
        )
    hidden = ctx.shape(0)[-1]
    gamma = _hidden_vector(ctx, 1, hidden, "scale")
    out, _, inv_std = _rms_norm(ctx, ctx.expr(0), gamma, _eps(ctx, ctx.expr(0), 1e-5))
    return [out, inv_std][: max(1, ctx.num_outputs)]


def _lookup(ctx: NodeContext, table: int, ids: Expr, what: str) -> Expr:
    """Rows of the embedding table input ``table`` at ``ids`` (clipped into range)."""
    if ctx.ndim(table) != 2:  # noqa: PLR2004
        raise ctx.error(f"{what} has shape {list(ctx.shape(table))}; expected 2-d")
    return ctx.call("take", ctx.expr(table), ids, axis=0, mode="clip")


def _ids(ctx: NodeContext, i: int) -> Expr:
    return ctx.expr(i) if ctx.dtype(i) == "int32" else ctx.call("cast", ctx.expr(i), dtype="int32")


def _embed_layer_norm(ctx: NodeContext) -> list[Expr]:
    """Inputs: input_ids, segment_ids?, word_embedding, position_embedding, segment_embedding?,
    gamma, beta, mask?, position_ids?; outputs: output, mask_index?, embedding_sum?.
    """
    if ctx.ndim(0) != 2:  # noqa: PLR2004
        raise ctx.error(f"input_ids has shape {list(ctx.shape(0))}; expected [batch, sequence]")
    batch, seq = ctx.shape(0)
    hidden = ctx.shape(2)[-1]
    total = _lookup(ctx, 2, _ids(ctx, 0), "word_embedding")
    if ctx.has(8):
        positions = _ids(ctx, 8)
    else:
        positions = ctx.const(np.arange(seq, dtype="int32").reshape(1, seq))
    total = ctx.call("add", total, _lookup(ctx, 3, positions, "position_embedding"))
    if ctx.has(1) != ctx.has(4):
        raise ctx.error("segment_ids and segment_embedding must be given together")
    if ctx.has(1):
        total = ctx.call("add", total, _lookup(ctx, 4, _ids(ctx, 1), "segment_embedding"))
    gamma = _hidden_vector(ctx, 5, hidden, "gamma")
    beta = _hidden_vector(ctx, 6, hidden, "beta")
    epsilon = float(ctx.attr("epsilon", _DEFAULT_EPS))
    out = ctx.call("nn.layer_norm", total, gamma, beta, axis=-1, epsilon=epsilon)
    if ctx.has(7):  # the number of ones in each row of the mask
        ones = ctx.call("equal", ctx.expr(7), ctx.const(np.ones((), dtype=ctx.dtype(7))))
        mask_index = ctx.call("sum", ctx.call("cast", ones, dtype="int32"), axis=(1,))
    else:
        mask_index = ctx.const(np.zeros(batch, dtype="int32"))
    return [out, mask_index, total][: max(1, ctx.num_outputs)]


#: ``com.microsoft`` operators of this module.
FUSED_NORM_CONVERTERS: ConverterTable = {
    "SkipLayerNormalization": (1, _skip_layer_norm),
    "SkipSimplifiedLayerNormalization": (1, _skip_simplified_layer_norm),
    "SimplifiedLayerNormalization": (1, _simplified_layer_norm),
    "EmbedLayerNormalization": (1, _embed_layer_norm),
}

#: ONNX Runtime registers ``SimplifiedLayerNormalization`` in ONNX's own domain.
FUSED_NORM_ONNX_CONVERTERS: ConverterTable = {
    "SimplifiedLayerNormalization": (1, _simplified_layer_norm),
}
