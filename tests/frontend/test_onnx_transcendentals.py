"""ONNX's transcendental activations through ``graph.build`` (float32 ``exp``/``log``/``tanh``/
``pow`` as vector arithmetic in the code generators) match onnxruntime, and a constant exponent
of 2 or 3 becomes products.
"""

from __future__ import annotations

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.runtime.graph_executor import GraphModule

SHAPE = [1, 8, 7, 9]  # a last axis that is not a multiple of the vector lanes


def _model(
    nodes: list[onnx.NodeProto], inits: list[onnx.TensorProto], opset: int
) -> onnx.ModelProto:
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, SHAPE)
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, SHAPE)
    g = helper.make_graph(nodes, "g", [x], [y], inits)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _run(model: onnx.ModelProto, x: np.ndarray, target: str) -> np.ndarray:
    mod, params = from_onnx(model)
    lib = graph.build(mod, target=target, params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    return m.get_output(0).numpy()


def _compare(model: onnx.ModelProto, x: np.ndarray, target: str, atol: float = 2e-7) -> None:
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})[0]
    np.testing.assert_allclose(_run(model, x, target), want, rtol=2e-6, atol=atol)


UNARY = ["Tanh", "Exp", "Log", "Softplus", "Mish", "Elu", "Selu", "HardSwish"]


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("op", UNARY)
def test_activation_matches_onnxruntime(op: str, target: str) -> None:
    rng = np.random.default_rng(0)
    x = (rng.standard_normal(SHAPE) * 4).astype(np.float32)
    if op == "Log":
        x = np.abs(x) + np.float32(1e-3)
    # softplus is imported as max(x, 0) + log(1 + exp(-|x|)): 1 + exp(-|x|) is rounded
    atol = 3e-6 if op in ("Softplus", "Mish") else 2e-7
    _compare(_model([helper.make_node(op, ["x"], ["y"])], [], 18), x, target, atol)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_sigmoid_and_silu_are_within_a_few_ulp(target: str) -> None:
    """Against float64 (onnxruntime's logistic is within about 1e-7 absolute, not relative)."""
    x = (np.random.default_rng(1).standard_normal(SHAPE) * 8).astype(np.float32)
    wide = x.astype(np.float64)
    sigmoid = 1 / (1 + np.exp(-wide))
    got = _run(_model([helper.make_node("Sigmoid", ["x"], ["y"])], [], 18), x, target)
    np.testing.assert_allclose(got, sigmoid, rtol=4e-7, atol=0)
    silu = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])]
    np.testing.assert_allclose(_run(_model(silu, [], 18), x, target), wide * sigmoid, rtol=5e-7)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_matches_onnxruntime(approximate: str) -> None:
    x = (np.random.default_rng(1).standard_normal(SHAPE) * 4).astype(np.float32)
    gelu = helper.make_node("Gelu", ["x"], ["y"], approximate=approximate)
    # 0.5 x (1 + erf(x / sqrt 2)) cancels for negative x: erf's 4e-7 (tanh's 1 ulp) times |x|
    _compare(_model([gelu], [], 20), x, "llvm", atol=2e-6)


@pytest.mark.parametrize("exponent", [2.0, 3.0, 0.5, -1.5])
def test_pow_with_a_constant_exponent(exponent: float) -> None:
    x = np.random.default_rng(2).uniform(0.01, 4, SHAPE).astype(np.float32)
    e = numpy_helper.from_array(np.array(exponent, np.float32), "e")
    model = _model([helper.make_node("Pow", ["x", "e"], ["y"])], [e], 18)
    _compare(model, x, "llvm")
    text = str(from_onnx(model)[0])
    assert ("power" in text) == (exponent not in (2.0, 3.0))
