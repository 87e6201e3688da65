"""Three-dimensional ``Conv``, ``ConvTranspose``, ``MaxPool``, ``AveragePool`` and ``LpPool``
(run as 2-d operators, ``frontend/onnx/ops_volume.py``): a small 3-d network with groups,
strides, dilations, asymmetric padding and ``ceil_mode`` compiles and matches ONNX Runtime;
transposed convolutions compile and match it; each pooling alone matches it under the
reference interpreter.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.graph.interpreter import interpret
from pytvm.runtime.graph_executor import GraphModule

_SHAPE = (1, 4, 7, 9, 10)


def _model(nodes: list[Any], initializers: list[Any]) -> onnx.ModelProto:
    g = helper.make_graph(
        nodes,
        "volume",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(_SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        initializers,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])


def _ort(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (out,) = sess.run(None, {"x": x})
    return np.asarray(out)


def _network() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = numpy_helper.from_array(rng.standard_normal((6, 2, 3, 2, 3)).astype("float32"), "w")
    b = numpy_helper.from_array(rng.standard_normal((6,)).astype("float32"), "b")
    nodes = [
        helper.make_node(
            "Conv",
            ["x", "w", "b"],
            ["c"],
            group=2,
            strides=[1, 2, 1],
            dilations=[2, 1, 1],
            pads=[2, 0, 1, 1, 1, 1],
        ),
        helper.make_node("Relu", ["c"], ["r"]),
        helper.make_node(
            "MaxPool", ["r"], ["m"], kernel_shape=[2, 3, 2], strides=[2, 2, 1],
            pads=[1, 1, 0, 0, 1, 1], ceil_mode=1,
        ),
        helper.make_node(
            "AveragePool", ["m"], ["y"], kernel_shape=[2, 2, 2], pads=[1, 0, 1, 0, 1, 1],
            count_include_pad=1,
        ),
    ]  # fmt: skip
    return _model(nodes, [w, b])


def test_a_3d_network_compiles_and_matches_onnxruntime() -> None:
    model = _network()
    x = np.random.default_rng(1).standard_normal(_SHAPE).astype("float32")
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    want = _ort(model, x)
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-4)
    assert "nn.conv2d" in str(mod["main"])  # the 3-d convolution runs as a 2-d one


@pytest.mark.parametrize(
    "node",
    [
        helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3, 3], strides=[2, 2, 2],
                         dilations=[1, 2, 1], pads=[1, 1, 1, 1, 1, 1]),
        helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[3, 2, 3], strides=[2, 1, 2],
                         pads=[1, 0, 1, 1, 1, 0], ceil_mode=1),
        helper.make_node("LpPool", ["x"], ["y"], kernel_shape=[2, 3, 2], p=2,
                         pads=[0, 1, 1, 0, 1, 1]),
        helper.make_node("GlobalAveragePool", ["x"], ["y"]),
    ],
    ids=["max", "avg_ceil", "lp", "global_avg"],
)  # fmt: skip
def test_3d_pooling_matches_onnxruntime(node: Any) -> None:
    model = _model([node], [])
    x = np.random.default_rng(2).standard_normal(_SHAPE).astype("float32")
    mod, params = from_onnx(model)
    got = interpret(mod["main"], {"x": x, **params})
    np.testing.assert_allclose(np.asarray(got), _ort(model, x), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    "attrs",
    [
        {"strides": [2, 1, 2], "pads": [1, 0, 1, 0, 1, 1], "output_padding": [1, 0, 1]},
        {"group": 2, "dilations": [2, 1, 1], "strides": [1, 2, 1], "pads": [0, 1, 0, 1, 0, 0]},
        {"strides": [3, 2, 2], "auto_pad": "SAME_UPPER"},
    ],
    ids=["strided_output_padding", "groups_dilated", "same_upper"],
)
def test_3d_transposed_convolution_compiles_and_matches_onnxruntime(attrs: dict[str, Any]) -> None:
    rng = np.random.default_rng(3)
    w = numpy_helper.from_array(rng.standard_normal((4, 3, 3, 2, 3)).astype("float32"), "w")
    channels = 3 * attrs.get("group", 1)
    b = numpy_helper.from_array(rng.standard_normal((channels,)).astype("float32"), "b")
    node = helper.make_node("ConvTranspose", ["x", "w", "b"], ["y"], **attrs)
    model = _model([node], [w, b])
    x = rng.standard_normal(_SHAPE).astype("float32")
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), _ort(model, x), rtol=1e-4, atol=1e-4)
