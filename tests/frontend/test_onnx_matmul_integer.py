"""ONNX MatMulInteger, QLinearMatMul (saturating, as ONNX Runtime does) and com.microsoft
MatMulInteger16: compiled for llvm and C, against ONNX Runtime.
"""

from __future__ import annotations

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper

from pytvm import relay

_P = {"int8": TensorProto.INT8, "uint8": TensorProto.UINT8, "float32": TensorProto.FLOAT,
      "int16": TensorProto.INT16, "int32": TensorProto.INT32}  # fmt: skip


def _run(
    op: str,
    inputs: dict[str, np.ndarray],
    out: tuple[str, list[int]],
    target: str,
    domain: str = "",
    reference: np.ndarray | None = None,
) -> None:
    graph = helper.make_graph(
        [helper.make_node(op, list(inputs), ["y"], domain=domain)],
        "g",
        [helper.make_tensor_value_info(n, _P[str(v.dtype)], v.shape) for n, v in inputs.items()],
        [helper.make_tensor_value_info("y", _P[out[0]], out[1])],
    )
    opsets = [helper.make_opsetid("", 13)] + ([helper.make_opsetid(domain, 1)] if domain else [])
    model = helper.make_model(graph, opset_imports=opsets)
    mod, _ = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod, target=target).evaluate()(*inputs.values()).numpy()
    if reference is None:
        reference = onnxruntime.InferenceSession(model.SerializeToString()).run(None, inputs)[0]
    np.testing.assert_array_equal(got, reference)


@pytest.mark.parametrize("target", ["llvm", "c"])
def test_matmul_integer_with_per_row_zero_points(target: str) -> None:
    rng = np.random.default_rng(0)
    a = rng.integers(0, 255, (3, 4), dtype="uint8")
    b = rng.integers(0, 255, (2, 4, 5), dtype="uint8")
    az = np.array([3, 100, 7], dtype="uint8")  # one per row: ONNX Runtime takes only a scalar
    inputs = {"a": a, "b": b, "az": az, "bz": np.array(9, dtype="uint8")}
    expected = (a.astype("int32") - az.astype("int32")[:, None]) @ (b.astype("int32") - 9)
    _run("MatMulInteger", inputs, ("int32", [2, 3, 5]), target, reference=expected)


@pytest.mark.parametrize("target", ["llvm", "c"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_qlinear_matmul_saturates_like_onnxruntime(dtype: str, target: str) -> None:
    rng = np.random.default_rng(1)
    info = np.iinfo(dtype)
    inputs = {
        "a": rng.integers(info.min, info.max, (2, 3, 4), dtype=dtype),
        "as": np.array(0.02, dtype="float32"),
        "az": np.array(5, dtype=dtype),
        "b": rng.integers(info.min, info.max, (4, 6), dtype=dtype),
        "bs": np.array(0.01, dtype="float32"),
        "bz": np.array(-3 if dtype == "int8" else 120, dtype=dtype),
        "ys": np.array(0.05, dtype="float32"),
        "yz": np.array(10, dtype=dtype),
    }
    _run("QLinearMatMul", inputs, (dtype, [2, 3, 6]), target)


def test_matmul_integer16() -> None:
    rng = np.random.default_rng(2)
    a = rng.integers(-30000, 30000, (2, 3, 4), dtype="int16")
    b = rng.integers(-300, 300, (4, 5), dtype="int16")
    _run("MatMulInteger16", {"a": a, "b": b}, ("int32", [2, 3, 5]), "llvm", "com.microsoft")
