"""Numpy references of the matrix products and the recurrent and attention layers built on
them (TVM's ``batch_matmul``, ``dense``, ``lstm_python``, ``attention_python``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ._normalization import softmax_python
from ._window import Array

__all__ = ["attention_python", "batch_matmul", "dense", "lstm_python"]


def batch_matmul(
    x: Array, y: Array, out_dtype: Any = None, trans_x: bool = False, trans_y: bool = True
) -> Array:
    """``x[b] @ y[b]`` per batch (a batch of 1 broadcasts), each operand transposed on request,
    in ``out_dtype`` (default: ``x``'s).
    """
    dtype = x.dtype if out_dtype is None else np.dtype(out_dtype)
    a = np.swapaxes(x, 1, 2) if trans_x else x
    b = np.swapaxes(y, 1, 2) if trans_y else y
    if a.shape[0] != b.shape[0] and 1 not in (a.shape[0], b.shape[0]):
        raise TVMValueError(f"batch_matmul: batches {a.shape[0]} and {b.shape[0]} differ")
    out: Array = np.matmul(a.astype(dtype), b.astype(dtype))
    return out


def dense(
    x: Array,
    y: Array,
    bias: Array | None,
    use_bias: bool = False,
    use_relu: bool = False,
    out_dtype: Any = None,
) -> Array:
    """``x @ y.T`` (plus ``bias``, then ``max(., 0)``, on request) in ``out_dtype``."""
    dtype = x.dtype if out_dtype is None else np.dtype(out_dtype)
    out = np.dot(x.astype(dtype), y.T.astype(dtype))
    if use_bias:
        out = out + bias
    result: Array = np.maximum(out, 0) if use_relu else out
    return result


_ACTIVATIONS: dict[str, Callable[[Array], Array]] = {
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "tanh": np.tanh,
}


def lstm_python(
    Xs: Array,
    Wi: Array,
    Wh: Array,
    Bi: Array | None = None,
    Bh: Array | None = None,
    h_init: Array | None = None,
    c_init: Array | None = None,
    proj: Array | None = None,
    p_i: Array | None = None,
    p_f: Array | None = None,
    p_o: Array | None = None,
    f_act: str = "sigmoid",
    g_act: str = "tanh",
    h_act: str = "tanh",
    reverse: bool = False,
    weight_layout: str = "IFGO",
) -> tuple[Array, Array]:
    """An LSTM over ``Xs [S, B, F]``: ``Wi [4H, F]`` and ``Wh [4H, O]`` stack the gates in
    ``weight_layout`` order; optional biases, initial states, projection ``proj [O, H]`` and
    peepholes ``p_i``, ``p_f``, ``p_o``. Returns the hidden states ``[S, B, O]`` and cell
    states ``[S, B, H]``.
    """
    if sorted(weight_layout) != sorted("IFGO"):
        raise TVMValueError(
            f"lstm: weight_layout {weight_layout!r}; expected a permutation of IFGO"
        )
    gate = {g: weight_layout.index(g) for g in "IFGO"}
    act_f, act_g, act_h = (_ACTIVATIONS[a] for a in (f_act, g_act, h_act))
    s, b, f = Xs.shape
    hidden, out_dim = Wi.shape[0] // 4, Wh.shape[1]
    wi, wh = Wi.reshape(4, hidden, f), Wh.reshape(4, hidden, out_dim)
    h = h_init if h_init is not None else np.zeros((b, out_dim), "float32")
    c = c_init if c_init is not None else np.zeros((b, hidden), "float32")
    hs, cs = [], []
    for t in range(s):
        x = Xs[s - 1 - t if reverse else t]
        sums = []
        for g in range(4):
            v = x @ wi[g].T + h @ wh[g].T
            if Bi is not None:
                v = v + Bi.reshape(4, hidden)[g]
            if Bh is not None:
                v = v + Bh.reshape(4, hidden)[g]
            sums.append(v)
        peep = p_i is not None and p_f is not None
        i_gate = act_f(sums[gate["I"]] + (p_i * c if peep else 0))
        f_gate = act_f(sums[gate["F"]] + (p_f * c if peep else 0))
        c = f_gate * c + i_gate * act_g(sums[gate["G"]])
        o_gate = act_f(sums[gate["O"]] + (p_o * c if p_o is not None else 0))
        h = o_gate * act_h(c)
        if proj is not None:
            h = h @ proj.T
        hs.append(h)
        cs.append(c)
    return np.stack(hs), np.stack(cs)


def attention_python(
    q: Array,
    k: Array,
    v: Array,
    bias: Array | None,
    qk_scale: Any,
    causal: str,
    window_size: int | None = None,
    layout: str = "BSNH",
) -> Array:
    """Multi-head attention ``softmax(q @ k.T * scale + bias) @ v`` in ``layout`` (``BSNH``,
    ``BNSH`` or ``SBNH``); ``qk_scale="none"`` scales by ``1 / sqrt(head_dim)``; key/value heads
    repeat to the query heads; ``causal`` is ``"none"``, ``"TopLeft"`` or ``"BottomRight"``
    (keys past the query's position, shifted by ``|s - s_kv|``, are masked), and
    ``window_size`` keeps only that many latest keys.
    """
    if layout not in ("BSNH", "BNSH", "SBNH"):
        raise TVMValueError(f"attention: layout {layout!r}; expected BSNH, BNSH or SBNH")
    order = [layout.index(a) for a in "BNSH"]
    qb, kb, vb = (t.transpose(order) for t in (q, k, v))
    heads, kv_heads = qb.shape[1], kb.shape[1]
    if heads % kv_heads:
        raise TVMValueError(f"attention: {heads} query heads for {kv_heads} key/value heads")
    kb, vb = np.repeat(kb, heads // kv_heads, axis=1), np.repeat(vb, heads // kv_heads, axis=1)
    scale = 1 / np.sqrt(qb.shape[-1]) if qk_scale == "none" else qk_scale
    score = qb @ np.swapaxes(kb, -1, -2) * scale
    if bias is not None:
        score = score + bias
    if causal == "none":
        attn = softmax_python(score, -1)
    else:
        s, s_kv = score.shape[-2:]
        if causal == "TopLeft":
            offset = 0
        elif causal == "BottomRight":
            offset = abs(s - s_kv)
        else:
            raise TVMValueError(
                f"attention: causal {causal!r}; expected none, TopLeft or BottomRight"
            )
        rows, cols = np.arange(s)[:, None], np.arange(s_kv)[None, :]
        keep = cols <= rows + offset
        if window_size:
            keep &= cols >= rows - window_size + 1
        masked = np.where(keep, score, 0.0)
        e = np.where(keep, np.exp(masked - masked.max(axis=-1, keepdims=True)), 0.0)
        attn = e / e.sum(axis=-1, keepdims=True)
    return (attn @ vb).transpose(np.argsort(order).tolist())
