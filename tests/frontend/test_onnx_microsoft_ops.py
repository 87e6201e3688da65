"""ONNX Runtime's contrib operators (com.microsoft): the Gelu family against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import UnsupportedOperatorsError


def _model(op: str, with_bias: bool) -> object:
    inputs = ["x", "bias"] if with_bias else ["x"]
    node = helper.make_node(op, inputs, ["y"], domain="com.microsoft")
    infos = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 5])]
    if with_bias:
        infos.append(helper.make_tensor_value_info("bias", TensorProto.FLOAT, [5]))
    graph = helper.make_graph(
        [node], "g", infos, [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 5])]
    )
    return helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]
    )


@pytest.mark.parametrize(
    ("op", "with_bias"),
    [("Gelu", False), ("FastGelu", False), ("FastGelu", True), ("BiasGelu", True)],
)
def test_gelu_family_matches_onnxruntime(op: str, with_bias: bool) -> None:
    model = _model(op, with_bias)
    rng = np.random.default_rng(0)
    feeds = {"x": rng.uniform(-4, 4, (2, 5)).astype("float32")}
    if with_bias:
        feeds["bias"] = rng.uniform(-1, 1, 5).astype("float32")
    session = onnxruntime.InferenceSession(model.SerializeToString())  # type: ignore[attr-defined]
    (expected,) = session.run(None, feeds)
    mod, params = relay.frontend.from_onnx(model)
    out = relay.create_executor("graph", mod).evaluate()(**feeds, **params).numpy()
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_other_contrib_operators_are_listed_as_unsupported() -> None:
    node = helper.make_node("Attention", ["x"], ["y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])],
    )
    with pytest.raises(UnsupportedOperatorsError, match=r"com\.microsoft\.Attention"):
        relay.frontend.from_onnx(helper.make_model(graph))
