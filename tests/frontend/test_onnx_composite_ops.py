"""ONNX operators the importer builds from several graph operators (quantization, group
normalization, one-hot, Lp pooling, ...) match ONNX Runtime at the opsets where their inputs
or attributes differ.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from pytvm.frontend import from_onnx
from pytvm.graph.interpreter import interpret

RNG = np.random.default_rng(8)
F = TensorProto.FLOAT


def _check(
    nodes: list[Any],
    inputs: dict[str, np.ndarray],
    outputs: list[str],
    opset: int,
    inits: dict[str, np.ndarray],
    out_type: int = F,
) -> None:
    graph = helper.make_graph(
        nodes,
        "g",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
            for n, v in inputs.items()
        ],
        [helper.make_tensor_value_info(o, out_type, None) for o in outputs],
        initializer=[numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    mod, params = from_onnx(model)
    got = interpret(mod["main"], {**inputs, **params})
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = sess.run(None, inputs)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_quantize_dequantize_around_a_convolution_per_channel() -> None:
    x = RNG.standard_normal((1, 3, 6, 6)).astype("float32")
    w = RNG.integers(-100, 100, (4, 3, 3, 3)).astype("int8")
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w", "ws"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd"], ["y"], pads=[1, 1, 1, 1]),
    ]
    inits = {
        "xs": np.array(0.02, "float32"),
        "xz": np.array(128, "uint8"),
        "w": w,
        "ws": RNG.uniform(0.001, 0.01, 4).astype("float32"),
    }
    _check(nodes, {"x": x}, ["y"], 13, inits)


@pytest.mark.parametrize("opset", [18, 21])
def test_group_normalization_scale_per_group_then_per_channel(opset: int) -> None:
    x = RNG.standard_normal((2, 6, 3, 4)).astype("float32")
    size = 3 if opset == 18 else 6
    inits = {
        "s": RNG.standard_normal(size).astype("float32"),
        "b": RNG.standard_normal(size).astype("float32"),
    }
    node = helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=3)
    _check([node], {"x": x}, ["y"], opset, inits)


def test_one_hot_with_negative_indices_on_a_middle_axis() -> None:
    idx = np.array([[0, -1, 3], [2, 1, -4]], "int64")
    node = helper.make_node("OneHot", ["i", "depth", "values"], ["y"], axis=1)
    inits = {"depth": np.array(4, "int64"), "values": np.array([-1.0, 2.5], "float32")}
    _check([node], {"i": idx}, ["y"], 11, inits)


@pytest.mark.parametrize("opset", [11, 18])
def test_lp_pool_with_padding(opset: int) -> None:
    x = RNG.standard_normal((1, 2, 7, 6)).astype("float32")
    node = helper.make_node(
        "LpPool", ["x"], ["y"], kernel_shape=[3, 2], strides=[2, 2], pads=[1, 0, 1, 1], p=3
    )
    _check([node], {"x": x}, ["y"], opset, {})


def test_trilu_cumsum_and_gather_elements() -> None:
    x = RNG.standard_normal((2, 4, 5)).astype("float32")
    nodes = [
        helper.make_node("Trilu", ["x", "k"], ["t"], upper=0),
        helper.make_node("CumSum", ["t", "axis"], ["c"], reverse=1),
        helper.make_node("GatherElements", ["c", "idx"], ["y"], axis=2),
    ]
    inits = {
        "k": np.array(1, "int64"),
        "axis": np.array(-1, "int64"),
        "idx": RNG.integers(-5, 5, (2, 4, 3)).astype("int64"),
    }
    _check(nodes, {"x": x}, ["y"], 14, inits)


def test_mean_variance_and_lp_normalization() -> None:
    x = RNG.standard_normal((2, 3, 4, 5)).astype("float32")
    nodes = [
        helper.make_node("MeanVarianceNormalization", ["x"], ["m"]),
        helper.make_node("LpNormalization", ["m"], ["y"], axis=1, p=1),
    ]
    _check(nodes, {"x": x}, ["y"], 13, {})
