"""``CenterCropPad`` and ``GlobalLpPool`` (``frontend/onnx/ops_shape_fit.py``) match ONNX
Runtime: crops and pads of odd and even differences on chosen axes, Lp norms for p = 1, 2, 3.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.graph.interpreter import interpret
from pytvm.runtime.graph_executor import GraphModule

pytestmark = pytest.mark.needs_cc


def _check(node: Any, x: np.ndarray, inits: dict[str, np.ndarray], compile_c: bool) -> None:
    g = helper.make_graph(
        [node],
        "fit",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 18)])
    model.ir_version = 8
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = sess.run(None, {"x": x})
    mod, params = from_onnx(model)
    np.testing.assert_allclose(interpret(mod["main"], {"x": x, **params}), want, rtol=1e-5)
    if compile_c:
        m = GraphModule(graph.build(mod, target="c", params=params)["default"](pytvm.cpu()))
        m.set_input("x", x)
        m.run()
        np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-5)


@pytest.mark.parametrize(
    ("shape", "axes"),
    [((4, 9, 2), None), ((7, 3, 6), [0, -1]), ((2, 5, 5), [2, 1])],
)
def test_center_crop_pad_matches_onnxruntime(shape: tuple[int, ...], axes: Any) -> None:
    x = np.random.default_rng(0).standard_normal((5, 6, 4)).astype("float32")
    attrs = {} if axes is None else {"axes": axes}
    node = helper.make_node("CenterCropPad", ["x", "s"], ["y"], **attrs)
    wanted = np.asarray(shape if axes is None else shape[: len(axes)], "int64")
    _check(node, x, {"s": wanted}, compile_c=axes is None)


@pytest.mark.parametrize("p", [1, 2, 3])
def test_global_lp_pool_matches_onnxruntime(p: int) -> None:
    x = np.random.default_rng(1).standard_normal((2, 3, 4, 5)).astype("float32")
    _check(helper.make_node("GlobalLpPool", ["x"], ["y"], p=p), x, {}, compile_c=p == 3)
