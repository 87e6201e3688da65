"""TVM's relay flow, written as TVM users wrote it, runs with ``import pytvm as tvm``."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest

import pytvm as tvm
from pytvm import relay
from pytvm.contrib import graph_executor


def test_relay_frontend_build_and_graph_executor(reference_models: dict[str, Path]) -> None:
    path = reference_models["cnn_small"]
    model = onnx.load(str(path))
    name = model.graph.input[0].name
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    mod, params = relay.frontend.from_onnx(model, shape={name: x.shape})
    mod = relay.transform.FoldConstant()(mod)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu(0)))
    m.set_input(name, tvm.nd.array(x))
    m.run()
    sess = onnxruntime.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    (expected,) = sess.run(None, {name: x})
    np.testing.assert_allclose(m.get_output(0).numpy(), expected, rtol=1e-4, atol=1e-4)


def test_relay_graph_built_by_hand() -> None:
    x = relay.var("x", shape=(2, 3))
    y = relay.Call("nn.relu", [x])
    mod = relay.IRModule.from_expr(relay.Function([x], y))
    lib = relay.build(mod, target="llvm")
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", np.array([[-1, 2, -3], [4, -5, 6]], "float32"))
    m.run()
    np.testing.assert_array_equal(m.get_output(0).numpy(), [[0, 2, 0], [4, 0, 6]])


def test_relay_build_refuses_unknown_executors_and_aot_on_the_cpp_runtime() -> None:
    x = relay.var("x", shape=(2,))
    mod = relay.IRModule.from_expr(relay.Function([x], relay.Call("exp", [x])))
    with pytest.raises(ValueError, match=r"executor 'vm' is not registered; choose one of"):
        relay.build(mod, target="llvm", executor="vm")
    with pytest.raises(ValueError, match=r"use Runtime\('crt'\), got Runtime\('cpp'"):
        relay.build(mod, target="c", executor="aot")
