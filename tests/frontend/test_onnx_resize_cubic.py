"""ONNX Resize with mode="cubic" (cubic_coeff_a, exclude_outside, the coordinate modes) against
ONNX Runtime: compiled for llvm and C, and through the graph IR's numpy reference.
"""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper

import pytvm as tvm
from pytvm import relay


@pytest.mark.parametrize("coord", ["half_pixel", "align_corners", "asymmetric"])
@pytest.mark.parametrize(("alpha", "exclude"), [(-0.75, 0), (-0.5, 1)])
def test_cubic_resize_matches_onnxruntime(coord: str, alpha: float, exclude: int) -> None:
    out = [1, 2, 9, 4]
    node = helper.make_node(
        "Resize", ["x", "", "", "sizes"], ["y"], mode="cubic",
        coordinate_transformation_mode=coord, cubic_coeff_a=alpha, exclude_outside=exclude,
    )  # fmt: skip
    graph = helper.make_graph(
        [node], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 5, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        [helper.make_tensor("sizes", TensorProto.INT64, [4], out)],
    )  # fmt: skip
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    x = np.random.default_rng(1).standard_normal((1, 2, 5, 6)).astype("float32")
    want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
    mod, _ = relay.frontend.from_onnx(model, {"x": x.shape})
    for kind, target in [("graph", "llvm"), ("graph", "c"), ("debug", "llvm")]:
        got = relay.create_executor(kind, mod, tvm.cpu(), target).evaluate()(x).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f"{kind} {target}")
