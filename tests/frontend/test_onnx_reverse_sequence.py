"""ONNX ReverseSequence with lengths given at run time, against onnxruntime."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay


@pytest.mark.parametrize(("batch_axis", "time_axis"), [(0, 1), (1, 0)])
def test_reverse_sequence_matches_onnxruntime(batch_axis: int, time_axis: int) -> None:
    shape = [3, 4, 2] if batch_axis == 0 else [4, 3, 2]
    node = helper.make_node(
        "ReverseSequence", ["x", "lens"], ["y"], batch_axis=batch_axis, time_axis=time_axis
    )
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, shape),
            helper.make_tensor_value_info("lens", TensorProto.INT64, [3]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    x = np.arange(24, dtype="float32").reshape(shape)
    lens = np.array([4, 1, 3], dtype="int64")
    session = onnxruntime.InferenceSession(model.SerializeToString())
    (expected,) = session.run(None, {"x": x, "lens": lens})
    mod, _ = relay.frontend.from_onnx(model)
    out = relay.create_executor("graph", mod).evaluate()(x, lens).numpy()
    np.testing.assert_array_equal(out, expected)
