"""Converters of ONNX's recurrent layers: ``LSTM``, ``GRU`` and ``RNN``.

Every ONNX attribute is supported: ``direction`` (forward, reverse, bidirectional),
``activations`` with ``activation_alpha``/``activation_beta``, ``clip``, ``hidden_size``,
``input_forget`` (LSTM), ``linear_before_reset`` (GRU) and ``layout`` 0 and 1; the optional
inputs ``B``, ``sequence_lens`` (steps past a row's length give zeros in ``Y`` and keep the
last state, and a row of length 0 ends with zero states, as in ONNX Runtime), ``initial_h``,
``initial_c`` and ``P``; any subset of the outputs.

A layer becomes one ``nn.dense`` projecting the input of every step at once (biases folded into
it) and one recurrence kernel (``nn.lstm_recurrence`` / ``nn.gru_recurrence`` /
``nn.rnn_recurrence``) with the recurrent weights transposed, both constant-folded when the
weights are bound at build time.
"""

from __future__ import annotations

import numpy as np

from ...graph import Expr
from ...topi.nn.rnn_activation import ACTIVATION_PARAMETERS, activations_of
from .node import ConverterTable, NodeContext

__all__ = ["RNN_CONVERTERS"]

#: Per operator: the number of gates and the default activations of one direction.
_CELLS: dict[str, tuple[int, tuple[str, ...]]] = {
    "LSTM": (4, ("Sigmoid", "Tanh", "Tanh")),
    "GRU": (3, ("Sigmoid", "Tanh")),
    "RNN": (1, ("Tanh",)),
}


