"""com.microsoft ``QGemm`` against onnxruntime: 8-bit A and B (uint8/int8), per-tensor and
per-column B scales and zero points, transposed operands, alpha, an int32 bias C, and both
outputs (requantized codes with y_scale, float32 without).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import helper, numpy_helper

from pytvm import relay

_OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]


def _codes(rng: np.random.Generator, dtype: str, *shape: int) -> np.ndarray:
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def _qgemm_model(a: np.ndarray, consts: dict[str, Any], **attrs: Any) -> onnx.ModelProto:
    names = ["a", "as", "az", "b", "bs", "bz", "c", "ys", "yz"]
    inputs = [n if n == "a" or n in consts else "" for n in names]
    while not inputs[-1]:
        inputs.pop()
    node = helper.make_node("QGemm", inputs, ["y"], domain="com.microsoft", **attrs)
    info = helper.make_tensor_value_info("a", helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    g = helper.make_graph([node], "g", [info], [onnx.ValueInfoProto(name="y")], inits)
    return helper.make_model(g, opset_imports=_OPSETS)


def _both(model: onnx.ModelProto, a: np.ndarray) -> tuple[np.ndarray, np.ndarray, str]:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = onnxruntime.InferenceSession(model.SerializeToString(), options)
    (want,) = sess.run(None, {"a": a})
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(a=a, **params).numpy()
    return got, want, str(mod)


@pytest.mark.parametrize(
    ("a_dtype", "b_dtype", "per_column", "quantized", "attrs", "c_shape"),
    [
        ("uint8", "int8", True, True, {"transB": 1}, "n"),
        ("uint8", "int8", False, False, {}, "n"),
        ("int8", "int8", True, True, {"alpha": 0.5, "transA": 1}, "mn"),
        ("int8", "int8", False, False, {"transA": 1, "transB": 1}, None),
        ("uint8", "uint8", True, True, {"transB": 1}, "1n"),
        ("uint8", "uint8", False, False, {"alpha": 2.0}, "n"),
    ],
    ids=[
        "u8s8_col_q",
        "u8s8_tensor_f",
        "s8s8_col_q_alpha",
        "s8s8_tensor_f",
        "u8u8_col_q",
        "u8u8_tensor_f_alpha",
    ],
)
def test_qgemm_matches_onnxruntime(
    a_dtype: str,
    b_dtype: str,
    per_column: bool,
    quantized: bool,
    attrs: dict[str, Any],
    c_shape: str | None,
) -> None:
    """Quantized outputs equal ORT's codes; float outputs equal its floats."""
    rng = np.random.default_rng(len(attrs) + per_column + 2 * quantized)
    m, k, n = 3, 70, 24
    a = _codes(rng, a_dtype, *((k, m) if attrs.get("transA") else (m, k)))
    b = _codes(rng, b_dtype, *((n, k) if attrs.get("transB") else (k, n)))
    b[0, 0] = np.iinfo(np.dtype(b_dtype)).min  # an extreme product
    col = (n,) if per_column else ()
    symmetric = b_dtype == "int8" and a_dtype == "uint8"
    consts: dict[str, Any] = {
        "as": np.float32(0.03),
        "az": np.array(9 if a_dtype == "uint8" else -5, a_dtype),
        "b": b,
        "bs": rng.uniform(0.001, 0.01, col).astype("float32"),
        "bz": (np.zeros(col, b_dtype) if symmetric else _codes(rng, b_dtype, *col) // 4),
    }
    if c_shape is not None:
        shape = {"n": (n,), "1n": (1, n), "mn": (m, n)}[c_shape]
        consts["c"] = rng.integers(-20000, 20000, shape).astype("int32")
    if quantized:
        consts["ys"] = np.float32(0.7)
        consts["yz"] = np.array(120 if a_dtype == "uint8" else -3, a_dtype)
    model = _qgemm_model(a, consts, **attrs)
    got, want, text = _both(model, a)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert ("qnn.conv2d" in text) == symmetric  # the int8 product where B is symmetric int8
    if quantized:
        assert np.abs(got.astype("int64") - want.astype("int64")).max() == 0
        assert len(np.unique(got)) > 10  # not saturated
    else:
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=0)


def test_qgemm_refuses_y_scale_without_zero_point() -> None:
    rng = np.random.default_rng(0)
    a = _codes(rng, "uint8", 2, 8)
    consts = {"as": np.float32(0.1), "az": np.uint8(3), "b": _codes(rng, "int8", 8, 4)}
    consts.update(bs=np.float32(0.1), bz=np.int8(0), ys=np.float32(1.0))
    with pytest.raises(ValueError, match="y_scale and y_zero_point"):
        relay.frontend.from_onnx(_qgemm_model(a, consts))
