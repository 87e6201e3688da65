"""``GridSample`` and ``AffineGrid`` (``frontend/onnx/ops_grid.py``) compile and match ONNX
Runtime in 2-d and 3-d, with points outside the image, for every mode and padding mode; the
reference interpreter agrees.
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


def _check(
    node: Any,
    inputs: dict[str, np.ndarray],
    inits: dict[str, np.ndarray],
    target: str | None = "llvm",
) -> None:
    """ONNX Runtime's output of ``node``: the interpreter's, and (unless ``target`` is None)
    the compiled model's.
    """
    g = helper.make_graph(
        [node],
        "grid",
        [helper.make_tensor_value_info(k, TensorProto.FLOAT, v.shape) for k, v in inputs.items()],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()],
    )
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    (want,) = sess.run(None, inputs)
    mod, params = from_onnx(model)
    ref = interpret(mod["main"], {**inputs, **params})
    np.testing.assert_allclose(ref, want, rtol=1e-5, atol=1e-5)
    if target is None:
        return
    lib = graph.build(mod, target=target, params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    for k, v in inputs.items():
        m.set_input(k, v)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("mode", ["nearest", "linear", "cubic"])
@pytest.mark.parametrize("padding", ["zeros", "border", "reflection"])
@pytest.mark.parametrize("align", [0, 1])
def test_grid_sample_2d_matches_onnxruntime(mode: str, padding: str, align: int) -> None:
    """Compiled for one align_corners per mode and padding (the interpreter checks both)."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 3, 4, 5)).astype("float32")
    grid = rng.uniform(-2.5, 2.5, (2, 6, 3, 2)).astype("float32")
    node = helper.make_node(
        "GridSample", ["x", "g"], ["y"], mode=mode, padding_mode=padding, align_corners=align
    )
    _check(node, {"x": x, "g": grid}, {}, "llvm" if align == (mode == "cubic") else None)


@pytest.mark.parametrize("mode", ["nearest", "linear"])
def test_grid_sample_3d_matches_onnxruntime(mode: str) -> None:
    rng = np.random.default_rng(2)
    x = rng.standard_normal((1, 2, 3, 4, 5)).astype("float32")
    grid = rng.uniform(-1.3, 1.3, (1, 2, 3, 2, 3)).astype("float32")
    node = helper.make_node("GridSample", ["x", "g"], ["y"], mode=mode, padding_mode="border")
    _check(node, {"x": x, "g": grid}, {})


@pytest.mark.parametrize("align", [0, 1])
@pytest.mark.parametrize("size", [(2, 3, 4, 5), (2, 1, 3, 4, 2)])
def test_affine_grid_matches_onnxruntime(align: int, size: tuple[int, ...]) -> None:
    nsp = len(size) - 2
    theta = np.random.default_rng(3).standard_normal((2, nsp, nsp + 1)).astype("float32")
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=align)
    _check(node, {"theta": theta}, {"size": np.asarray(size, "int64")}, "c" if align else None)
