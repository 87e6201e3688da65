"""``NegativeLogLikelihoodLoss`` and ``SoftmaxCrossEntropyLoss`` (``frontend/onnx/ops_loss.py``
as ``nn.nll_loss``): every reduction, ``ignore_index`` and class weights compile for llvm and C
and match ONNX Runtime; the reference interpreter agrees.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.frontend.onnx.errors import OnnxImportError
from pytvm.graph.interpreter import interpret
from pytvm.runtime.graph_executor import GraphModule

pytestmark = pytest.mark.needs_cc


def _model(node: Any, inputs: dict[str, np.ndarray], n_out: int) -> onnx.ModelProto:
    g = helper.make_graph(
        [node],
        "loss",
        [
            helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for k, v in inputs.items()
        ],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in node.output[:n_out]],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _check(node: Any, inputs: dict[str, np.ndarray], target: str = "llvm") -> None:
    n_out = len(node.output)
    model = _model(node, inputs, n_out)
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    want = sess.run(None, inputs)
    mod, params = from_onnx(model)
    lib = graph.build(mod, target=target, params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    ref = interpret(mod["main"], {**inputs, **params})
    refs = list(ref) if isinstance(ref, tuple) else [ref]
    for i, w in enumerate(want):
        np.testing.assert_allclose(m.get_output(i).numpy(), w, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(refs[i], w, rtol=1e-5, atol=1e-5)


def _inputs(shape: tuple[int, ...], weights: bool, ignore: int | None) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype("float32")
    t = rng.integers(0, shape[1], (shape[0], *shape[2:])).astype("int64")
    if ignore is not None:
        t.reshape(-1)[::3] = ignore
    out = {"x": x, "t": t}
    if weights:
        out["w"] = rng.uniform(0.2, 1.0, shape[1]).astype("float32")
    return out


@pytest.mark.parametrize("reduction", ["none", "sum", "mean"])
@pytest.mark.parametrize("weights", [False, True])
def test_nll_loss_matches_onnxruntime(reduction: str, weights: bool) -> None:
    inputs = _inputs((3, 5, 2, 2), weights, ignore=1)
    names = list(inputs)
    node = helper.make_node(
        "NegativeLogLikelihoodLoss", names, ["y"], reduction=reduction, ignore_index=1
    )
    _check(node, inputs)


def test_nll_loss_negative_ignore_index_is_never_read_and_compiles_to_c() -> None:
    inputs = _inputs((4, 3), weights=True, ignore=-1)
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t", "w"], ["y"], ignore_index=-1)
    _check(node, inputs, target="c")


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_softmax_cross_entropy_with_log_prob_matches_onnxruntime(reduction: str) -> None:
    inputs = _inputs((2, 4, 3), weights=True, ignore=2)
    node = helper.make_node(
        "SoftmaxCrossEntropyLoss",
        ["x", "t", "w"],
        ["y", "log_prob"],
        reduction=reduction,
        ignore_index=2,
    )
    _check(node, inputs)


def test_softmax_cross_entropy_without_weights_sums() -> None:
    inputs = _inputs((3, 4), weights=False, ignore=None)
    node = helper.make_node("SoftmaxCrossEntropyLoss", ["x", "t"], ["y"], reduction="sum")
    _check(node, inputs)


def test_nll_loss_refuses_targets_of_the_wrong_shape() -> None:
    inputs = {"x": np.zeros((3, 4), "float32"), "t": np.zeros((4,), "int64")}
    node = helper.make_node("NegativeLogLikelihoodLoss", ["x", "t"], ["y"])
    with pytest.raises(OnnxImportError, match="targets have shape"):
        from_onnx(_model(node, inputs, 1))
