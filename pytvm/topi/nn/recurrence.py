"""The recurrent part of ONNX's ``LSTM``, ``GRU`` and ``RNN`` layers as one loop-IR kernel each.

The input projection of every time step (``X @ W^T + biases``) is one matrix product computed
before (``xg``); what is left is sequential: per step ``t`` and batch row ``b`` the gates are
``xg[t, b] + h @ R^T`` (a matrix-vector product over the transposed recurrent weight ``rt``
``[num_directions, hidden, gates * hidden]``, its inner loop over contiguous gate columns, which
LLVM vectorizes), then the cell's elementwise update. Directions run one after the other (the
reverse one reads the sequence backwards); ``lens`` gives each batch row's sequence length:
a step past it leaves the state as it is and writes zeros to ``Y``, and a row of length 0 ends
with zero states (ONNX Runtime's semantics).

Outputs are in ONNX's ``layout=0``: ``Y [seq, num_directions, batch, hidden]``, the last
hidden state ``[num_directions, batch, hidden]`` (and the LSTM's last cell state).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ...te.extern import extern
from ...te.tensor import Tensor
from ...tir import op as tirop
from ...tir import stmt as S
from ...tir.buffer import decl_buffer
from ...tir.expr import Buffer, ExprLike, PrimExpr, Var, const, convert
from .._shape import const_int, op_error
from .._target import vector_lanes
from ..generic._tiling import vector_registers
from .rnn_activation import Activation, activation_expr

__all__ = ["DIRECTIONS", "gru_recurrence", "lstm_recurrence", "rnn_recurrence"]

#: ONNX's ``direction`` values.
DIRECTIONS = ("forward", "reverse", "bidirectional")

Body = Callable[[Var], S.Stmt]


def _loop(name: str, extent: ExprLike, body: Body, start: ExprLike = 0) -> S.For:
    var = Var(name, "int32")
    begin = convert(start)
    return S.For(var, begin, convert(extent) - begin, S.ForKind.SERIAL, body(var))


def _store(buf: Buffer, value: PrimExpr, *index: ExprLike) -> S.BufferStore:
    return S.BufferStore(buf, value, tuple(convert(i) for i in index))


class _Step:
    """What a cell's step reads and writes: buffers, the direction, the row and time index."""

    def __init__(
        self,
        ins: Sequence[Buffer],
        outs: Sequence[Buffer],
        acc: Buffer,
        hidden: int,
        gates: int,
        clip: float | None,
    ) -> None:
        self.xg, self.rt, self.h0 = ins[0], ins[1], ins[2]
        self.ins, self.outs, self.acc = ins, outs, acc
        self.y, self.yh = outs[0], outs[1]
        self.hidden, self.gates = hidden, gates
        self.clip_value = clip
        self.d: int = 0
        self.b: PrimExpr = const(0, "int32")
        self.tx: PrimExpr = const(0, "int32")

    def clip(self, x: PrimExpr) -> PrimExpr:
        """``x`` within ``[-clip, clip]`` (unchanged without a clip)."""
        if self.clip_value is None:
            return x
        bound = const(self.clip_value, x.dtype)
        return tirop.min(tirop.max(x, -bound), bound)

    def x(self, col: ExprLike) -> PrimExpr:
        """Input gate column ``col`` of this step's direction."""
        return self.xg.vload((self.tx, self.b, self.d * self.gates * self.hidden + convert(col)))

    def load_x(self, begin: int, end: int) -> S.Stmt:
        """``acc[j] = x[j]`` for ``j`` in ``[begin, end)``."""
        return _loop("j", end, lambda j: _store(self.acc, self.x(j), j), begin)

    def zero(self, begin: int, end: int) -> S.Stmt:
        """``acc[j] = 0`` for ``j`` in ``[begin, end)``."""
        return _loop("j", end, lambda j: _store(self.acc, const(0.0, self.acc.dtype), j), begin)

    def matvec(self, source: Callable[[PrimExpr], PrimExpr], begin: int, end: int) -> S.Stmt:
        """``acc[j] += sum_k source(k) * rt[d, k, j]`` for ``j`` in ``[begin, end)``, in blocks
        of columns as wide as half the target's vector registers hold (then the rest): each
        block stays in registers over ``k`` while contiguous rows of ``rt`` stream by.
        """
        dtype = self.acc.dtype
        block = vector_lanes(dtype) * max(1, vector_registers(dtype) // 2)
        full, rest = divmod(end - begin, block)
        parts: list[S.Stmt] = []
        if full:
            parts.append(
                _loop("jo", full, lambda jo: self._block(source, begin + jo * block, block))
            )
        if rest:
            parts.append(self._block(source, convert(end - rest), rest))
        return S.seq(*parts)

    def _block(self, source: Callable[[PrimExpr], PrimExpr], start: PrimExpr, width: int) -> S.Stmt:
        acc, rt, d = self.acc, self.rt, self.d

        def row(k: Var) -> S.Stmt:
            hk = Var("hk", acc.dtype)

            def col(j: Var) -> S.Stmt:
                return _store(
                    acc, acc.vload((start + j,)) + hk * rt.vload((d, k, start + j)), start + j
                )

            return S.LetStmt(hk, source(k), _loop("j", width, col))

        return _loop("k", self.hidden, row)

    def h(self, j: ExprLike) -> PrimExpr:
        """The hidden state ``h[j]`` of this step's row."""
        return self.yh.vload((self.d, self.b, j))

    def write_h(self, j: PrimExpr, value: PrimExpr) -> S.Stmt:
        """Store the new hidden state: the state and ``Y`` at the step's time."""
        return S.seq(
            _store(self.y, value, self.tx, self.d, self.b, j),
            _store(self.yh, value, self.d, self.b, j),
        )


Cell = Callable[[_Step], S.Stmt]


def _clear_empty_rows(
    lens: Buffer, states: Sequence[Buffer], d: int, batch: int, hidden: int
) -> S.Stmt:
    """Zero direction ``d``'s final states of the rows of length 0 (ONNX Runtime's result)."""

    def row(b: Var) -> S.Stmt:
        def clear(out: Buffer) -> S.Stmt:
            return _loop("j", hidden, lambda j: _store(out, const(0.0, out.dtype), d, b, j))

        return S.IfThenElse(lens.vload((b,)) <= 0, S.seq(*(clear(o) for o in states)))

    return _loop("b", batch, row)


def _copy_state(src: Buffer, dst: Buffer, d: int, batch: int, hidden: int) -> S.Stmt:
    """``dst[d] = src[d]`` (``[batch, hidden]``): the initial state of direction ``d``."""

    def row(b: Var) -> S.Stmt:
        return _loop("j", hidden, lambda j: _store(dst, src.vload((d, b, j)), d, b, j))

    return _loop("b", batch, row)


def _recurrence(
    name: str,
    xg: Tensor,
    rt: Tensor,
    states: Sequence[Tensor],
    extra: Sequence[Tensor],
    lens: Tensor,
    direction: str,
    gates: int,
    clip: float | None,
    cell: Cell,
    acc_rows: int = 0,
) -> list[Tensor]:
    """The kernel of a cell: ``states`` are the initial states (each ``[D, batch, hidden]``),
    ``extra`` the cell's other inputs; outputs ``Y`` and one final state per initial state.
    The cell's scratch row ``acc`` holds ``acc_rows * hidden`` values (default: ``gates``).
    """
    if direction not in DIRECTIONS:
        raise op_error(name, "direction", direction, f"one of {DIRECTIONS}")
    dims = [const_int(d) for d in (*xg.shape, *rt.shape)]
    if any(d is None for d in dims):
        raise op_error(name, "shape", [str(d) for d in (*xg.shape, *rt.shape)], "static shapes")
    seq, batch, cols, ndir, hidden, rt_cols = (int(d) for d in dims)  # type: ignore[arg-type]
    want_dir = 2 if direction == "bidirectional" else 1
    if ndir != want_dir or rt_cols != gates * hidden or cols != ndir * gates * hidden:
        raise op_error(
            name,
            "weights",
            f"xg {[seq, batch, cols]}, rt {[ndir, hidden, rt_cols]}",
            f"rt [{want_dir}, hidden, {gates} * hidden] and xg [seq, batch, "
            f"{want_dir} * {gates} * hidden] for direction {direction!r}",
        )
    dtype = xg.dtype
    shapes = [(seq, ndir, batch, hidden)] + [(ndir, batch, hidden)] * len(states)

    def body(ins: list[Buffer], outs: list[Buffer]) -> S.Stmt:
        acc = decl_buffer(((acc_rows or gates) * hidden,), dtype, "acc")
        step = _Step(ins, outs, acc, hidden, gates, clip)
        lens_buf = ins[-1]
        parts: list[S.Stmt] = []
        for d in range(ndir):
            for k in range(len(states)):
                parts.append(_copy_state(ins[2 + k], outs[1 + k], d, batch, hidden))
            reverse = direction == "reverse" or d == 1

            def per_row(t: Var, b: Var, dd: int = d, rev: bool = reverse) -> S.Stmt:
                n = lens_buf.vload((b,))
                step.d, step.b = dd, b
                step.tx = n - 1 - t if rev else t
                padded = _loop(
                    "j", hidden, lambda j: _store(step.y, const(0.0, dtype), t, dd, b, j)
                )
                return S.IfThenElse(t < n, cell(step), padded)

            parts.append(_loop("t", seq, lambda t: _loop("b", batch, lambda b: per_row(t, b))))
            parts.append(_clear_empty_rows(lens_buf, outs[1:], d, batch, hidden))
        return S.Allocate(acc, S.seq(*parts))

    inputs = [xg, rt, *states, *extra, lens]
    out = extern(shapes, inputs, body, name=name, dtype=dtype)
    return out if isinstance(out, list) else [out]


def lstm_recurrence(
    xg: Tensor,
    rt: Tensor,
    h0: Tensor,
    c0: Tensor,
    peepholes: Tensor,
    lens: Tensor,
    direction: str,
    activations: Sequence[Activation],
    clip: float | None = None,
    input_forget: bool = False,
) -> list[Tensor]:
    """``[Y, Y_h, Y_c]`` of an ONNX ``LSTM`` (gates in ONNX's ``iofc`` order) from the input
    gates ``xg [seq, batch, D * 4 * hidden]`` (biases included), ``rt [D, hidden, 4 * hidden]``
    (``R`` transposed), initial states ``[D, batch, hidden]``, ``peepholes [D, 3 * hidden]``
    (``iof``) and ``lens [batch]`` (int32); ``activations`` are ``f, g, h`` per direction.
    """
    if len(activations) != 3 * (2 if direction == "bidirectional" else 1):
        raise op_error("lstm", "activations", activations, "three per direction")

    def cell(s: _Step) -> S.Stmt:
        hid, acc, p, c_out = s.hidden, s.acc, s.ins[4], s.outs[2]
        f, g, h = (activation_expr(a) for a in activations[3 * s.d : 3 * s.d + 3])

        def update(j: Var) -> S.Stmt:
            c = c_out.vload((s.d, s.b, j))
            i = f(s.clip(acc.vload((j,)) + p.vload((s.d, j)) * c))
            forget = (
                const(1.0, c.dtype) - i
                if input_forget
                else f(s.clip(acc.vload((j + 2 * hid,)) + p.vload((s.d, j + 2 * hid)) * c))
            )
            c_new = Var("c_new", c.dtype)
            cand = g(s.clip(acc.vload((j + 3 * hid,))))
            o = f(s.clip(acc.vload((j + hid,)) + p.vload((s.d, j + hid)) * c_new))
            return S.LetStmt(
                c_new,
                forget * c + i * cand,
                S.seq(_store(c_out, c_new, s.d, s.b, j), s.write_h(j, o * h(c_new))),
            )

        return S.seq(s.load_x(0, 4 * hid), s.matvec(s.h, 0, 4 * hid), _loop("j", hid, update))

    return _recurrence("lstm_recurrence", xg, rt, [h0, c0], [peepholes], lens, direction, 4,
                       clip, cell)  # fmt: skip


def gru_recurrence(
    xg: Tensor,
    rt: Tensor,
    h0: Tensor,
    rbh: Tensor,
    lens: Tensor,
    direction: str,
    activations: Sequence[Activation],
    clip: float | None = None,
    linear_before_reset: bool = False,
) -> list[Tensor]:
    """``[Y, Y_h]`` of an ONNX ``GRU`` (gates ``zrh``) from ``xg [seq, batch, D * 3 * hidden]``
    (with ``Wb``; ``Rb`` of ``z`` and ``r`` too, and of ``h`` unless ``linear_before_reset``),
    ``rt [D, hidden, 3 * hidden]``, ``h0 [D, batch, hidden]``, ``rbh [D, hidden]`` (``Rb`` of
    ``h``, read with ``linear_before_reset`` only) and ``lens [batch]``.
    """
    if len(activations) != 2 * (2 if direction == "bidirectional" else 1):
        raise op_error("gru", "activations", activations, "two per direction")

    def cell(s: _Step) -> S.Stmt:
        hid, acc, rbh_buf = s.hidden, s.acc, s.ins[3]
        f, g = (activation_expr(a) for a in activations[2 * s.d : 2 * s.d + 2])
        one = const(1.0, acc.dtype)

        def blend(j: Var, z: PrimExpr, cand: PrimExpr) -> S.Stmt:
            return s.write_h(j, (one - z) * cand + z * s.h(j))

        if linear_before_reset:

            def update(j: Var) -> S.Stmt:
                z = f(s.clip(acc.vload((j,))))
                r = f(s.clip(acc.vload((j + hid,))))
                inner = acc.vload((j + 2 * hid,)) + rbh_buf.vload((s.d, j))
                return blend(j, z, g(s.clip(s.x(j + 2 * hid) + r * inner)))

            return S.seq(s.load_x(0, 2 * hid), s.zero(2 * hid, 3 * hid),
                         s.matvec(s.h, 0, 3 * hid), _loop("j", hid, update))  # fmt: skip

        # r gates the state before its product with R_h: a second product per step, over
        # ``r * h`` kept in acc[3 * hid:] (and z kept in acc[:hid]).
        def gates_zr(j: Var) -> S.Stmt:
            z = f(s.clip(acc.vload((j,))))
            r = f(s.clip(acc.vload((j + hid,))))
            return S.seq(_store(acc, z, j), _store(acc, r * s.h(j), j + 3 * hid))

        def update0(j: Var) -> S.Stmt:
            return blend(j, acc.vload((j,)), g(s.clip(acc.vload((j + 2 * hid,)))))

        rh = s.matvec(lambda k: acc.vload((k + 3 * hid,)), 2 * hid, 3 * hid)
        return S.seq(s.load_x(0, 3 * hid), s.matvec(s.h, 0, 2 * hid), _loop("j", hid, gates_zr),
                     rh, _loop("j", hid, update0))  # fmt: skip

    rows = 3 if linear_before_reset else 4  # without: acc's fourth row holds r * h
    return _recurrence("gru_recurrence", xg, rt, [h0], [rbh], lens, direction, 3, clip, cell,
                       rows)  # fmt: skip


def rnn_recurrence(
    xg: Tensor,
    rt: Tensor,
    h0: Tensor,
    lens: Tensor,
    direction: str,
    activations: Sequence[Activation],
    clip: float | None = None,
) -> list[Tensor]:
    """``[Y, Y_h]`` of an ONNX ``RNN``: ``h = f(xg[t] + h @ R^T)`` with ``xg [seq, batch, D *
    hidden]`` (both biases included), ``rt [D, hidden, hidden]``, ``h0 [D, batch, hidden]``.
    """
    if len(activations) != (2 if direction == "bidirectional" else 1):
        raise op_error("rnn", "activations", activations, "one per direction")

    def cell(s: _Step) -> S.Stmt:
        f = activation_expr(activations[s.d])

        def update(j: Var) -> S.Stmt:
            return s.write_h(j, f(s.clip(s.acc.vload((j,)))))

        return S.seq(
            s.load_x(0, s.hidden), s.matvec(s.h, 0, s.hidden), _loop("j", s.hidden, update)
        )

    return _recurrence("rnn_recurrence", xg, rt, [h0], [], lens, direction, 1, clip, cell)
