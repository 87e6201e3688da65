"""ONNX ``ConvTranspose`` built for the CPU (lowered to a convolution and a pixel shuffle by
``LegalizeConvTranspose``) matches ONNX Runtime: the kernel/stride forms decoders and text
detectors use, strides of 3, groups, ``output_padding``, ``output_shape``, ``auto_pad``,
odd sizes, 1-d and 3-d inputs, and a weight computed at run time.
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
from pytvm.runtime.graph_executor import GraphModule

F32 = "float32"


def _rand(*shape: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).standard_normal(shape).astype(F32)


def _model(
    xshape: tuple[int, ...], wshape: tuple[int, ...], attrs: dict[str, Any], weight_input: bool
) -> onnx.ModelProto:
    f = wshape[1] * int(attrs.get("group", 1))
    inits = [numpy_helper.from_array(_rand(f, seed=2), "b")]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(xshape))]
    if weight_input:
        inputs.append(helper.make_tensor_value_info("w", TensorProto.FLOAT, list(wshape)))
    else:
        inits.append(numpy_helper.from_array(_rand(*wshape, seed=1), "w"))
    nodes = [
        helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], **attrs),
        helper.make_node("Relu", ["t"], ["y"]),
    ]
    g = helper.make_graph(
        nodes,
        "deconv",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])


def _check(
    xshape: tuple[int, ...],
    wshape: tuple[int, ...],
    attrs: dict[str, Any],
    weight_input: bool = False,
) -> None:
    model = _model(xshape, wshape, attrs, weight_input)
    feeds = {"x": _rand(*xshape, seed=3)}
    if weight_input:
        feeds["w"] = _rand(*wshape, seed=1)
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (expected,) = sess.run(None, feeds)
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    for name, value in feeds.items():
        m.set_input(name, value)
    m.run()
    got = m.get_output(0).numpy()
    assert got.shape == expected.shape
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-4)


K2S2 = {"kernel_shape": [2, 2], "strides": [2, 2]}
K4S2P1 = {"kernel_shape": [4, 4], "strides": [2, 2], "pads": [1, 1, 1, 1]}
K3S2P1OP1 = {
    "kernel_shape": [3, 3],
    "strides": [2, 2],
    "pads": [1, 1, 1, 1],
    "output_padding": [1, 1],
}


@pytest.mark.parametrize(
    ("xshape", "wshape", "attrs"),
    [
        ((1, 8, 10, 10), (8, 8, 2, 2), K2S2),  # DBNet's head
        ((1, 6, 9, 11), (6, 5, 4, 4), K4S2P1),  # odd sizes
        ((2, 16, 7, 7), (16, 8, 3, 3), K3S2P1OP1),  # a UNet decoder's
        ((1, 4, 5, 6), (4, 3, 3, 3), {"strides": [3, 3], "pads": [1, 0, 0, 2]}),
        ((1, 4, 5, 5), (4, 3, 5, 5), {"strides": [3, 3], "output_padding": [2, 1]}),
        ((1, 6, 6, 6), (6, 2, 4, 4), {**K4S2P1, "group": 3}),
        ((1, 8, 6, 6), (8, 1, 4, 4), {**K4S2P1, "group": 8}),  # depthwise
        ((1, 4, 6, 6), (4, 3, 3, 3), {"strides": [2, 2], "dilations": [2, 2]}),
        ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [2, 2], "output_shape": [11, 10]}),
        ((1, 4, 5, 5), (4, 3, 3, 3), {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        ((1, 4, 5, 5), (4, 3, 4, 4), {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
        ((1, 4, 17), (4, 6, 4), {"strides": [2], "pads": [1, 1]}),  # 1-d
        ((1, 4, 3, 4, 5), (4, 2, 2, 2, 2), {"strides": [2, 2, 2]}),  # 3-d
        ((1, 4, 3, 4, 5), (4, 3, 3, 4, 4), {"strides": [2, 2, 2], "pads": [1, 1, 1, 1, 1, 1]}),
    ],
)
def test_conv_transpose_matches_onnxruntime(
    xshape: tuple[int, ...], wshape: tuple[int, ...], attrs: dict[str, Any]
) -> None:
    _check(xshape, wshape, attrs)


def test_conv_transpose_of_a_run_time_weight_matches_onnxruntime() -> None:
    _check((1, 6, 7, 7), (6, 4, 3, 3), K3S2P1OP1, weight_input=True)
