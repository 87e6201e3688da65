"""topi.nn.recurrence's kernels (LSTM, GRU, RNN steps over a sequence) against the numpy
reference of the graph operators, and how activations read their alpha and beta.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import te
from pytvm.ffi.errors import TVMValueError
from pytvm.graph.attrs import Attrs
from pytvm.graph.op import get_op
from pytvm.topi.nn.recurrence import gru_recurrence, lstm_recurrence, rnn_recurrence
from pytvm.topi.nn.rnn_activation import activations_of

SEQ, BATCH, HIDDEN = 4, 3, 5
LENS = np.array([4, 0, 2], "int32")


def _run(kernel: Any, op: str, gates: int, extra: list[tuple[int, ...]], direction: str,
         names: list[str], **attrs: Any) -> None:  # fmt: skip
    ndir = 2 if direction == "bidirectional" else 1
    rng = np.random.default_rng(0)
    shapes = [(SEQ, BATCH, ndir * gates * HIDDEN), (ndir, HIDDEN, gates * HIDDEN), *extra]
    arrays = [rng.uniform(-1, 1, s).astype("float32") for s in shapes] + [LENS]
    tensors = [te.placeholder(a.shape, str(a.dtype), f"in{k}") for k, a in enumerate(arrays)]
    acts = activations_of(names * ndir, [], [])
    outs = kernel(*tensors, direction, acts, **attrs)
    f = tvm.build(te.create_schedule([o.op for o in outs]), [*tensors, *outs], "llvm")
    got = [tvm.nd.array(np.zeros([int(d) for d in o.shape], "float32")) for o in outs]
    f(*[tvm.nd.array(a) for a in arrays], *got)
    ref_attrs = Attrs.of(direction=direction, activations=acts, **attrs)
    evaluate = get_op(op).evaluate
    assert evaluate is not None
    want = evaluate(arrays, ref_attrs)
    for ours, theirs in zip(got, want, strict=True):
        np.testing.assert_allclose(ours.numpy(), theirs, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_lstm_recurrence_matches_reference(direction: str) -> None:
    ndir = 2 if direction == "bidirectional" else 1
    states = [(ndir, BATCH, HIDDEN)] * 2
    _run(lstm_recurrence, "nn.lstm_recurrence", 4, [*states, (ndir, 3 * HIDDEN)], direction,
         ["sigmoid", "tanh", "tanh"], clip=0.8)  # fmt: skip


@pytest.mark.parametrize("before_reset", [False, True])
def test_gru_recurrence_matches_reference(before_reset: bool) -> None:
    extra = [(2, BATCH, HIDDEN), (2, HIDDEN)]
    _run(gru_recurrence, "nn.gru_recurrence", 3, extra, "bidirectional", ["sigmoid", "tanh"],
         linear_before_reset=before_reset)  # fmt: skip


def test_rnn_recurrence_matches_reference() -> None:
    _run(rnn_recurrence, "nn.rnn_recurrence", 1, [(1, BATCH, HIDDEN)], "reverse", ["softsign"])


def test_activations_take_alpha_and_beta_in_order_with_defaults() -> None:
    acts = activations_of(["Affine", "Relu", "LeakyRelu", "HardSigmoid"], [2.0, 0.5], [3.0])
    assert acts == (
        ("affine", 2.0, 3.0),
        ("relu", 0.0, 0.0),
        ("leakyrelu", 0.5, 0.0),
        ("hardsigmoid", 0.2, 0.5),
    )


def test_unknown_activation_and_bad_weights_are_refused() -> None:
    with pytest.raises(TVMValueError, match="activation 'Gelu'"):
        activations_of(["Gelu"], [], [])
    xg = te.placeholder((SEQ, BATCH, 4 * HIDDEN), name="xg")
    rt = te.placeholder((1, HIDDEN, 3 * HIDDEN), name="rt")
    h0 = te.placeholder((1, BATCH, HIDDEN), name="h0")
    lens = te.placeholder((BATCH,), "int32", name="lens")
    with pytest.raises(TVMValueError, match="weights"):
        rnn_recurrence(xg, rt, h0, lens, "forward", activations_of(["tanh"], [], []))
