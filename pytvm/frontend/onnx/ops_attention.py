"""Converters of ONNX Runtime's fused attention (``com.microsoft``): ``Attention`` (the fused
Q/K/V projection of BERT- and GPT-2-style models) and ``MultiHeadAttention`` (projected Q, K, V).

Both compute, per head, ``softmax(scale · Q Kᵀ + mask + attention_bias) V`` with
``scale = 1 / sqrt(head_size)`` unless the ``scale`` attribute is set. The mask is additive:
``mask_filter_value`` (default -10000) where a key position is masked, 0 elsewhere; the masks ONNX
Runtime reads are

- 1-d ``[batch]``: each row's key length (right padding: positions at or past it are masked);
- 1-d ``[2 · batch]``: exclusive end positions, then inclusive start positions (left padding);
- 2-d ``[batch, total_sequence]`` or 3-d ``[batch, sequence, total_sequence]``: 0 masks, 1 keeps;
- 4-d ``[batch, 1, max_sequence, max_sequence]`` (Megatron GPT-2): rows ``past .. past + sequence``
  and columns ``0 .. total_sequence`` of it, 0 masks, 1 keeps;

and ``unidirectional=1`` adds ``mask_filter_value`` once more where a query at ``s`` would see a
key after ``past + s``. ``past`` (``[2, batch, heads, past_sequence, head_size]`` for
``Attention``, ``past_key``/``past_value`` for ``MultiHeadAttention``) is prepended to K and V, and
the ``present`` outputs are the keys and values attended to. Rotary embeddings, shared past/present
buffers, ``3 · batch + 2`` masks and beam-search inputs are refused naming the node.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ...graph import Expr, Tuple
from .node import ConverterTable, NodeContext

__all__ = ["ATTENTION_CONVERTERS"]

_FILTER = -10000.0  # ONNX Runtime's default mask_filter_value


@dataclass(frozen=True, slots=True)
class _Dims:
    """The sizes one attention node works with."""

    batch: int
    seq: int  # query positions
    past: int  # past key positions
    total: int  # past + new key positions
    heads: int


def _heads(ctx: NodeContext, x: Expr, batch: int, seq: int, heads: int, size: int) -> Expr:
    """``[batch, seq, heads · size]`` to ``[batch, heads, seq, size]``."""
    x = ctx.call("reshape", x, newshape=(batch, seq, heads, size))
    return ctx.call("transpose", x, axes=(0, 2, 1, 3))


def _mask_rows(ctx: NodeContext, masked: Expr, filter_value: float) -> Expr:
    """``filter_value`` where ``masked`` is true, else 0."""
    return ctx.call(
        "where",
        masked,
        ctx.const(np.asarray(filter_value, dtype="float32")),
        ctx.const(np.asarray(0.0, dtype="float32")),
    )


def _mask_bias(ctx: NodeContext, i: int, d: _Dims, filter_value: float) -> Expr | None:
    """The additive mask of mask input ``i`` as ``[batch, 1, seq or 1, total]`` (None: none)."""
    if not ctx.has(i):
        return None
    shape, mask = ctx.shape(i), ctx.expr(i)
    positions = ctx.const(np.arange(d.total, dtype="int32"))
    if shape == (d.batch,) or shape == (2 * d.batch,):
        lengths = ctx.call("cast", mask, dtype="int32")
        end = ctx.call("strided_slice", lengths, begin=(0,), end=(d.batch,), strides=(1,))
        end = ctx.call("reshape", end, newshape=(d.batch, 1))
        masked = ctx.call("greater_equal", positions, end)
        if shape[0] == 2 * d.batch and d.batch > 0:
            start = ctx.call(
                "strided_slice", lengths, begin=(d.batch,), end=(2 * d.batch,), strides=(1,)
            )
            before = ctx.call("less", positions, ctx.call("reshape", start, newshape=(d.batch, 1)))
            masked = ctx.call("logical_or", masked, before)
        bias = ctx.call(
            "reshape", _mask_rows(ctx, masked, filter_value), newshape=(d.batch, 1, 1, d.total)
        )
        return bias
    keep = ctx.call("greater", mask, ctx.const(np.zeros((), dtype=ctx.dtype(i))))
    masked = ctx.call("logical_not", keep)
    if shape == (d.batch, d.total):
        return ctx.call(
            "reshape", _mask_rows(ctx, masked, filter_value), newshape=(d.batch, 1, 1, d.total)
        )
    if shape == (d.batch, d.seq, d.total):
        return ctx.call(
            "reshape", _mask_rows(ctx, masked, filter_value), newshape=(d.batch, 1, d.seq, d.total)
        )
    if len(shape) == 4 and shape[:2] == (d.batch, 1) and shape[2] >= d.past + d.seq:  # noqa: PLR2004
        if shape[3] < d.total:
            raise ctx.error(f"mask of shape {list(shape)} has fewer than {d.total} key columns")
        rows = ctx.call(
            "strided_slice",
            masked,
            begin=(d.past, 0),
            end=(d.past + d.seq, d.total),
            strides=(1, 1),
            axes=(2, 3),
        )
        return _mask_rows(ctx, rows, filter_value)
    raise ctx.error(
        f"mask input {i} has shape {list(shape)}; supported: [{d.batch}] (lengths), "
        f"[{2 * d.batch}] (ends and starts), [{d.batch}, {d.total}], "
        f"[{d.batch}, {d.seq}, {d.total}] or [{d.batch}, 1, max, max]"
    )


def _causal_bias(ctx: NodeContext, d: _Dims, filter_value: float) -> Expr:
    s = np.arange(d.seq).reshape(-1, 1)
    t = np.arange(d.total).reshape(1, -1)
    bias = np.where(t > d.past + s, np.float32(filter_value), np.float32(0.0)).astype("float32")
    return ctx.const(bias.reshape(1, 1, d.seq, d.total))


def _attend(
    ctx: NodeContext,
    q: Expr,
    k: Expr,
    v: Expr,
    d: _Dims,
    bias: Expr | None,
) -> Expr:
    """``softmax(scale · q kᵀ + bias) v`` over ``[batch, heads, ·, size]`` operands, as
    ``[batch, seq, heads · v_size]``.
    """
    head_size = int(q.checked_type.shape[-1])  # type: ignore[union-attr]
    v_size = int(v.checked_type.shape[-1])  # type: ignore[union-attr]
    scale = float(ctx.attr("scale", 0.0)) or 1.0 / math.sqrt(head_size)
    bn = d.batch * d.heads
    qf = ctx.call("reshape", q, newshape=(bn, d.seq, head_size))
    kf = ctx.call("reshape", k, newshape=(bn, d.total, head_size))
    scores = ctx.call("nn.batch_matmul", qf, kf, transpose_a=False, transpose_b=True)
    scores = ctx.call("multiply", scores, ctx.const(np.asarray(scale, dtype="float32")))
    if bias is not None:
        scores = ctx.call("reshape", scores, newshape=(d.batch, d.heads, d.seq, d.total))
        scores = ctx.call("add", scores, bias)
    probs = ctx.call("nn.softmax", scores, axis=-1)
    probs = ctx.call("reshape", probs, newshape=(bn, d.seq, d.total))
    vt = ctx.call(
        "transpose", ctx.call("reshape", v, newshape=(bn, d.total, v_size)), axes=(0, 2, 1)
    )
    out = ctx.call("nn.batch_matmul", probs, vt, transpose_a=False, transpose_b=True)
    out = ctx.call("reshape", out, newshape=(d.batch, d.heads, d.seq, v_size))
    out = ctx.call("transpose", out, axes=(0, 2, 1, 3))
    return ctx.call("reshape", out, newshape=(d.batch, d.seq, d.heads * v_size))


def _total_bias(ctx: NodeContext, mask_input: int, bias_input: int, d: _Dims) -> Expr | None:
    """The mask, the causal mask and ``attention_bias``, summed (None: none of them)."""
    if ctx.dtype(0) != "float32":
        raise ctx.error(f"the input is {ctx.dtype(0)}; only float32 is supported")
    filter_value = float(ctx.attr("mask_filter_value", _FILTER))
    terms = [_mask_bias(ctx, mask_input, d, filter_value)]
    if int(ctx.attr("unidirectional", 0)):
        terms.append(_causal_bias(ctx, d, filter_value))
    if ctx.has(bias_input):
        terms.append(ctx.expr(bias_input))
    total: Expr | None = None
    for term in terms:
        if term is not None:
            total = term if total is None else ctx.call("add", total, term)
    return total


def _refuse(ctx: NodeContext, attrs: tuple[str, ...], inputs: dict[int, str]) -> None:
    for name in attrs:
        if int(ctx.attr(name, 0)):
            raise ctx.error(f"attribute {name}={ctx.attr(name)} is not supported (only 0 is)")
    for i, name in inputs.items():
        if ctx.has(i):
            raise ctx.error(f"input {i} ({name}) is not supported; leave it out")


def _stack_kv(ctx: NodeContext, k: Expr, v: Expr) -> Expr:
    return ctx.call(
        "concatenate",
        Tuple((ctx.call("expand_dims", k, axis=0), ctx.call("expand_dims", v, axis=0))),
        axis=0,
    )


def _attention(ctx: NodeContext) -> list[Expr | None]:
    """Inputs: input, weights, bias?, mask_index?, past?, attention_bias?, past_sequence_length?;
    outputs: output, present?.
    """
    _refuse(
        ctx,
        ("do_rotary", "past_present_share_buffer"),
        {6: "past_sequence_length, for a shared past/present buffer"},
    )
    heads = int(ctx.require("num_heads"))
    if ctx.ndim(0) != 3 or ctx.ndim(1) != 2:  # noqa: PLR2004
        raise ctx.error(
            f"input {list(ctx.shape(0))} and weights {list(ctx.shape(1))}: expected "
            "[batch, sequence, input_hidden] and [input_hidden, q + k + v hidden]"
        )
    batch, seq, width = ctx.shape(0)
    units = ctx.shape(1)[1]
    sizes = [int(s) for s in ctx.attr("qkv_hidden_sizes", None) or [units // 3] * 3]
    if len(sizes) != 3 or sum(sizes) != units or any(s <= 0 or s % heads for s in sizes):  # noqa: PLR2004
        raise ctx.error(
            f"qkv_hidden_sizes {sizes} must be 3 positive multiples of num_heads={heads} "
            f"summing to the weights' {units} columns"
        )
    if sizes[0] != sizes[1]:
        raise ctx.error(f"qkv_hidden_sizes {sizes}: Q and K must have the same hidden size")
    flat = ctx.call("reshape", ctx.expr(0), newshape=(batch * seq, width))
    proj = ctx.call("nn.dense", flat, ctx.call("transpose", ctx.expr(1), axes=(1, 0)))
    if ctx.has(2):
        proj = ctx.call("nn.bias_add", proj, ctx.expr(2), axis=1)
    bounds = np.cumsum([0, *sizes]).tolist()
    parts = [
        ctx.call(
            "strided_slice", proj, begin=(bounds[j],), end=(bounds[j + 1],), strides=(1,), axes=(1,)
        )
        for j in range(3)
    ]
    q, k, v = (
        _heads(ctx, p, batch, seq, heads, s // heads) for p, s in zip(parts, sizes, strict=True)
    )
    past = 0
    if ctx.has(4):
        pshape = ctx.shape(4)
        if sizes[0] != sizes[2] or len(pshape) != 5 or pshape[:3] != (2, batch, heads):  # noqa: PLR2004
            raise ctx.error(
                f"past of shape {list(pshape)} with qkv_hidden_sizes {sizes}: expected "
                f"[2, {batch}, {heads}, past_sequence, {sizes[0] // heads}] and equal sizes"
            )
        past = pshape[3]
        old = [
            ctx.call(
                "squeeze",
                ctx.call(
                    "strided_slice", ctx.expr(4), begin=(j,), end=(j + 1,), strides=(1,), axes=(0,)
                ),
                axis=(0,),
            )
            for j in range(2)
        ]
        k = ctx.call("concatenate", Tuple((old[0], k)), axis=2)
        v = ctx.call("concatenate", Tuple((old[1], v)), axis=2)
    d = _Dims(batch, seq, past, past + seq, heads)
    out = _attend(ctx, q, k, v, d, _total_bias(ctx, 3, 5, d))
    present = _stack_kv(ctx, k, v) if ctx.output_used(1) else None
    return [out, present][: max(1, ctx.num_outputs)]


def _mha_qkv(ctx: NodeContext, heads: int) -> tuple[Expr, Expr, Expr, int]:
    """Q, K and V of a ``MultiHeadAttention`` node as ``[batch, heads, ·, size]`` (bias added),
    and the number of key positions given (before any past).
    """
    qshape = ctx.shape(0)
    if len(qshape) == 5:  # noqa: PLR2004 - packed [B, S, N, 3, H]
        if ctx.has(1) or ctx.has(2) or qshape[2:4] != (heads, 3):
            raise ctx.error(
                f"packed QKV of shape {list(qshape)}: expected [B, S, {heads}, 3, H] alone"
            )
        parts = [
            ctx.call(
                "squeeze",
                ctx.call(
                    "strided_slice", ctx.expr(0), begin=(j,), end=(j + 1,), strides=(1,), axes=(3,)
                ),
                axis=(3,),
            )
            for j in range(3)
        ]
        batch, seq = qshape[:2]
        flat = [ctx.call("reshape", p, newshape=(batch, seq, heads * qshape[4])) for p in parts]
        return _mha_projected(ctx, heads, *flat)
    if len(qshape) != 3 or not ctx.has(1):  # noqa: PLR2004
        raise ctx.error(f"query of shape {list(qshape)} needs a key; expected [B, S, hidden]")
    batch, seq, _ = qshape
    kshape = ctx.shape(1)
    if len(kshape) == 5:  # noqa: PLR2004 - packed [B, L, N, 2, H]
        if ctx.has(2) or kshape[2:4] != (heads, 2):
            raise ctx.error(
                f"packed KV of shape {list(kshape)}: expected [B, L, {heads}, 2, H] alone"
            )
        parts = [
            ctx.call(
                "squeeze",
                ctx.call(
                    "strided_slice", ctx.expr(1), begin=(j,), end=(j + 1,), strides=(1,), axes=(3,)
                ),
                axis=(3,),
            )
            for j in range(2)
        ]
        flat = [
            ctx.call("reshape", p, newshape=(batch, kshape[1], heads * kshape[4])) for p in parts
        ]
        return _mha_projected(ctx, heads, ctx.expr(0), *flat)
    if not ctx.has(2):
        raise ctx.error("value (input 2) is required with an unpacked key")
    if len(kshape) == 4:  # noqa: PLR2004 - key and value already [B, N, L, H]
        if ctx.has(3):
            raise ctx.error("bias with key and value of shape [B, N, L, H] is not supported")
        q = _heads(ctx, ctx.expr(0), batch, seq, heads, qshape[2] // heads)
        return q, ctx.expr(1), ctx.expr(2), kshape[2]
    return _mha_projected(ctx, heads, ctx.expr(0), ctx.expr(1), ctx.expr(2))


def _mha_projected(
    ctx: NodeContext, heads: int, q: Expr, k: Expr, v: Expr
) -> tuple[Expr, Expr, Expr, int]:
    sizes = [int(x.checked_type.shape[-1]) for x in (q, k, v)]  # type: ignore[union-attr]
    batch, seq = (int(s) for s in q.checked_type.shape[:2])  # type: ignore[union-attr]
    keys = int(k.checked_type.shape[1])  # type: ignore[union-attr]
    if any(s % heads for s in sizes) or sizes[0] != sizes[1]:
        raise ctx.error(
            f"hidden sizes {sizes} of Q, K, V must be equal multiples of num_heads={heads}"
        )
    if ctx.has(3):
        if ctx.shape(3) != (sum(sizes),):
            raise ctx.error(f"bias has shape {list(ctx.shape(3))}; expected [{sum(sizes)}]")
        bounds = np.cumsum([0, *sizes]).tolist()
        q, k, v = (
            ctx.call(
                "add",
                x,
                ctx.call(
                    "strided_slice",
                    ctx.expr(3),
                    begin=(bounds[j],),
                    end=(bounds[j + 1],),
                    strides=(1,),
                ),
            )
            for j, x in enumerate((q, k, v))
        )
    return (
        _heads(ctx, q, batch, seq, heads, sizes[0] // heads),
        _heads(ctx, k, batch, keys, heads, sizes[1] // heads),
        _heads(ctx, v, batch, keys, heads, sizes[2] // heads),
        keys,
    )


def _multi_head_attention(ctx: NodeContext) -> list[Expr | None]:
    """Inputs: query, key?, value?, bias?, key_padding_mask?, attention_bias?, past_key?,
    past_value?, past_sequence_length?, cache_indirection?; outputs: output, present_key?,
    present_value?, qk? (refused).
    """
    _refuse(ctx, (), {8: "past_sequence_length", 9: "cache_indirection"})
    if ctx.output_used(3):
        raise ctx.error("output 3 (qk) is not supported; leave it unnamed")
    heads = int(ctx.require("num_heads"))
    q, k, v, keys = _mha_qkv(ctx, heads)
    batch, _, seq, _ = (int(s) for s in q.checked_type.shape)  # type: ignore[union-attr]
    past = 0
    if ctx.has(6) != ctx.has(7):
        raise ctx.error("past_key and past_value must be given together")
    if ctx.has(6):
        past = ctx.shape(6)[2]
        k = ctx.call("concatenate", Tuple((ctx.expr(6), k)), axis=2)
        v = ctx.call("concatenate", Tuple((ctx.expr(7), v)), axis=2)
    d = _Dims(batch, seq, past, past + keys, heads)
    out = _attend(ctx, q, k, v, d, _total_bias(ctx, 4, 5, d))
    outs: list[Expr | None] = [out, k, v]
    return outs[: max(1, ctx.num_outputs)]


#: ``com.microsoft`` operators of this module.
ATTENTION_CONVERTERS: ConverterTable = {
    "Attention": (1, _attention),
    "MultiHeadAttention": (1, _multi_head_attention),
}
