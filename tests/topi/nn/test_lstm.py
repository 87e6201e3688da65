"""topi.nn.lstm (a te.scan over time) against a numpy LSTM: plain, peephole, projection,
reversed, another gate order.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te, topi


def _sigmoid(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1 / (1 + np.exp(-x))
    return out


def _reference(
    x: np.ndarray, wi: np.ndarray, wh: np.ndarray, b: np.ndarray, proj: np.ndarray | None,
    peep: list[np.ndarray] | None, reverse: bool, layout: str,
) -> tuple[np.ndarray, np.ndarray]:  # fmt: skip
    seq, batch, _ = x.shape
    hidden = wi.shape[0] // 4
    h = np.zeros((batch, wh.shape[1]))
    c = np.zeros((batch, hidden))
    hs, cs = [], []
    for t in range(seq):
        xt = x[seq - 1 - t] if reverse else x[t]
        gates = xt @ wi.T + h @ wh.T + b
        part = {name: gates[:, k * hidden : (k + 1) * hidden] for k, name in enumerate(layout)}
        pi, pf, po = peep if peep is not None else (0, 0, 0)
        i = _sigmoid(part["I"] + pi * c)
        f = _sigmoid(part["F"] + pf * c)
        c = f * c + i * np.tanh(part["G"])
        o = _sigmoid(part["O"] + po * c)
        h = o * np.tanh(c)
        if proj is not None:
            h = h @ proj.T
        hs.append(h)
        cs.append(c)
    return np.stack(hs), np.stack(cs)


@pytest.mark.parametrize(
    ("use_proj", "use_peep", "reverse", "layout"),
    [(False, False, False, "IFGO"), (True, True, False, "IFGO"), (False, True, True, "IOFG")],
)
def test_lstm_matches_numpy(use_proj: bool, use_peep: bool, reverse: bool, layout: str) -> None:
    seq, batch, inp, hidden, proj_dim = 4, 2, 3, 5, 2
    rng = np.random.default_rng(0)

    def arr(*shape: int) -> np.ndarray:
        return rng.uniform(-0.5, 0.5, size=shape).astype("float32")

    out_dim = proj_dim if use_proj else hidden
    x, wi, wh, bi = (
        arr(seq, batch, inp),
        arr(4 * hidden, inp),
        arr(4 * hidden, out_dim),
        arr(4 * hidden),
    )
    proj = arr(proj_dim, hidden) if use_proj else None
    peep = [arr(batch, hidden) for _ in range(3)] if use_peep else None
    names = ["X", "Wi", "Wh", "Bi"]
    arrays: list[np.ndarray] = [x, wi, wh, bi]
    ph = [te.placeholder(a.shape, name=n) for n, a in zip(names, arrays, strict=True)]
    kwargs: dict[str, Any] = {"Bi": ph[3], "reverse": reverse, "weight_layout": layout}
    if proj is not None:
        ph.append(te.placeholder(proj.shape, name="proj"))
        arrays.append(proj)
        kwargs["proj"] = ph[-1]
    if peep is not None:
        for n, a in zip(("p_i", "p_f", "p_o"), peep, strict=True):
            ph.append(te.placeholder(a.shape, name=n))
            arrays.append(a)
            kwargs[n] = ph[-1]
    hs_t, cs_t = topi.nn.lstm(ph[0], ph[1], ph[2], **kwargs)
    f = tvm.build(te.create_schedule([hs_t.op, cs_t.op]), [*ph, hs_t, cs_t], "llvm")
    hs = tvm.nd.array(np.zeros((seq, batch, out_dim), "float32"))
    cs = tvm.nd.array(np.zeros((seq, batch, hidden), "float32"))
    f(*[tvm.nd.array(a) for a in arrays], hs, cs)
    want_h, want_c = _reference(x, wi, wh, bi, proj, peep, reverse, layout)
    np.testing.assert_allclose(hs.numpy(), want_h, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(cs.numpy(), want_c, rtol=1e-4, atol=1e-5)
