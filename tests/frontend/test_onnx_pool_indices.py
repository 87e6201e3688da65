"""``MaxPool``'s ``Indices`` output (``nn.max_pool2d_with_argmax``): row- and column-major
indices, padding, dilation, ``ceil_mode`` and 1-d inputs, compiled and run by the graph
executor, match ONNX Runtime exactly; a 3-d one is refused with the node named.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.runtime.graph_executor import GraphModule


def _model(shape: tuple[int, ...], **attrs: Any) -> Any:
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], name="pool", **attrs)
    g = helper.make_graph(
        [node],
        "pool",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
        [
            helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
            helper.make_tensor_value_info("i", TensorProto.INT64, None),
        ],
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 12)])


@pytest.mark.parametrize(
    ("shape", "attrs"),
    [
        ((2, 3, 9, 8), {"kernel_shape": [3, 2], "strides": [2, 2], "pads": [1, 0, 1, 1]}),
        ((1, 2, 8, 9), {"kernel_shape": [2, 3], "storage_order": 1, "dilations": [2, 1]}),
        ((1, 4, 7, 7), {"kernel_shape": [3, 3], "strides": [2, 2], "ceil_mode": 1}),
        ((2, 3, 11), {"kernel_shape": [3], "strides": [2], "pads": [1, 1]}),
    ],
    ids=["padded", "column_major_dilated", "ceil_mode", "one_d"],
)
def test_indices_match_onnxruntime(shape: tuple[int, ...], attrs: dict[str, Any]) -> None:
    model = _model(shape, **attrs)
    x = np.random.default_rng(0).standard_normal(shape).astype("float32")
    x.reshape(-1)[::7] = 0.5  # ties: the window's first maximum wins
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    want_y, want_i = sess.run(None, {"x": x})
    np.testing.assert_array_equal(m.get_output(0).numpy(), want_y)
    np.testing.assert_array_equal(m.get_output(1).numpy(), want_i)


def test_indices_of_a_3d_max_pool_are_refused_with_the_node_named() -> None:
    model = _model((1, 1, 4, 4, 4), kernel_shape=[2, 2, 2])
    with pytest.raises(Exception, match=r"'pool' \(MaxPool.*Indices output of a 3-d MaxPool"):
        from_onnx(model)
