"""The recurrent part of ONNX's ``LSTM``, ``GRU`` and ``RNN`` layers as one loop-IR kernel each.

The input projection of every time step (``X @ W^T + biases``) is one matrix product computed
before (``xg``); what is left is sequential: per step ``t`` the gates of each batch row ``b``
are ``xg[t, b] + h[b] @ R^T``, a product over the transposed recurrent weight ``rt``
``[num_directions, hidden, gates * hidden]`` computed for all rows at once (chunks of rows x
blocks of contiguous gate columns held in vector registers, so each row of ``rt`` is read once
per step), then the cell's elementwise update per row. The reverse direction reads the sequence
backwards; the two directions of a bidirectional layer are independent and run as a parallel
loop (one thread each where the target has two). ``lens`` gives each batch row's sequence
length: a step past it leaves the state as it is and writes zeros to ``Y``, and a row of length
0 ends with zero states (ONNX Runtime's semantics).

Outputs are in ONNX's ``layout=0``: ``Y [seq, num_directions, batch, hidden]``, the last
hidden state ``[num_directions, batch, hidden]`` (and the LSTM's last cell state).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

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


def _loop(
    name: str,
    extent: ExprLike,
    body: Body,
    start: ExprLike = 0,
    kind: S.ForKind = S.ForKind.SERIAL,
) -> S.For:
    var = Var(name, "int32")
    begin = convert(start)
    return S.For(var, begin, convert(extent) - begin, kind, body(var))


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

    def a(self, j: ExprLike) -> PrimExpr:
        """Scratch value ``acc[b, j]`` of this step's row."""
        return self.acc.vload((self.d, self.b, j))

    def set_a(self, j: ExprLike, value: PrimExpr) -> S.Stmt:
        """Store ``acc[b, j]``."""
        return _store(self.acc, value, self.d, self.b, j)

    def x(self, col: ExprLike) -> PrimExpr:
        """Input gate column ``col`` of this step's direction."""
        return self.xg.vload((self.tx, self.b, self.d * self.gates * self.hidden + convert(col)))

    def load_x(self, begin: int, end: int) -> S.Stmt:
        """``acc[b, j] = x[j]`` for ``j`` in ``[begin, end)``."""
        return _loop("j", end, lambda j: self.set_a(j, self.x(j)), begin)

    def zero(self, begin: int, end: int) -> S.Stmt:
        """``acc[b, j] = 0`` for ``j`` in ``[begin, end)``."""
        return _loop("j", end, lambda j: self.set_a(j, const(0.0, self.acc.dtype)), begin)

    def h(self, j: ExprLike) -> PrimExpr:
        """The hidden state ``h[j]`` of this step's row."""
        return self.yh.vload((self.d, self.b, j))

    def write_h(self, j: PrimExpr, value: PrimExpr) -> S.Stmt:
        """Store the new hidden state: the state and ``Y`` at the step's time."""
        return S.seq(
            _store(self.y, value, self.tx, self.d, self.b, j),
            _store(self.yh, value, self.d, self.b, j),
        )


@dataclass(frozen=True, slots=True)
class _MatVec:
    """A phase of a step over every batch row at once: ``acc[b, j] += sum_k source(step, k) *
    rt[d, k, j]`` for ``j`` in ``[begin, end)`` (``source`` reads row ``step.b``).
    """

    source: Callable[[_Step, PrimExpr], PrimExpr]
    begin: int
    end: int


#: A phase of a step: a statement per batch row (run for the rows whose sequence goes on),
#: or a product over all rows.
Phase = Callable[[_Step], S.Stmt] | _MatVec
#: A cell: its step as phases, for a direction.
Cell = Callable[[_Step], list[Phase]]


