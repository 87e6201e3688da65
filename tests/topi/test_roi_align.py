"""topi.vision.rcnn.roi_align_nchw: compiled for llvm and C, against ONNX Runtime's RoiAlign
(avg and max, both coordinate modes, adaptive and fixed sampling, regions past the image).
"""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

import pytvm as tvm
from pytvm import te, topi


def _ours(
    x: np.ndarray, table: np.ndarray, ratio: int, mode: str, aligned: bool, target: str
) -> np.ndarray:
    data = te.placeholder(x.shape, "float32", "x")
    rois = te.placeholder(table.shape, "float32", "rois")
    out = topi.vision.rcnn.roi_align_nchw(data, rois, (3, 4), 0.8, mode, ratio, aligned)
    f = tvm.build(te.create_schedule(out.op), [data, rois, out], target)
    y = tvm.nd.empty([table.shape[0], x.shape[1], 3, 4], "float32")
    f(tvm.nd.array(x), tvm.nd.array(table), y)
    return y.numpy()


def _onnxruntime(
    x: np.ndarray, table: np.ndarray, ratio: int, mode: str, coords: str
) -> np.ndarray:
    node = helper.make_node(
        "RoiAlign", ["x", "r", "b"], ["y"], output_height=3, output_width=4, spatial_scale=0.8,
        sampling_ratio=ratio, mode=mode, coordinate_transformation_mode=coords,
    )  # fmt: skip
    graph = helper.make_graph(
        [node],
        "g",
        [
            helper.make_tensor_value_info("x", TensorProto.FLOAT, x.shape),
            helper.make_tensor_value_info("r", TensorProto.FLOAT, [table.shape[0], 4]),
            helper.make_tensor_value_info("b", TensorProto.INT64, [table.shape[0]]),
        ],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    feed = {"x": x, "r": table[:, 1:].copy(), "b": table[:, 0].astype("int64")}
    out: np.ndarray = onnxruntime.InferenceSession(model.SerializeToString()).run(None, feed)[0]
    return out


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("mode", ["avg", "max"])
@pytest.mark.parametrize("coords", ["half_pixel", "output_half_pixel"])
@pytest.mark.parametrize("ratio", [0, 2])
def test_roi_align_matches_onnxruntime(ratio: int, coords: str, mode: str, target: str) -> None:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 9, 11)).astype("float32")
    boxes = rng.uniform(-4, 14, (5, 4)).astype("float32")
    boxes[:, 2:] = boxes[:, :2] + rng.uniform(0, 10, (5, 2)).astype("float32")
    boxes[0] = [2, 3, 2.2, 3.1]  # smaller than a pixel
    boxes[1] = [-30, -20, 40, 35]  # far past the image on every side
    table = np.concatenate([rng.integers(0, 2, (5, 1)).astype("float32"), boxes], axis=1)
    got = _ours(x, table, ratio, mode, coords == "half_pixel", target)
    np.testing.assert_allclose(got, _onnxruntime(x, table, ratio, mode, coords), atol=1e-5)


def test_unknown_mode_is_refused() -> None:
    data = te.placeholder((1, 1, 4, 4), "float32", "x")
    rois = te.placeholder((1, 5), "float32", "r")
    with pytest.raises(ValueError, match="mode"):
        topi.vision.rcnn.roi_align_nchw(data, rois, 2, 1.0, "sum", 2)
