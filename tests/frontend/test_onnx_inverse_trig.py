"""ONNX Asin, Acos and Atan against ONNX Runtime, compiled for llvm and C (vectorized)."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import pytvm as tvm
from pytvm import relay


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("op", ["Asin", "Acos", "Atan"])
def test_inverse_trig_matches_onnxruntime(op: str, target: str) -> None:
    graph = helper.make_graph(
        [helper.make_node(op, ["x"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 37])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 37])],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.random.default_rng(0).uniform(-0.99, 0.99, (4, 37)).astype("float32")
    x[0, :3] = [-1.0, 0.0, 1.0]
    if op == "Atan":
        x[1] *= 1e3
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    mod, _ = relay.frontend.from_onnx(model, {"x": x.shape})
    run = relay.create_executor("graph", mod, tvm.cpu(), target).evaluate()
    np.testing.assert_allclose(run(x).numpy(), want, rtol=1e-6, atol=1e-6)