def _matvec(step: _Step, mv: _MatVec, batch: int) -> S.Stmt:
    """``mv`` for every row: the batch in chunks of rows and the columns in blocks, so that
    one chunk's block of sums (half the target's vector registers) stays in registers over
    ``k`` while each row of ``rt`` streams by once per chunk.
    """
    dtype = step.acc.dtype
    budget = max(1, vector_registers(dtype) // 2)
    rows = min(batch, budget)
    block = vector_lanes(dtype) * max(1, budget // rows)
    acc, rt, d = step.acc, step.rt, step.d

    def nest(b0: PrimExpr, nrows: int, c0: PrimExpr, width: int) -> S.Stmt:
        def per_k(k: Var) -> S.Stmt:
            def per_row(bi: Var) -> S.Stmt:
                hk, b = Var("hk", dtype), b0 + bi
                step.b = b

                def col(j: Var) -> S.Stmt:
                    total = acc.vload((d, b, c0 + j)) + hk * rt.vload((d, k, c0 + j))
                    return _store(acc, total, d, b, c0 + j)

                columns = _loop("j", width, col, kind=S.ForKind.VECTORIZED)
                return S.LetStmt(hk, mv.source(step, k), columns)

            return _loop("bi", nrows, per_row)

        return _loop("k", step.hidden, per_k)

    def columns(b0: PrimExpr, nrows: int) -> S.Stmt:
        full, rest = divmod(mv.end - mv.begin, block)
        parts: list[S.Stmt] = []
        if full:
            parts.append(
                _loop("jo", full, lambda jo: nest(b0, nrows, mv.begin + jo * block, block))
            )
        if rest:
            parts.append(nest(b0, nrows, convert(mv.end - rest), rest))
        return S.seq(*parts)

    full_rows, rest_rows = divmod(batch, rows)
    parts: list[S.Stmt] = []
    if full_rows:
        parts.append(_loop("bo", full_rows, lambda bo: columns(bo * rows, rows)))
    if rest_rows:
        parts.append(columns(convert(batch - rest_rows), rest_rows))
    return S.seq(*parts)


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
    Each batch row's scratch row of ``acc`` holds ``acc_rows * hidden`` values (default:
    ``gates``).
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
        acc = decl_buffer((ndir, batch, (acc_rows or gates) * hidden), dtype, "acc")
        step = _Step(ins, outs, acc, hidden, gates, clip)
        lens_buf = ins[-1]

        def at_time(t: Var, d: int, reverse: bool) -> S.Stmt:
            def on_rows(phase: Callable[[_Step], S.Stmt]) -> S.Stmt:
                def row(b: Var) -> S.Stmt:
                    n = lens_buf.vload((b,))
                    step.b, step.tx = b, (n - 1 - t if reverse else t)
                    return S.IfThenElse(t < n, phase(step))

                return _loop("b", batch, row)

            def padded(b: Var) -> S.Stmt:
                zero = _loop("j", hidden, lambda j: _store(step.y, const(0.0, dtype), t, d, b, j))
                return S.IfThenElse(t >= lens_buf.vload((b,)), zero)

            parts = [
                _matvec(step, p, batch) if isinstance(p, _MatVec) else on_rows(p)
                for p in cell(step)
            ]
            return S.seq(*parts, _loop("b", batch, padded))

        def one_direction(d: int) -> S.Stmt:
            step.d = d
            copies = [
                _copy_state(ins[2 + k], outs[1 + k], d, batch, hidden) for k in range(len(states))
            ]
            reverse = direction == "reverse" or d == 1

            def steps(t: Var) -> S.Stmt:
                return at_time(t, d, reverse)

            done = _clear_empty_rows(lens_buf, outs[1:], d, batch, hidden)
            return S.seq(*copies, _loop("t", seq, steps), done)

        if ndir == 1:
            return S.Allocate(acc, one_direction(0))
        # the two directions are independent: one thread each where the target has two
        both = _loop("d", 2, lambda d: S.IfThenElse(d == 0, one_direction(0), one_direction(1)),
                     kind=S.ForKind.PARALLEL)  # fmt: skip
        return S.Allocate(acc, both)

    inputs = [xg, rt, *states, *extra, lens]
    out = extern(shapes, inputs, body, name=name, dtype=dtype)
    return out if isinstance(out, list) else [out]


def _h_source(s: _Step, k: PrimExpr) -> PrimExpr:
    return s.h(k)


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

    def cell(s: _Step) -> list[Phase]:
        hid, p, c_out = s.hidden, s.ins[4], s.outs[2]
        f, g, h = (activation_expr(a) for a in activations[3 * s.d : 3 * s.d + 3])

        def update(j: Var) -> S.Stmt:
            c = c_out.vload((s.d, s.b, j))
            i = f(s.clip(s.a(j) + p.vload((s.d, j)) * c))
            forget = (
                const(1.0, c.dtype) - i
                if input_forget
                else f(s.clip(s.a(j + 2 * hid) + p.vload((s.d, j + 2 * hid)) * c))
            )
            c_new = Var("c_new", c.dtype)
            cand = g(s.clip(s.a(j + 3 * hid)))
            o = f(s.clip(s.a(j + hid) + p.vload((s.d, j + hid)) * c_new))
            return S.LetStmt(
                c_new,
                forget * c + i * cand,
                S.seq(_store(c_out, c_new, s.d, s.b, j), s.write_h(j, o * h(c_new))),
            )

        return [
            lambda s: s.load_x(0, 4 * hid),
            _MatVec(_h_source, 0, 4 * hid),
            lambda s: _loop("j", hid, update),
        ]

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

    def cell(s: _Step) -> list[Phase]:
        hid, rbh_buf = s.hidden, s.ins[3]
        f, g = (activation_expr(a) for a in activations[2 * s.d : 2 * s.d + 2])
        one = const(1.0, s.acc.dtype)

        def blend(j: Var, z: PrimExpr, cand: PrimExpr) -> S.Stmt:
            return s.write_h(j, (one - z) * cand + z * s.h(j))

        if linear_before_reset:

            def update(j: Var) -> S.Stmt:
                z, r = f(s.clip(s.a(j))), f(s.clip(s.a(j + hid)))
                inner = s.a(j + 2 * hid) + rbh_buf.vload((s.d, j))
                return blend(j, z, g(s.clip(s.x(j + 2 * hid) + r * inner)))

            return [
                lambda s: S.seq(s.load_x(0, 2 * hid), s.zero(2 * hid, 3 * hid)),
                _MatVec(_h_source, 0, 3 * hid),
                lambda s: _loop("j", hid, update),
            ]

        # r gates the state before its product with R_h: a second product per step, over
        # ``r * h`` kept in acc[b, 3 * hid:] (and z kept in acc[b, :hid]).
        def gates_zr(j: Var) -> S.Stmt:
            z, r = f(s.clip(s.a(j))), f(s.clip(s.a(j + hid)))
            return S.seq(s.set_a(j, z), s.set_a(j + 3 * hid, r * s.h(j)))

        def update0(j: Var) -> S.Stmt:
            return blend(j, s.a(j), g(s.clip(s.a(j + 2 * hid))))

        return [
            lambda s: s.load_x(0, 3 * hid),
            _MatVec(_h_source, 0, 2 * hid),
            lambda s: _loop("j", hid, gates_zr),
            _MatVec(lambda s, k: s.a(k + 3 * hid), 2 * hid, 3 * hid),
            lambda s: _loop("j", hid, update0),
        ]

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

    def cell(s: _Step) -> list[Phase]:
        f = activation_expr(activations[s.d])

        def update(j: Var) -> S.Stmt:
            return s.write_h(j, f(s.clip(s.a(j))))

        return [
            lambda s: s.load_x(0, s.hidden),
            _MatVec(_h_source, 0, s.hidden),
            lambda s: _loop("j", s.hidden, update),
        ]

    return _recurrence("rnn_recurrence", xg, rt, [h0], [], lens, direction, 1, clip, cell)