class _Layer:
    """The shapes and attributes of one recurrent node, checked."""

    def __init__(self, ctx: NodeContext) -> None:
        self.ctx = ctx
        self.gates, default_acts = _CELLS[ctx.op_type]
        direction = str(ctx.attr("direction", "forward"))
        if direction not in ("forward", "reverse", "bidirectional"):
            raise ctx.error(
                f"direction {direction!r} is not one of 'forward', 'reverse', 'bidirectional'"
            )
        self.direction = direction
        self.ndir = 2 if direction == "bidirectional" else 1
        self.layout = int(ctx.attr("layout", 0))
        if self.layout not in (0, 1):
            raise ctx.error(f"layout {self.layout} is not 0 or 1")
        if ctx.ndim(0) != 3:  # noqa: PLR2004
            raise ctx.error(f"X has shape {list(ctx.shape(0))}; expected a 3-d input")
        x_shape = ctx.shape(0)
        self.seq, self.batch = (x_shape[1], x_shape[0]) if self.layout else x_shape[:2]
        self.input_size = x_shape[2]
        w_shape, r_shape = ctx.shape(1), ctx.shape(2)
        hidden = int(ctx.attr("hidden_size", r_shape[-1] if len(r_shape) == 3 else 0))  # noqa: PLR2004
        self.hidden = hidden
        gh = self.gates * hidden
        for name, got, want in (
            ("W", w_shape, (self.ndir, gh, self.input_size)),
            ("R", r_shape, (self.ndir, gh, hidden)),
        ):
            if tuple(got) != want:
                raise ctx.error(
                    f"{name} has shape {list(got)}; expected {list(want)} (num_directions "
                    f"{self.ndir}, {self.gates} gates of hidden_size {hidden})"
                )
        names = ctx.attr("activations") or list(default_acts) * self.ndir
        if len(names) != len(default_acts) * self.ndir:
            raise ctx.error(
                f"activations {list(names)}: expected {len(default_acts)} per direction "
                f"({len(default_acts) * self.ndir} for direction {direction!r})"
            )
        unknown = [n for n in names if str(n).lower() not in ACTIVATION_PARAMETERS]
        if unknown:
            raise ctx.error(
                f"activation(s) {unknown} are not supported; supported: "
                f"{sorted(ACTIVATION_PARAMETERS)} (case-insensitive)"
            )
        alphas = [float(a) for a in ctx.attr("activation_alpha") or []]
        betas = [float(b) for b in ctx.attr("activation_beta") or []]
        self.activations = activations_of(names, alphas, betas, ctx.op_type)
        clip = ctx.attr("clip")
        self.clip = None if clip is None else float(clip)
        if self.clip is not None and self.clip <= 0:
            raise ctx.error(f"clip {self.clip} must be positive")

    def batch_major(self, i: int, what: str) -> Expr:
        """Input ``i`` (``[D, batch, hidden]``; ``[batch, D, hidden]`` with layout 1) as
        ``[D, batch, hidden]``, or zeros when not given.
        """
        ctx = self.ctx
        want = (self.ndir, self.batch, self.hidden)
        if not ctx.has(i):
            return ctx.const(np.zeros(want, ctx.dtype(0)))
        expr = ctx.expr(i)
        if self.layout:
            expr = ctx.call("transpose", expr, axes=(1, 0, 2))
        got = expr.checked_type.shape  # type: ignore[union-attr]
        if tuple(got) != want:
            raise ctx.error(f"{what} has shape {list(ctx.shape(i))}; expected {list(want)}")
        return expr

    def input_gates(self) -> Expr:
        """``X @ W^T + biases`` of every step at once: ``[seq, batch, D * gates * hidden]``."""
        ctx = self.ctx
        x = ctx.expr(0)
        if self.layout:
            x = ctx.call("transpose", x, axes=(1, 0, 2))
        cols = self.ndir * self.gates * self.hidden
        rows = ctx.call("reshape", x, newshape=(self.seq * self.batch, self.input_size))
        w = ctx.call("reshape", ctx.expr(1), newshape=(cols, self.input_size))
        xg = ctx.call("nn.dense", rows, w)
        if ctx.has(3):
            xg = ctx.call("nn.bias_add", xg, self._bias(), axis=1)
        return ctx.call("reshape", xg, newshape=(self.seq, self.batch, cols))

    def _bias(self) -> Expr:
        """``Wb + Rb`` over the gates (the GRU's ``Rb`` of ``h`` only without
        ``linear_before_reset``), ``[D * gates * hidden]``.
        """
        ctx = self.ctx
        gh = self.gates * self.hidden
        if ctx.shape(3) != (self.ndir, 2 * gh):
            raise ctx.error(f"B has shape {list(ctx.shape(3))}; expected {[self.ndir, 2 * gh]}")
        b = ctx.expr(3)
        wb = ctx.call("strided_slice", b, begin=(0, 0), end=(self.ndir, gh), strides=(1, 1))
        rb = ctx.call("strided_slice", b, begin=(0, gh), end=(self.ndir, 2 * gh), strides=(1, 1))
        if ctx.op_type == "GRU" and ctx.attr("linear_before_reset", 0):
            mask = np.ones(gh, ctx.dtype(3))
            mask[2 * self.hidden :] = 0
            rb = ctx.call("multiply", rb, ctx.const(mask))
        return ctx.call("reshape", ctx.call("add", wb, rb), newshape=(self.ndir * gh,))

    def rbh(self) -> Expr:
        """The GRU's ``Rb`` of the ``h`` gate, ``[D, hidden]`` (zeros without ``B``)."""
        ctx = self.ctx
        if not ctx.has(3):
            return ctx.const(np.zeros((self.ndir, self.hidden), ctx.dtype(0)))
        gh = self.gates * self.hidden
        begin, end = (0, gh + 2 * self.hidden), (self.ndir, 2 * gh)
        return ctx.call("strided_slice", ctx.expr(3), begin=begin, end=end, strides=(1, 1))

    def lens(self) -> Expr:
        """``sequence_lens`` as int32 (every row's length ``seq`` when not given)."""
        ctx = self.ctx
        if not ctx.has(4):
            return ctx.const(np.full((self.batch,), self.seq, "int32"))
        if ctx.shape(4) != (self.batch,):
            raise ctx.error(
                f"sequence_lens has shape {list(ctx.shape(4))}; expected [{self.batch}]"
            )
        known = ctx.known_value(4)
        if known is not None and (np.any(known < 0) or np.any(known > self.seq)):
            raise ctx.error(f"sequence_lens {known.tolist()} must lie in [0, {self.seq}]")
        return ctx.call("cast", ctx.expr(4), dtype="int32")

    def peepholes(self) -> Expr:
        """The LSTM's ``P`` ``[D, 3 * hidden]`` (zeros when not given)."""
        ctx = self.ctx
        want = (self.ndir, 3 * self.hidden)
        if not ctx.has(7):
            return ctx.const(np.zeros(want, ctx.dtype(0)))
        if ctx.shape(7) != want:
            raise ctx.error(f"P has shape {list(ctx.shape(7))}; expected {list(want)}")
        return ctx.expr(7)

    def recurrent_weights(self) -> Expr:
        """``R`` transposed to ``[D, hidden, gates * hidden]``."""
        return self.ctx.call("transpose", self.ctx.expr(2), axes=(0, 2, 1))

    def outputs(self, result: Expr, nstates: int) -> list[Expr | None]:
        """``Y`` and the final states in the node's layout, for the outputs it names."""
        ctx = self.ctx
        outs: list[Expr | None] = []
        for k in range(1 + nstates):
            if not ctx.output_used(k):
                outs.append(None)
                continue
            value = ctx.item(result, k)
            if self.layout:
                axes = (2, 0, 1, 3) if k == 0 else (1, 0, 2)
                value = ctx.call("transpose", value, axes=axes)
            outs.append(value)
        return outs

    def attrs(self) -> dict[str, object]:
        """The recurrence's common attributes."""
        return {"direction": self.direction, "activations": self.activations, "clip": self.clip}


def _lstm(ctx: NodeContext) -> list[Expr | None]:
    layer = _Layer(ctx)
    result = ctx.call(
        "nn.lstm_recurrence",
        layer.input_gates(),
        layer.recurrent_weights(),
        layer.batch_major(5, "initial_h"),
        layer.batch_major(6, "initial_c"),
        layer.peepholes(),
        layer.lens(),
        input_forget=bool(ctx.attr("input_forget", 0)),
        **layer.attrs(),
    )
    return layer.outputs(result, 2)


def _gru(ctx: NodeContext) -> list[Expr | None]:
    layer = _Layer(ctx)
    result = ctx.call(
        "nn.gru_recurrence",
        layer.input_gates(),
        layer.recurrent_weights(),
        layer.batch_major(5, "initial_h"),
        layer.rbh(),
        layer.lens(),
        linear_before_reset=bool(ctx.attr("linear_before_reset", 0)),
        **layer.attrs(),
    )
    return layer.outputs(result, 1)


def _rnn(ctx: NodeContext) -> list[Expr | None]:
    layer = _Layer(ctx)
    result = ctx.call(
        "nn.rnn_recurrence",
        layer.input_gates(),
        layer.recurrent_weights(),
        layer.batch_major(5, "initial_h"),
        layer.lens(),
        **layer.attrs(),
    )
    return layer.outputs(result, 1)


RNN_CONVERTERS: ConverterTable = {"LSTM": (1, _lstm), "GRU": (1, _gru), "RNN": (1, _rnn)}
