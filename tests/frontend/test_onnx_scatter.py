"""ONNX Scatter, ScatterElements and ScatterND with every reduction: compiled for llvm and C,
against ONNX Runtime; repeated and negative indices included.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError


def _model(op: str, opset: int, shapes: list[tuple[int, ...]], **attrs: Any) -> Any:
    types = [TensorProto.FLOAT, TensorProto.INT64, TensorProto.FLOAT]
    names = ["data", "indices", "updates"]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"], **attrs)],
        "g",
        [helper.make_tensor_value_info(n, t, s) for n, t, s in zip(names, types, shapes)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shapes[0])],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(model: Any, inputs: list[np.ndarray], target: str) -> None:
    mod, _ = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod, target=target).evaluate()(*inputs).numpy()
    sess = onnxruntime.InferenceSession(model.SerializeToString())
    feed = dict(zip(["data", "indices", "updates"], inputs))
    np.testing.assert_allclose(got, sess.run(None, feed)[0], rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
def test_scatter_elements_reductions_match_onnxruntime(reduction: str, target: str) -> None:
    rng = np.random.default_rng(0)
    data = rng.standard_normal((3, 4)).astype("float32")
    indices = np.array([[1, -1, 0], [2, 2, -4], [0, 3, 3]], dtype="int64")  # repeats
    if reduction == "none":
        indices = np.array([[1, -1, 0], [2, 0, -4], [0, 3, 2]], dtype="int64")
    updates = rng.standard_normal((3, 3)).astype("float32")
    model = _model("ScatterElements", 18, [(3, 4), (3, 3), (3, 3)], axis=1, reduction=reduction)
    _check(model, [data, indices, updates], target)


def test_scatter_opset9_is_scatter_elements() -> None:
    data = np.zeros((3, 3), dtype="float32")
    indices = np.array([[1, 0, 2], [0, 2, 1]], dtype="int64")
    updates = np.arange(1, 7, dtype="float32").reshape(2, 3)
    _check(_model("Scatter", 9, [(3, 3), (2, 3), (2, 3)], axis=0), [data, indices, updates], "llvm")


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("reduction", ["none", "add", "mul", "min", "max"])
def test_scatter_nd_reductions_match_onnxruntime(reduction: str, target: str) -> None:
    rng = np.random.default_rng(1)
    data = rng.standard_normal((4, 3, 2)).astype("float32")
    indices = np.array([[[0, 1]], [[-1, 2]], [[0, 1]]], dtype="int64")  # [3, 1, 2]
    if reduction == "none":
        indices = np.array([[[0, 1]], [[-1, 2]], [[1, 0]]], dtype="int64")
    updates = rng.standard_normal((3, 1, 2)).astype("float32")
    model = _model("ScatterND", 18, [(4, 3, 2), (3, 1, 2), (3, 1, 2)], reduction=reduction)
    _check(model, [data, indices, updates], target)


def test_scatter_nd_of_one_index_tuple() -> None:
    data = np.arange(8, dtype="float32").reshape(2, 4)
    indices = np.array([1], dtype="int64")
    updates = np.full((4,), 9, dtype="float32")
    _check(_model("ScatterND", 11, [(2, 4), (1,), (4,)]), [data, indices, updates], "llvm")


def test_scatter_nd_with_wrong_updates_shape_is_refused() -> None:
    model = _model("ScatterND", 11, [(2, 4), (3, 1), (3, 5)])
    with pytest.raises(OnnxImportError, match="updates have shape"):
        relay.frontend.from_onnx(model)


def test_unknown_reduction_is_refused() -> None:
    model = _model("ScatterElements", 18, [(2, 2), (2, 2), (2, 2)], reduction="mean")
    with pytest.raises(OnnxImportError, match="reduction 'mean'"):
        relay.frontend.from_onnx(model)
