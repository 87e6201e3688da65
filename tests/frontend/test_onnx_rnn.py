"""ONNX ``LSTM``, ``GRU`` and ``RNN`` against ONNX Runtime with random weights: every direction,
both layouts, sequence lengths, clip, activations with alpha and beta, ``input_forget``,
``linear_before_reset``, omitted optional inputs and outputs; and a stacked speech-style model.

ONNX Runtime has no ``layout=1``: those cases compare with it on the transposed model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm as tvm
from pytvm import graph
from pytvm.frontend.onnx import OnnxImportError, from_onnx
from pytvm.runtime import graph_executor

ort = pytest.importorskip("onnxruntime")

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
OUTPUTS = ("Y", "Y_h", "Y_c")
SHAPES = {"T": 5, "B": 3, "I": 4, "H": 6}


def _model(op: str, inputs: Sequence[str], outputs: Sequence[str], feeds: dict[str, np.ndarray],
           inits: dict[str, np.ndarray], **attrs: Any) -> onnx.ModelProto:  # fmt: skip
    attrs = {"hidden_size": SHAPES["H"], **attrs}
    node = helper.make_node(op, list(inputs), list(outputs), **attrs)
    ins = [
        helper.make_tensor_value_info(
            k, TensorProto.INT32 if k == "L" else TensorProto.FLOAT, v.shape
        )
        for k, v in feeds.items()
    ]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs if o]
    inits_p = [numpy_helper.from_array(v, k) for k, v in inits.items()]
    graph_p = helper.make_graph([node], "g", ins, outs, inits_p)
    return helper.make_model(graph_p, opset_imports=[helper.make_opsetid("", 14)])


def _run_pytvm(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    for k, v in feeds.items():
        m.set_input(k, v)
    m.run()
    return [m.get_output(i).numpy() for i in range(m.get_num_outputs())]


def _check(op: str, direction: str = "forward", layout: int = 0, lens: list[int] | None = None,
           optional: str = "BHCP", outputs: Sequence[str] = OUTPUTS, seed: int = 0,
           hidden: int = SHAPES["H"], batch: int = SHAPES["B"], **attrs: Any) -> None:  # fmt: skip
    """Compare pytvm with ONNX Runtime on one node; ``optional`` names the optional inputs
    given (B, initial_H, initial_C, P).
    """
    rng = np.random.default_rng(seed)
    t, b, i, h = SHAPES["T"], batch, SHAPES["I"], hidden
    attrs["hidden_size"] = hidden
    g, d = GATES[op], 2 if direction == "bidirectional" else 1
    inits = {
        "W": (rng.standard_normal((d, g * h, i)) * 0.5).astype("float32"),
        "R": (rng.standard_normal((d, g * h, h)) * 0.5).astype("float32"),
    }
    feeds = {"X": rng.standard_normal((t, b, i)).astype("float32")}
    inputs = ["X", "W", "R", "", "", "", "", ""]
    if "B" in optional:
        inits["B"], inputs[3] = rng.standard_normal((d, 2 * g * h)).astype("float32"), "B"
    if lens is not None:
        feeds["L"], inputs[4] = np.array(lens, "int32"), "L"
    if "H" in optional:
        feeds["IH"], inputs[5] = rng.standard_normal((d, b, h)).astype("float32"), "IH"
    if op == "LSTM" and "C" in optional:
        feeds["IC"], inputs[6] = rng.standard_normal((d, b, h)).astype("float32"), "IC"
    if op == "LSTM" and "P" in optional:
        inits["P"], inputs[7] = rng.standard_normal((d, 3 * h)).astype("float32"), "P"
    while inputs[-1] == "":
        inputs.pop()
    names = [o if o in outputs else "" for o in OUTPUTS[: 3 if op == "LSTM" else 2]]
    while names[-1] == "":
        names.pop()
    reference = _model(op, inputs, names, feeds, inits, direction=direction, **attrs)
    want = ort.InferenceSession(reference.SerializeToString()).run(None, feeds)
    if layout:  # the same node batch-major: inputs and outputs transposed
        feeds = {k: v.transpose(1, 0, 2) if v.ndim == 3 else v for k, v in feeds.items()}
        want = [w.transpose(2, 0, 1, 3) if w.ndim == 4 else w.transpose(1, 0, 2) for w in want]
    model = _model(op, inputs, names, feeds, inits, direction=direction, layout=layout, **attrs)
    got = _run_pytvm(model, feeds)
    assert len(got) == len(want)
    for ours, theirs in zip(got, want, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
@pytest.mark.parametrize("layout", [0, 1])
def test_rnn_matches_onnxruntime(op: str, direction: str, layout: int) -> None:
    _check(op, direction, layout)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
@pytest.mark.parametrize("direction", ["forward", "reverse", "bidirectional"])
def test_sequence_lens_pad_y_with_zeros_and_keep_last_state(op: str, direction: str) -> None:
    _check(op, direction, lens=[5, 2, 3], seed=1)
    _check(op, direction, layout=1, lens=[1, 5, 4], seed=2)
    _check(op, direction, lens=[0, 5, 2], seed=3)  # a row of length 0 ends with zero states


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_clip_bounds_gate_inputs(op: str) -> None:
    _check(op, "bidirectional", clip=0.5)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_optional_inputs_and_outputs_omitted(op: str) -> None:
    _check(op, optional="", outputs=("Y_h",))
    _check(op, "reverse", optional="H", outputs=("Y",))


@pytest.mark.parametrize(("op", "before_reset"), [("LSTM", 0), ("GRU", 0), ("GRU", 1), ("RNN", 0)])
def test_wide_hidden_state_runs_column_blocks_and_a_tail(op: str, before_reset: int) -> None:
    if before_reset:
        _check(op, "bidirectional", lens=[5, 3, 4], hidden=70, linear_before_reset=1)
    else:
        _check(op, "bidirectional", lens=[5, 3, 4], hidden=70)


@pytest.mark.parametrize("op", ["LSTM", "GRU", "RNN"])
def test_large_batch_runs_row_chunks_and_a_tail(op: str) -> None:
    lens = [int(n) for n in np.random.default_rng(4).integers(0, SHAPES["T"] + 1, 37)]
    _check(op, "bidirectional", lens=lens, batch=37, hidden=20)


def test_gru_linear_before_reset() -> None:
    _check("GRU", "bidirectional", lens=[1, 5, 4], linear_before_reset=1)


def test_lstm_input_forget() -> None:
    _check("LSTM", "bidirectional", input_forget=1)


def test_lstm_activations_take_alpha_and_beta_in_order() -> None:
    acts = ["HardSigmoid", "LeakyRelu", "Elu", "Sigmoid", "ScaledTanh", "Affine"]
    _check("LSTM", "bidirectional", activations=acts, activation_alpha=[0.3, 0.2, 0.9, 0.7, 1.2],
           activation_beta=[0.4, 0.6, 0.1])  # fmt: skip


@pytest.mark.parametrize(
    ("op", "acts", "alpha"),
    [("GRU", ["Softsign", "Softplus"], []), ("RNN", ["Relu"], []),
     ("RNN", ["ThresholdedRelu"], [0.1])],
)  # fmt: skip
def test_other_activations(op: str, acts: list[str], alpha: list[float]) -> None:
    if alpha:
        _check(op, activations=acts, activation_alpha=alpha)
    else:
        _check(op, activations=acts)


def test_activations_of_one_direction_for_two_are_refused() -> None:
    inits = {"W": np.ones((2, 6, 4), "float32"), "R": np.ones((2, 6, 6), "float32")}
    feeds = {"X": np.ones((5, 3, 4), "float32")}
    model = _model("RNN", ["X", "W", "R"], ["Y"], feeds, inits, activations=["Relu"],
                   direction="bidirectional")  # fmt: skip
    with pytest.raises(OnnxImportError, match=r"activations \['Relu'\]: expected 1 per direction"):
        from_onnx(model)


def test_unknown_activation_names_the_node() -> None:
    inits = {"W": np.ones((1, 6, 4), "float32"), "R": np.ones((1, 6, 6), "float32")}
    feeds = {"X": np.ones((5, 3, 4), "float32")}
    model = _model("RNN", ["X", "W", "R"], ["Y"], feeds, inits, activations=["Swish"])
    with pytest.raises(OnnxImportError, match=r"'RNN_0' \(RNN.*activation.*'Swish'"):
        from_onnx(model)


def _stacked(op: str, steps: int, inp: int, hidden: int) -> onnx.ModelProto:
    """Two bidirectional ``op`` layers, each layer's directions concatenated (as a speech
    encoder's ``nn.LSTM(bidirectional=True, num_layers=2)`` exports).
    """
    rng = np.random.default_rng(0)
    nodes, inits, x, size = [], [], "x", inp
    for k in range(2):
        g = GATES[op] * hidden
        for name, shape in (
            (f"W{k}", (2, g, size)),
            (f"R{k}", (2, g, hidden)),
            (f"B{k}", (2, 2 * g)),
        ):
            value = (rng.standard_normal(shape) / np.sqrt(hidden)).astype("float32")
            inits.append(numpy_helper.from_array(value, name))
        ins = [x, f"W{k}", f"R{k}", f"B{k}"]
        nodes.append(
            helper.make_node(op, ins, [f"y{k}"], hidden_size=hidden, direction="bidirectional")
        )
        nodes.append(helper.make_node("Transpose", [f"y{k}"], [f"t{k}"], perm=[0, 2, 1, 3]))
        inits.append(numpy_helper.from_array(np.array([steps, 1, 2 * hidden], "int64"), f"s{k}"))
        nodes.append(helper.make_node("Reshape", [f"t{k}", f"s{k}"], [f"h{k}"]))
        x, size = f"h{k}", 2 * hidden
    graph_p = helper.make_graph(
        nodes, "stack", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, inp])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [steps, 1, 2 * hidden])], inits,
    )  # fmt: skip
    return helper.make_model(graph_p, opset_imports=[helper.make_opsetid("", 14)])


@pytest.mark.parametrize("op", ["LSTM", "GRU"])
def test_stacked_bidirectional_layers_like_a_speech_encoder(op: str) -> None:
    model = _stacked(op, steps=12, inp=10, hidden=16)
    x = np.random.default_rng(3).standard_normal((12, 1, 10)).astype("float32")
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    (got,) = _run_pytvm(model, {"x": x})
    np.testing.assert_allclose(got, want[0], rtol=1e-4, atol=1e-5)
