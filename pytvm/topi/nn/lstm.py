"""``lstm``: a long short-term memory layer over a sequence, as a ``te.scan`` over time.

Per step ``t`` with the previous hidden state ``h`` and cell state ``c``:
``gates = X[t] @ Wi^T + Bi + h @ Wh^T + Bh``, split into the input, forget, cell and output
gates in ``weight_layout`` order; ``i = f_act(gi + p_i * c)``, ``f = f_act(gf + p_f * c)``,
``g = g_act(gg)``, ``c' = f * c + i * g``, ``o = f_act(go + p_o * c')``, ``h' = o * h_act(c')``,
then ``h' @ proj^T`` when ``proj`` is given (the peephole weights ``p_*`` are optional).
"""

from __future__ import annotations

from collections.abc import Callable

from ...te.operation import compute, placeholder, reduce_axis
from ...te.reduction import sum as _sum
from ...te.scan import scan
from ...te.tensor import Tensor
from ...tir import op as tirop
from ...tir.expr import PrimExpr, Var, const
from .. import tag
from .._shape import const_int, op_error

__all__ = ["lstm"]

Activation = Callable[[PrimExpr], PrimExpr]


def lstm(
    Xs: Tensor,
    Wi: Tensor,
    Wh: Tensor,
    Bi: Tensor | None = None,
    Bh: Tensor | None = None,
    h_init: Tensor | None = None,
    c_init: Tensor | None = None,
    proj: Tensor | None = None,
    p_i: Tensor | None = None,
    p_f: Tensor | None = None,
    p_o: Tensor | None = None,
    f_act: Activation = tirop.sigmoid,
    g_act: Activation = tirop.tanh,
    h_act: Activation = tirop.tanh,
    reverse: bool = False,
    weight_layout: str = "IFGO",
) -> tuple[Tensor, Tensor]:
    """``(hidden_states [seq, batch, proj or hidden], cell_states [seq, batch, hidden])`` of
    ``Xs [seq, batch, in]`` with ``Wi [4 * hidden, in]``, ``Wh [4 * hidden, proj or hidden]``,
    biases ``[4 * hidden]``, initial states ``[batch, ...]`` (zeros when None), ``proj
    [proj, hidden]`` and peephole weights ``[batch, hidden]``; ``reverse`` reads the sequence
    backwards (the outputs stay in step order).
    """
    op = "lstm"
    if sorted(weight_layout) != sorted("IFGO"):
        raise op_error(op, "weight_layout", weight_layout, "a permutation of 'IFGO'")
    seq_len, batch, in_dim = Xs.shape
    hidden4 = const_int(Wi.shape[0])
    if hidden4 is None or hidden4 % 4:
        raise op_error(op, "Wi shape", [str(d) for d in Wi.shape], "[4 * hidden, in]")
    hidden = hidden4 // 4
    proj_dim = proj.shape[0] if proj is not None else const(hidden)
    gate_of = {name: weight_layout.index(name) for name in "IFGO"}
    dtype = Xs.dtype
    zero = const(0, dtype)

    k_in = reduce_axis((0, in_dim), name="ki2h")
    x_gates = compute(
        (seq_len, batch, hidden4),
        lambda t, b, j: _sum(Xs[t, b, k_in] * Wi[j, k_in], axis=k_in),
        name="Xi2h",
        tag=tag.COMM_REDUCE,
    )
    steps = seq_len + 1
    h_state = placeholder((steps, batch, proj_dim), dtype, "h_state")
    c_state = placeholder((steps, batch, hidden), dtype, "c_state")
    h0 = compute(
        (1, batch, proj_dim),
        lambda _, b, j: h_init[b, j] if h_init is not None else zero,
        name="h_init",
    )
    c0 = compute(
        (1, batch, hidden),
        lambda _, b, j: c_init[b, j] if c_init is not None else zero,
        name="c_init",
    )
    k_h = reduce_axis((0, proj_dim), name="kh2h")
    h_gates = compute(
        (steps, batch, hidden4),
        lambda t, b, j: _sum(h_state[t - 1, b, k_h] * Wh[j, k_h], axis=k_h),
        name="s_h2h",
        tag=tag.COMM_REDUCE,
    )

    def gate(t: PrimExpr, b: PrimExpr, j: PrimExpr, name: str) -> PrimExpr:
        row = gate_of[name] * hidden + j
        x_t = seq_len - t if reverse else t - 1
        value: PrimExpr = x_gates[x_t, b, row] + h_gates[t, b, row]
        if Bi is not None:
            value = value + Bi[row]
        if Bh is not None:
            value = value + Bh[row]
        return value

    shape = (steps, batch, hidden)

    def peep(weight: Tensor | None, b: Var, j: Var, cell: PrimExpr) -> PrimExpr:
        return weight[b, j] * cell if weight is not None else zero

    i_gate = compute(
        shape,
        lambda t, b, j: f_act(gate(t, b, j, "I") + peep(p_i, b, j, c_state[t - 1, b, j])),
        name="i_gate",
        tag=tag.INJECTIVE,
    )
    f_gate = compute(
        shape,
        lambda t, b, j: f_act(gate(t, b, j, "F") + peep(p_f, b, j, c_state[t - 1, b, j])),
        name="f_gate",
        tag=tag.INJECTIVE,
    )
    g_gate = compute(
        shape, lambda t, b, j: g_act(gate(t, b, j, "G")), name="g_gate", tag=tag.INJECTIVE
    )
    next_c = compute(
        shape,
        lambda t, b, j: f_gate[t, b, j] * c_state[t - 1, b, j] + i_gate[t, b, j] * g_gate[t, b, j],
        name="next_c",
    )
    o_gate = compute(
        shape,
        lambda t, b, j: f_act(gate(t, b, j, "O") + peep(p_o, b, j, next_c[t, b, j])),
        name="o_gate",
        tag=tag.INJECTIVE,
    )
    next_h = compute(shape, lambda t, b, j: o_gate[t, b, j] * h_act(next_c[t, b, j]), name="next_h")
    if proj is not None:
        k_p = reduce_axis((0, hidden), name="kh2p")
        unprojected = next_h
        next_h = compute(
            (steps, batch, proj_dim),
            lambda t, b, j: _sum(unprojected[t, b, k_p] * proj[j, k_p], axis=k_p),
            name="next_h_proj",
        )
    states = scan([h0, c0], [next_h, next_c], [h_state, c_state], name="lstm_scan")
    assert isinstance(states, list)
    scan_h, scan_c = states
    hs = compute(
        (seq_len, batch, proj_dim), lambda t, b, j: scan_h[t + 1, b, j], name="hidden_states"
    )
    cs = compute((seq_len, batch, hidden), lambda t, b, j: scan_c[t + 1, b, j], name="cell_states")
    return hs, cs
