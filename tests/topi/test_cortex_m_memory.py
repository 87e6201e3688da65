"""RAM on a one-lane target (``c -mcpu=cortex-m4``): convolutions (direct, strided, dilated,
grouped, depthwise, pointwise) read their padding through bounds guards and pooling keeps its
sums in registers, so no kernel needs scratch memory (no ``pad_temp`` copy); the interior of
a padded convolution runs without checks; the C matches ONNX Runtime on this machine; the AOT
workspace of a sequential model is the most bytes its intermediates hold at once; a host
target keeps its schedules.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm.driver.source_build import compile_for_host
from pytvm.frontend import from_onnx
from pytvm.graph import build_aot
from pytvm.runtime.graph_executor import GraphExecutorFactory, GraphModule
from pytvm.runtime.source_module import SourceModule
from pytvm.target import Target
from pytvm.topi.x86.strategy import OpWorkload, select

pytestmark = pytest.mark.needs_cc

M4 = "c -mcpu=cortex-m4"

#: name -> (input shape, node op, attributes, weight shape or None)
CASES: dict[str, tuple[tuple[int, ...], str, dict[str, Any], tuple[int, ...] | None]] = {
    "direct_3x3": ((1, 3, 9, 11), "Conv", {"pads": [1, 1, 1, 1]}, (4, 3, 3, 3)),
    "strided_asymmetric": (
        (1, 2, 10, 9),
        "Conv",
        {"pads": [0, 1, 2, 1], "strides": [2, 2]},
        (5, 2, 3, 3),
    ),
    "dilated": ((1, 2, 12, 12), "Conv", {"pads": [2, 2, 2, 2], "dilations": [2, 2]}, (3, 2, 3, 3)),
    "grouped": ((1, 4, 8, 8), "Conv", {"pads": [1, 1, 1, 1], "group": 2}, (6, 2, 3, 3)),
    "depthwise_multiplier": (
        (1, 3, 7, 9),
        "Conv",
        {"pads": [1, 1, 1, 1], "group": 3},
        (6, 1, 3, 3),
    ),
    "pointwise": ((1, 8, 5, 5), "Conv", {}, (6, 8, 1, 1)),
    "max_pool": ((1, 3, 9, 9), "MaxPool", {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}, None),
    "avg_pool": (
        (1, 3, 8, 8),
        "AveragePool",
        {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1], "strides": [2, 2]},
        None,
    ),
    "global_avg_pool": ((1, 5, 6, 6), "GlobalAveragePool", {}, None),
}


def _model(name: str) -> onnx.ModelProto:
    shape, op, attrs, wshape = CASES[name]
    rng = np.random.default_rng(len(name))
    inits, inputs = [], ["input"]
    if wshape is not None:
        weight = rng.standard_normal(wshape).astype("float32")
        inits.append(numpy_helper.from_array(weight, "weight"))
        inputs.append("weight")
        if "kernel_shape" not in attrs:
            attrs = {**attrs, "kernel_shape": list(wshape[2:])}
    nodes = [helper.make_node(op, inputs, ["y"], **attrs), helper.make_node("Relu", ["y"], ["out"])]
    graph = helper.make_graph(
        nodes,
        name,
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, list(shape))],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("name", sorted(CASES))
def test_one_lane_kernels_need_no_scratch_and_match_onnxruntime(name: str) -> None:
    model = _model(name)
    mod, params = from_onnx(model)
    factory = build_aot(mod, M4, params)
    assert [k.scratch_bytes for k in factory.kernels] == [0] * len(factory.kernels)
    assert "pad_temp" not in factory.lib.get_source()
    graph = pytvm.graph.build(mod, target=Target(M4 + " --system-lib"), params=params)
    assert isinstance(graph.lib, SourceModule)
    host = GraphExecutorFactory(graph.graph_json, graph.params, compile_for_host(graph.lib))
    x = np.random.default_rng(7).standard_normal(CASES[name][0]).astype("float32")
    gm = GraphModule(host["default"](pytvm.cpu()))
    gm.set_input("input", x)
    gm.run()
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = sess.run(None, {"input": x})
    np.testing.assert_allclose(gm.get_output(0).numpy(), want, rtol=1e-5, atol=1e-5)


def test_padded_convolution_interior_runs_without_checks() -> None:
    mod, params = from_onnx(_model("direct_3x3"))
    source = build_aot(mod, M4, params).lib.sources["default_lib0.c"]
    products = [line for line in source.splitlines() if re.search(r"\(\(float\*\)p0\)\[", line)]
    assert products, "no products read the input"
    assert any("?" not in line for line in products), "every read of the input is guarded"
    assert "?" in source, "the border reads lost their guards"


def _conv_workload(groups: int) -> OpWorkload:
    attrs = {"strides": (1, 1), "padding": (1, 1, 1, 1), "dilation": (1, 1), "groups": groups}
    return OpWorkload(
        "nn.conv2d", (1, 8, 9, 9), (8, 8 // groups, 3, 3), "float32", "float32", attrs
    )


def test_guarded_convolution_is_chosen_only_on_one_lane_targets() -> None:
    with Target(M4):
        assert {select("nn.conv2d", _conv_workload(g)).name for g in (1, 2, 8)} == {
            "conv2d_nchw_guarded"
        }
    with Target("c"):
        assert select("nn.conv2d", _conv_workload(1)).name != "conv2d_nchw_guarded"
        assert select("nn.conv2d", _conv_workload(8)).name != "conv2d_nchw_guarded"


def test_sequential_model_workspace_is_its_largest_live_pair(
    reference_models: dict[str, Path],
) -> None:
    mod, params = from_onnx(onnx.load(str(reference_models["cnn_small"])))
    factory = build_aot(mod, M4, params)
    assert all(b.kind == "intermediate" for b in factory.memory_plan)
    live: dict[int, int] = {}
    for b in factory.memory_plan:
        for step in range(b.first_step, b.last_step + 1):
            live[step] = live.get(step, 0) + b.nbytes
    assert factory.workspace_bytes == max(live.values())
