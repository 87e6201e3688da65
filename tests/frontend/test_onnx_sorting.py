"""ONNX TopK: largest and smallest along any axis, ties by the lower index, compiled for llvm
and C, against ONNX Runtime.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError


def _model(shape: list[int], k: int, axis: int, largest: int) -> Any:
    out = list(shape)
    out[axis] = k
    graph = helper.make_graph(
        [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=axis, largest=largest)],
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [
            helper.make_tensor_value_info("v", TensorProto.FLOAT, out),
            helper.make_tensor_value_info("i", TensorProto.INT64, out),
        ],
        initializer=[numpy_helper.from_array(np.array([k], dtype="int64"), "k")],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize(("axis", "largest"), [(-1, 1), (0, 0), (1, 1)])
def test_topk_matches_onnxruntime(axis: int, largest: int, target: str) -> None:
    x = np.random.default_rng(0).integers(0, 4, (3, 5, 4)).astype("float32")  # many ties
    model = _model([3, 5, 4], 3, axis, largest)
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod, target=target).evaluate()(x, **params)
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {"x": x})
    for g, e in zip(got, expected, strict=True):
        np.testing.assert_array_equal(g.numpy(), e)


def test_topk_larger_than_the_axis_is_refused() -> None:
    with pytest.raises(OnnxImportError, match="K=9"):
        relay.frontend.from_onnx(_model([3, 5, 4], 9, -1, 1))
