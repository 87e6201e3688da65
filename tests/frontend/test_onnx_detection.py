"""ONNX RoiAlign and MaxUnpool through the importer: compiled, against ONNX Runtime."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError
from pytvm.frontend.onnx.ops_detection import non_max_suppression


def _check(model: Any, feed: dict[str, np.ndarray], target: str = "llvm") -> None:
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod, target=target).evaluate()(**feed, **params).numpy()
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feed)[0]
    np.testing.assert_allclose(got, expected, atol=1e-5)


def _roi_model(opset: int, **attrs: Any) -> Any:
    graph = helper.make_graph(
        [helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], **attrs)],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8, 8]),
            helper.make_tensor_value_info("r", TensorProto.FLOAT, [4, 4]),
            helper.make_tensor_value_info("b", TensorProto.INT64, [4]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("opset", [10, 16])
def test_roi_align_default_coordinates_per_opset(opset: int, target: str) -> None:
    rng = np.random.default_rng(0)
    boxes = rng.uniform(0, 5, (4, 4)).astype("float32")
    boxes[:, 2:] += boxes[:, :2]
    feed = {
        "x": rng.standard_normal((2, 3, 8, 8)).astype("float32"),
        "r": boxes,
        "b": np.array([0, 1, 1, 0], dtype="int64"),
    }
    _check(_roi_model(opset, output_height=2, output_width=3, spatial_scale=0.5), feed, target)


def test_roi_align_unknown_coordinates_are_refused() -> None:
    with pytest.raises(OnnxImportError, match="coordinate_transformation_mode"):
        relay.frontend.from_onnx(_roi_model(16, coordinate_transformation_mode="align_corners"))


def _unpool_model(out: list[int], with_shape: bool, **attrs: Any) -> Any:
    names = ["x", "i", "s"] if with_shape else ["x", "i"]
    inputs = [
        helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 2, 2]),
        helper.make_tensor_value_info("i", TensorProto.INT64, [1, 2, 2, 2]),
    ]
    inits = [helper.make_tensor("s", TensorProto.INT64, [4], out)] if with_shape else []
    graph = helper.make_graph(
        [helper.make_node("MaxUnpool", names, ["y"], **attrs)],
        "g",
        inputs,
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, out)],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("with_shape", [False, True])
def test_max_unpool_matches_onnxruntime(with_shape: bool, target: str) -> None:
    x = np.arange(1, 9, dtype="float32").reshape(1, 2, 2, 2)
    i = np.array([0, 3, 9, 15, 16, 19, 25, 31], dtype="int64").reshape(1, 2, 2, 2)
    out = [1, 2, 4, 4]
    if with_shape:
        out = [1, 2, 5, 5]
        i = np.array([0, 3, 11, 24, 25, 28, 36, 49], dtype="int64").reshape(1, 2, 2, 2)
    model = _unpool_model(out, with_shape, kernel_shape=[2, 2], strides=[2, 2])
    _check(model, {"x": x, "i": i}, target)


def test_max_unpool_output_shape_of_other_batch_is_refused() -> None:
    model = _unpool_model([2, 2, 4, 4], True, kernel_shape=[2, 2], strides=[2, 2])
    with pytest.raises(OnnxImportError, match="output_shape"):
        relay.frontend.from_onnx(model)


def _nms_model(boxes: np.ndarray, scores: np.ndarray, center: int, as_inputs: bool) -> Any:
    consts = {
        "m": np.array([3], dtype="int64"),
        "iou": np.array([0.4], dtype="float32"),
        "st": np.array([0.2], dtype="float32"),
    }
    data = {"boxes": boxes, "scores": scores}
    inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, v.shape) for n, v in data.items()]
    inits = [helper.make_tensor(n, TensorProto.INT64 if v.dtype == np.int64 else TensorProto.FLOAT,
                                v.shape, v.reshape(-1).tolist())
             for n, v in ({**consts} if as_inputs else {**consts, **data}).items()]  # fmt: skip
    graph = helper.make_graph(
        [
            helper.make_node(
                "NonMaxSuppression",
                ["boxes", "scores", "m", "iou", "st"],
                ["y"],
                center_point_box=center,
            )
        ],
        "g",
        inputs if as_inputs else [],
        [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
        initializer=inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)])


def _boxes(seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    boxes = rng.uniform(0, 10, (2, 12, 4)).astype("float32")
    scores = rng.uniform(0, 1, (2, 3, 12)).astype("float32")
    scores[0, 0, 3] = scores[0, 0, 5]  # a tie
    return boxes, scores


@pytest.mark.parametrize("center", [0, 1])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_non_max_suppression_selects_as_onnxruntime(seed: int, center: int) -> None:
    boxes, scores = _boxes(seed)  # random corners: some boxes are flipped
    model = _nms_model(boxes, scores, center, as_inputs=True)
    feed = {"boxes": boxes, "scores": scores}
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feed)[0]
    got = non_max_suppression(boxes, scores, 3, 0.4, 0.2, bool(center))
    np.testing.assert_array_equal(got, expected)


def test_non_max_suppression_of_constants_imports_and_runs() -> None:
    boxes, scores = _boxes(3)
    model = _nms_model(boxes, scores, 0, as_inputs=False)
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(**params).numpy()
    expected = onnxruntime.InferenceSession(model.SerializeToString()).run(None, {})[0]
    np.testing.assert_array_equal(got, expected)
