"""ONNX BitwiseAnd/Or/Xor/Not: compiled for llvm and C, against ONNX Runtime."""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay
from pytvm.frontend.onnx import OnnxImportError

_PROTO = {
    "int8": TensorProto.INT8,
    "int16": TensorProto.INT16,
    "int32": TensorProto.INT32,
    "uint8": TensorProto.UINT8,
    "uint64": TensorProto.UINT64,
    "float32": TensorProto.FLOAT,
}


def _model(op: str, dtype: str, shapes: list[list[int]], out: list[int]) -> object:
    names = ["a", "b"][: len(shapes)]
    graph = helper.make_graph(
        [helper.make_node(op, names, ["y"])],
        "g",
        [helper.make_tensor_value_info(n, _PROTO[dtype], s) for n, s in zip(names, shapes)],
        [helper.make_tensor_value_info("y", _PROTO[dtype], out)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])


def _run_both(model: object, inputs: list[np.ndarray], target: str) -> tuple[object, object]:
    mod, _ = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod, target=target).evaluate()(*inputs).numpy()
    sess = onnxruntime.InferenceSession(model.SerializeToString())  # type: ignore[attr-defined]
    feed = {f"{n}": x for n, x in zip(["a", "b"], inputs)}
    return got, sess.run(None, feed)[0]


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("dtype", ["int8", "int16", "uint8", "uint64"])
@pytest.mark.parametrize("op", ["BitwiseAnd", "BitwiseOr", "BitwiseXor"])
def test_bitwise_binary_broadcasts_like_onnxruntime(op: str, dtype: str, target: str) -> None:
    info = np.iinfo(dtype)
    rng = np.random.default_rng(1)
    a = rng.integers(info.min, info.max, (2, 3, 4), dtype=dtype, endpoint=True)
    b = rng.integers(info.min, info.max, (4,), dtype=dtype, endpoint=True)
    got, expected = _run_both(_model(op, dtype, [[2, 3, 4], [4]], [2, 3, 4]), [a, b], target)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("dtype", ["int32", "uint8"])
def test_bitwise_not_matches_onnxruntime(dtype: str, target: str) -> None:
    info = np.iinfo(dtype)
    a = np.random.default_rng(2).integers(info.min, info.max, (3, 5), dtype=dtype, endpoint=True)
    got, expected = _run_both(_model("BitwiseNot", dtype, [[3, 5]], [3, 5]), [a], target)
    np.testing.assert_array_equal(got, expected)


def test_bitwise_of_floats_is_refused() -> None:
    with pytest.raises(OnnxImportError, match="integers"):
        relay.frontend.from_onnx(_model("BitwiseAnd", "float32", [[2], [2]], [2]))
