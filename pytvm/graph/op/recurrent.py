"""The recurrences of ONNX's ``LSTM``, ``GRU`` and ``RNN``: ``nn.lstm_recurrence``,
``nn.gru_recurrence`` and ``nn.rnn_recurrence``.

Each takes the input gates of every step already projected (``xg [seq, batch, D * gates *
hidden]``, one matrix product), the recurrent weights transposed (``rt [D, hidden, gates *
hidden]``), the initial states ``[D, batch, hidden]``, the cell's other inputs and the sequence
lengths ``lens [batch]`` (int32), and returns ``(Y [seq, D, batch, hidden], Y_h[, Y_c])``.
Attributes: ``direction``, ``activations`` (``((name, alpha, beta), ...)``, per direction),
``clip`` (None: none), ``input_forget`` (LSTM), ``linear_before_reset`` (GRU). The kernels are
:mod:`pytvm.topi.nn.recurrence`; the numpy reference below is the interpreter's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from ...topi.nn.recurrence import gru_recurrence, lstm_recurrence, rnn_recurrence
from ..attrs import Attrs
from .define import define_op
from .registry import OpPattern

__all__ = ["activation_np"]


def activation_np(act: Sequence[Any]) -> Callable[[np.ndarray], np.ndarray]:
    """The numpy function of activation ``(name, alpha, beta)``."""
    name, alpha, beta = str(act[0]), float(act[1]), float(act[2])
    table: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "relu": lambda x: np.maximum(x, 0),
        "tanh": np.tanh,
        "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
        "affine": lambda x: alpha * x + beta,
        "leakyrelu": lambda x: np.where(x >= 0, x, alpha * x),
        "thresholdedrelu": lambda x: np.where(x > alpha, x, 0),
        "scaledtanh": lambda x: alpha * np.tanh(beta * x),
        "hardsigmoid": lambda x: np.clip(alpha * x + beta, 0, 1),
        "elu": lambda x: np.where(x >= 0, x, alpha * (np.exp(np.minimum(x, 0)) - 1)),
        "softsign": lambda x: x / (1 + np.abs(x)),
        "softplus": lambda x: np.logaddexp(x, 0),
    }
    return table[name]


#: One step of a cell: (input gates, h @ R^T as a function of a state, states, direction's
#: extra arrays, activations) -> new states.
StepNp = Callable[..., list[np.ndarray]]


def _run(
    args: Sequence[np.ndarray], attrs: Attrs, nstates: int, gates: int, step: StepNp
) -> tuple[np.ndarray, ...]:
    xg, rt = args[0].astype(np.float64), args[1].astype(np.float64)
    states0 = [a.astype(np.float64) for a in args[2 : 2 + nstates]]
    extra = [a.astype(np.float64) for a in args[2 + nstates : -1]]
    lens = args[-1]
    seq, batch, _ = xg.shape
    ndir, hidden = rt.shape[0], rt.shape[1]
    acts = [activation_np(a) for a in attrs["activations"]]
    per_dir = len(acts) // ndir
    clip = attrs.get("clip")

    def clipped(x: np.ndarray) -> np.ndarray:
        return x if clip is None else np.clip(x, -clip, clip)

    y = np.zeros((seq, ndir, batch, hidden))
    finals = [np.array(s) for s in states0]
    for d in range(ndir):
        reverse = attrs["direction"] == "reverse" or d == 1
        width = gates * hidden
        for b in range(batch):
            n = int(lens[b])
            states = [s[d, b] for s in states0]
            for t in range(n):
                tx = n - 1 - t if reverse else t
                x = xg[tx, b, d * width : (d + 1) * width]
                states = step(x, rt[d], states, [e[d] for e in extra],
                              acts[d * per_dir : (d + 1) * per_dir], clipped, attrs)  # fmt: skip
                y[tx, d, b] = states[0]
            for k in range(nstates):
                finals[k][d, b] = states[k] if n > 0 else 0
    dtype = args[0].dtype
    return tuple(a.astype(dtype) for a in (y, *finals))


def _lstm_step(x: np.ndarray, rt: np.ndarray, states: list[np.ndarray], extra: list[np.ndarray],
               acts: list[Any], clip: Any, attrs: Attrs) -> list[np.ndarray]:  # fmt: skip
    h, c = states
    (p,) = extra
    f, g, hact = acts
    n = h.shape[0]
    z = x + h @ rt
    i = f(clip(z[:n] + p[:n] * c))
    forget = 1 - i if attrs.get("input_forget") else f(clip(z[2 * n : 3 * n] + p[2 * n :] * c))
    c = forget * c + i * g(clip(z[3 * n :]))
    o = f(clip(z[n : 2 * n] + p[n : 2 * n] * c))
    return [o * hact(c), c]


def _gru_step(x: np.ndarray, rt: np.ndarray, states: list[np.ndarray], extra: list[np.ndarray],
              acts: list[Any], clip: Any, attrs: Attrs) -> list[np.ndarray]:  # fmt: skip
    (h,) = states
    (rbh,) = extra
    f, g = acts
    n = h.shape[0]
    zr = x[: 2 * n] + h @ rt[:, : 2 * n]
    z, r = f(clip(zr[:n])), f(clip(zr[n:]))
    if attrs.get("linear_before_reset"):
        cand = g(clip(x[2 * n :] + r * (h @ rt[:, 2 * n :] + rbh)))
    else:
        cand = g(clip(x[2 * n :] + (r * h) @ rt[:, 2 * n :]))
    return [(1 - z) * cand + z * h]


def _rnn_step(x: np.ndarray, rt: np.ndarray, states: list[np.ndarray], extra: list[np.ndarray],
              acts: list[Any], clip: Any, attrs: Attrs) -> list[np.ndarray]:  # fmt: skip
    (h,) = states
    return [acts[0](clip(x + h @ rt))]


def _clip(attrs: Attrs) -> float | None:
    value = attrs.get("clip")
    return None if value is None else float(value)


def _lstm(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    xg, rt, h0, c0, peepholes, lens = args
    return lstm_recurrence(xg, rt, h0, c0, peepholes, lens, attrs["direction"],
                           attrs["activations"], _clip(attrs),
                           bool(attrs.get("input_forget", False)))  # fmt: skip


def _gru(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    xg, rt, h0, rbh, lens = args
    return gru_recurrence(xg, rt, h0, rbh, lens, attrs["direction"], attrs["activations"],
                          _clip(attrs), bool(attrs.get("linear_before_reset", False)))  # fmt: skip


def _rnn(args: Sequence[Any], attrs: Attrs, ty: object) -> Any:
    xg, rt, h0, lens = args
    return rnn_recurrence(xg, rt, h0, lens, attrs["direction"], attrs["activations"], _clip(attrs))


define_op("nn.lstm_recurrence", 6, OpPattern.OPAQUE, _lstm,
          lambda a, attrs: _run(a, attrs, 2, 4, _lstm_step))  # fmt: skip
define_op("nn.gru_recurrence", 5, OpPattern.OPAQUE, _gru,
          lambda a, attrs: _run(a, attrs, 1, 3, _gru_step))  # fmt: skip
define_op("nn.rnn_recurrence", 4, OpPattern.OPAQUE, _rnn,
          lambda a, attrs: _run(a, attrs, 1, 1, _rnn_step))  # fmt: skip
