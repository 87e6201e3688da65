"""Quantized ONNX models against onnxruntime: ``QLinearConv``, ``ConvInteger``,
``DynamicQuantizeLinear``, com.microsoft's ``QLinear*`` elementwise operators, a QDQ
convolution, and a small CNN quantized by ``onnxruntime.quantization.quantize_static`` in both
formats (QDQ and QOperator). Differences are counted in quantization steps (output codes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import helper, numpy_helper
from onnxruntime.quantization import (  # type: ignore[import-untyped]
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)

import pytvm
from pytvm import graph, relay
from pytvm.runtime.graph_executor import GraphModule

_OPSETS = [helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)]


def _model(
    nodes: list[onnx.NodeProto],
    feeds: dict[str, np.ndarray],
    consts: dict[str, Any],
    outputs: list[str],
) -> onnx.ModelProto:
    infos = [
        helper.make_tensor_value_info(k, helper.np_dtype_to_tensor_dtype(v.dtype), v.shape)
        for k, v in feeds.items()
    ]
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    outs = [onnx.ValueInfoProto(name=o) for o in outputs]
    return helper.make_model(
        helper.make_graph(nodes, "g", infos, outs, inits), opset_imports=_OPSETS
    )


def _onnxruntime(
    model: onnx.ModelProto, feeds: dict[str, np.ndarray], optimize: bool = False
) -> list[Any]:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    if not optimize:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_DISABLE_ALL
    return onnxruntime.InferenceSession(model.SerializeToString(), options).run(None, feeds)  # type: ignore[no-any-return]


def _pytvm(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(**feeds, **params)
    return [got.numpy()] if not isinstance(got, (list, tuple)) else [g.numpy() for g in got]


def _steps(a: np.ndarray, b: np.ndarray) -> int:
    """The largest difference in quantization steps (output codes)."""
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    return int(np.abs(a.astype("int64") - b.astype("int64")).max(initial=0))


def _codes(rng: np.random.Generator, dtype: str, *shape: int) -> np.ndarray:
    info = np.iinfo(np.dtype(dtype))
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


@pytest.mark.parametrize(
    ("x_dtype", "w_dtype", "per_channel", "attrs"),
    [
        ("uint8", "uint8", False, {"pads": [1, 1, 1, 1]}),
        ("uint8", "int8", True, {"pads": [1, 1, 1, 1], "strides": [2, 2]}),
        ("int8", "int8", True, {"group": 4, "pads": [1, 1, 1, 1]}),
        ("uint8", "int8", False, {"dilations": [2, 2], "pads": [2, 1, 0, 2]}),
        ("int8", "int8", False, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}),
    ],
    ids=["u8u8", "u8s8_per_channel_stride", "s8s8_depthwise", "dilated", "same_upper"],
)
def test_qlinear_conv_matches_onnxruntime_exactly(
    x_dtype: str, w_dtype: str, per_channel: bool, attrs: dict[str, Any]
) -> None:
    rng = np.random.default_rng(0)
    groups = attrs.get("group", 1)
    c, f = 4, 8
    x = _codes(rng, x_dtype, 2, c, 9, 9)
    w = _codes(rng, w_dtype, f, c // groups, 3, 3)
    consts = {
        "x_scale": np.float32(0.02),
        "x_zp": np.array(7 if x_dtype == "uint8" else -3, dtype=x_dtype),
        "w": w,
        "w_scale": (rng.uniform(0.001, 0.01, f) if per_channel else np.float32(0.004)).astype(
            "float32"
        ),
        "w_zp": np.zeros(f, dtype=w_dtype) if per_channel else np.array(2, dtype=w_dtype),
        "y_scale": np.float32(0.05),
        "y_zp": np.array(100 if x_dtype == "uint8" else 5, dtype=x_dtype),
        "bias": rng.integers(-2000, 2000, f).astype("int32"),
    }
    names = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"]
    node = helper.make_node("QLinearConv", names, ["y"], **attrs)
    model = _model([node], {"x": x}, consts, ["y"])
    (expected,) = _onnxruntime(model, {"x": x})
    (got,) = _pytvm(model, {"x": x})
    assert _steps(got, expected) == 0


def test_qlinear_conv_1d_matches_onnxruntime() -> None:
    rng = np.random.default_rng(1)
    x, w = _codes(rng, "uint8", 1, 3, 12), _codes(rng, "uint8", 5, 3, 3)
    consts = {"xs": np.float32(0.1), "xz": np.uint8(128), "w": w, "ws": np.float32(0.01)}
    consts.update(wz=np.uint8(120), ys=np.float32(0.2), yz=np.uint8(10))
    node = helper.make_node(
        "QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"], ["y"], pads=[1, 1]
    )
    model = _model([node], {"x": x}, consts, ["y"])
    assert _steps(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]) == 0


def test_conv_integer_matches_onnxruntime() -> None:
    rng = np.random.default_rng(2)
    x, w = _codes(rng, "uint8", 1, 3, 7, 7), _codes(rng, "uint8", 4, 3, 3, 3)
    node = helper.make_node("ConvInteger", ["x", "w", "xz", "wz"], ["y"], pads=[1, 1, 1, 1])
    model = _model([node], {"x": x}, {"w": w, "xz": np.uint8(3), "wz": np.uint8(130)}, ["y"])
    (expected,) = _onnxruntime(model, {"x": x})
    (got,) = _pytvm(model, {"x": x})
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, expected)


def _takes_int8_conv(model: onnx.ModelProto) -> bool:
    mod, _ = relay.frontend.from_onnx(model)
    return "qnn.conv2d" in str(mod)


@pytest.mark.parametrize(
    ("x_dtype", "per_channel", "attrs", "shape"),
    [
        ("uint8", True, {"pads": [1, 1, 1, 1]}, (1, 19, 10, 10)),
        ("int8", True, {"pads": [2, 1, 0, 2], "strides": [2, 1]}, (2, 6, 9, 11)),
        ("int8", False, {"auto_pad": "SAME_UPPER", "strides": [2, 2]}, (1, 5, 8, 8)),
        ("uint8", False, {"dilations": [2, 2], "pads": [2, 2, 2, 2]}, (1, 4, 9, 9)),
        ("uint8", False, {"pads": [1, 2]}, (1, 12, 20)),
    ],
    ids=["u8_per_channel", "s8_strided_asymmetric_pads", "s8_same_upper", "u8_dilated", "u8_1d"],
)
def test_qlinear_conv_int8_weights_take_int8_conv_exactly(
    x_dtype: str, per_channel: bool, attrs: dict[str, Any], shape: tuple[int, ...]
) -> None:
    """Symmetric int8 weights (zero points 0): the 8-bit dot-product convolution, bit-exact."""
    rng = np.random.default_rng(len(shape) + shape[1])
    c, f = shape[1], 20
    x = _codes(rng, x_dtype, *shape)
    w = _codes(rng, "int8", f, c, *[3] * (len(shape) - 2))
    w[:, 0] = -128  # extremes: 255 * -128 products
    consts = {
        "xs": np.float32(0.02),
        "xz": np.array(131 if x_dtype == "uint8" else -7, dtype=x_dtype),
        "w": w,
        "ws": (rng.uniform(0.001, 0.01, f) if per_channel else np.float32(0.004)).astype("float32"),
        "wz": np.zeros(f if per_channel else (), dtype="int8"),
        "ys": np.float32(0.4),
        "yz": np.array(90 if x_dtype == "uint8" else -4, dtype=x_dtype),
        "b": rng.integers(-3000, 3000, f).astype("int32"),
    }
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    model = _model(
        [helper.make_node("QLinearConv", names, ["y"], **attrs)], {"x": x}, consts, ["y"]
    )
    assert _takes_int8_conv(model)
    assert _steps(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]) == 0


@pytest.mark.parametrize(
    ("x_dtype", "shape", "k", "stride", "mult"),
    [
        ("uint8", (1, 24, 12, 12), 3, 1, 1),
        ("int8", (1, 40, 9, 9), 5, 2, 1),
        ("uint8", (1, 6, 10, 10), 3, 2, 2),
    ],
    ids=["u8_3x3_rows", "s8_5x5_stride2", "u8_multiplier2"],
)
def test_qlinear_conv_depthwise_takes_int8_conv_exactly(
    x_dtype: str, shape: tuple[int, ...], k: int, stride: int, mult: int
) -> None:
    """Depthwise QLinearConv (symmetric int8 taps): qnn.conv2d, bit-exact with onnxruntime."""
    rng = np.random.default_rng(shape[1] + k)
    c, f = shape[1], shape[1] * mult
    x = _codes(rng, x_dtype, *shape)
    w = _codes(rng, "int8", f, 1, k, k)
    w[:, 0, 0, 0] = -128
    consts = {
        "xs": np.float32(0.02),
        "xz": np.array(140 if x_dtype == "uint8" else -3, dtype=x_dtype),
        "w": w,
        "ws": rng.uniform(0.002, 0.02, f).astype("float32"),
        "wz": np.zeros(f, dtype="int8"),
        "ys": np.float32(0.5),
        "yz": np.array(128 if x_dtype == "uint8" else 0, dtype=x_dtype),
        "b": rng.integers(-3000, 3000, f).astype("int32"),
    }
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    attrs: dict[str, Any] = {"pads": [k // 2] * 4, "strides": [stride] * 2, "group": c}
    model = _model(
        [helper.make_node("QLinearConv", names, ["y"], **attrs)], {"x": x}, consts, ["y"]
    )
    assert _takes_int8_conv(model)
    want = _onnxruntime(model, {"x": x})[0]
    assert _steps(_pytvm(model, {"x": x})[0], want) == 0 and len(np.unique(want)) > 20


@pytest.mark.parametrize(
    ("x_dtype", "c", "k", "stride"),
    [("uint8", 12, 1, 1), ("int8", 12, 1, 1), ("uint8", 3, 3, 2)],
    ids=["u8_1x1", "s8_1x1", "u8_stem"],
)
def test_qlinear_conv_few_channels_exact(x_dtype: str, c: int, k: int, stride: int) -> None:
    """QLinearConvs of few input channels (float32 pixel lanes on wide targets): bit-exact."""
    rng = np.random.default_rng(21 + k)
    f = 40
    x = _codes(rng, x_dtype, 1, c, 10, 16)
    consts = {
        "xs": np.float32(0.02),
        "xz": np.array(77 if x_dtype == "uint8" else 5, dtype=x_dtype),
        "w": _codes(rng, "int8", f, c, k, k),
        "ws": rng.uniform(0.002, 0.02, f).astype("float32"),
        "wz": np.zeros(f, dtype="int8"),
        "ys": np.float32(0.3),
        "yz": np.array(128 if x_dtype == "uint8" else 0, dtype=x_dtype),
        "b": rng.integers(-3000, 3000, f).astype("int32"),
    }
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
    attrs: dict[str, Any] = {"pads": [k // 2] * 4, "strides": [stride] * 2}
    node = helper.make_node("QLinearConv", names, ["y"], **attrs)
    model = _model([node], {"x": x}, consts, ["y"])
    assert _takes_int8_conv(model)
    want = _onnxruntime(model, {"x": x})[0]
    assert _steps(_pytvm(model, {"x": x})[0], want) == 0 and len(np.unique(want)) > 20


def test_conv_integer_int8_weights_take_int8_conv() -> None:
    rng = np.random.default_rng(3)
    x, w = _codes(rng, "uint8", 1, 9, 7, 7), _codes(rng, "int8", 4, 9, 3, 3)
    node = helper.make_node("ConvInteger", ["x", "w", "xz"], ["y"], pads=[1, 1, 1, 1])
    model = _model([node], {"x": x}, {"w": w, "xz": np.uint8(200)}, ["y"])
    assert _takes_int8_conv(model)
    np.testing.assert_array_equal(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0])


@pytest.mark.parametrize("data", ["spread", "positive", "zeros"])
def test_dynamic_quantize_linear_matches_onnxruntime(data: str) -> None:
    rng = np.random.default_rng(3)
    x = {
        "spread": rng.uniform(-3, 5, (3, 17)),
        "positive": rng.uniform(0.5, 2, (3, 17)),
        "zeros": np.zeros((3, 17)),
    }[data].astype("float32")
    node = helper.make_node("DynamicQuantizeLinear", ["x"], ["y", "scale", "zp"])
    model = _model([node], {"x": x}, {}, ["y", "scale", "zp"])
    expected = _onnxruntime(model, {"x": x})
    got = _pytvm(model, {"x": x})
    assert _steps(got[0], expected[0]) == 0
    np.testing.assert_array_equal(got[1], expected[1])
    np.testing.assert_array_equal(got[2], expected[2])


def _ms(op: str, inputs: list[str], **attrs: Any) -> onnx.NodeProto:
    return helper.make_node(op, inputs, ["y"], domain="com.microsoft", **attrs)


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize("op", ["QLinearAdd", "QLinearMul"])
def test_qlinear_binary_within_one_step_of_onnxruntime(op: str, dtype: str) -> None:
    rng = np.random.default_rng(4)
    a, b = _codes(rng, dtype, 2, 3, 16), _codes(rng, dtype, 3, 16)
    zero = 3 if dtype == "uint8" else -2
    consts = {"sa": np.float32(0.031), "za": np.array(zero, dtype=dtype)}
    consts.update(sb=np.float32(0.017), zb=np.array(zero + 5, dtype=dtype))
    consts.update(
        sc=np.float32(0.05 if op == "QLinearAdd" else 0.3), zc=np.array(zero, dtype=dtype)
    )
    node = _ms(op, ["a", "sa", "za", "b", "sb", "zb", "sc", "zc"])
    model = _model([node], {"a": a, "b": b}, consts, ["y"])
    feeds = {"a": a, "b": b}
    # ONNX Runtime's QLinearAdd uses fixed-point multipliers: a tie may round either way.
    assert _steps(_pytvm(model, feeds)[0], _onnxruntime(model, feeds)[0]) <= 1


@pytest.mark.parametrize("dtype", ["uint8", "int8"])
@pytest.mark.parametrize(
    ("op", "attrs"), [("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1})]
)
def test_qlinear_lookup_operators_match_onnxruntime(
    op: str, attrs: dict[str, Any], dtype: str
) -> None:
    info = np.iinfo(np.dtype(dtype))
    x = np.arange(info.min, info.max + 1).astype(dtype).reshape(4, 64)  # every code
    zero = 128 if dtype == "uint8" else 0
    consts = {"xs": np.float32(0.05), "xz": np.array(zero, dtype=dtype)}
    consts.update(ys=np.float32(1 / 256 if op == "QLinearSigmoid" else 0.04))
    consts.update(yz=np.array(info.min if op == "QLinearSigmoid" else zero, dtype=dtype))
    model = _model([_ms(op, ["x", "xs", "xz", "ys", "yz"], **attrs)], {"x": x}, consts, ["y"])
    assert _steps(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]) == 0


@pytest.mark.parametrize("channels_last", [0, 1])
def test_qlinear_global_average_pool_matches_onnxruntime(channels_last: int) -> None:
    x = _codes(np.random.default_rng(5), "uint8", 2, 5, 6, 7)
    consts = {"xs": np.float32(0.02), "xz": np.uint8(9), "ys": np.float32(0.015), "yz": np.uint8(4)}
    node = _ms(
        "QLinearGlobalAveragePool", ["x", "xs", "xz", "ys", "yz"], channels_last=channels_last
    )
    model = _model([node], {"x": x}, consts, ["y"])
    assert _steps(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]) == 0


def test_qlinear_concat_requantizes_inputs_like_onnxruntime() -> None:
    rng = np.random.default_rng(6)
    a, b = _codes(rng, "int8", 1, 3, 4), _codes(rng, "int8", 1, 2, 4)
    consts = {"ys": np.float32(0.05), "yz": np.int8(1), "sa": np.float32(0.05), "za": np.int8(1)}
    consts.update(sb=np.float32(0.13), zb=np.int8(-7))
    node = _ms("QLinearConcat", ["ys", "yz", "a", "sa", "za", "b", "sb", "zb"], axis=1)
    feeds = {"a": a, "b": b}
    model = _model([node], feeds, consts, ["y"])
    assert _steps(_pytvm(model, feeds)[0], _onnxruntime(model, feeds)[0]) == 0


def test_qdq_conv_matches_onnxruntime_plain_and_fused() -> None:
    """Q -> DQ -> Conv -> Q -> DQ: pytvm computes it in float as written; ONNX Runtime with
    graph optimizations fuses it into QLinearConv (integer arithmetic).
    """
    rng = np.random.default_rng(7)
    x = rng.uniform(-1, 1, (1, 8, 12, 12)).astype("float32")
    w = rng.integers(-127, 128, (16, 8, 3, 3)).astype("int8")
    consts = {
        "xs": np.float32(2 / 255), "xz": np.uint8(128), "w_q": w,
        "ws": rng.uniform(0.002, 0.004, 16).astype("float32"), "wz": np.zeros(16, dtype="int8"),
        "b": rng.uniform(-0.1, 0.1, 16).astype("float32"),
        "ys": np.float32(0.03), "yz": np.uint8(120),
    }  # fmt: skip
    nodes = [
        helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
        helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
        helper.make_node("DequantizeLinear", ["w_q", "ws", "wz"], ["wd"], axis=0),
        helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["yq"]),
        helper.make_node("DequantizeLinear", ["yq", "ys", "yz"], ["y"]),
    ]
    model = _model(nodes, {"x": x}, consts, ["y", "yq"])
    got = _pytvm(model, {"x": x})
    plain = _onnxruntime(model, {"x": x})
    fused = _onnxruntime(model, {"x": x}, optimize=True)
    assert _steps(got[1], plain[1]) <= 1  # float sums in a different order may cross a tie
    assert _steps(got[1], fused[1]) <= 1
    np.testing.assert_allclose(got[0], plain[0], atol=0.03 + 1e-6)


def _float_cnn() -> onnx.ModelProto:
    """Convolutions (plain, depthwise strided, 1x1), a residual Add, LeakyRelu, SiLU as
    Sigmoid · x, Concat, global pooling and a MatMul classifier: what quantize_static turns into
    QLinearConv, QLinearAdd, QLinearLeakyRelu, QLinearSigmoid, QLinearMul, QLinearConcat,
    QLinearGlobalAveragePool and QLinearMatMul.
    """
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []

    def w(name: str, *shape: int, s: float = 0.2) -> str:
        value = (rng.standard_normal(shape) * s).astype("float32")
        inits.append(numpy_helper.from_array(value, name))
        return name

    n = helper.make_node
    nodes = [
        n("Conv", ["x", w("w1", 8, 3, 3, 3), w("b1", 8, s=0.1)], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", w("w2", 8, 8, 3, 3), w("b2", 8, s=0.1)], ["c2"], pads=[1, 1, 1, 1]),
        n("Add", ["c2", "r1"], ["a2"]),
        n("LeakyRelu", ["a2"], ["l2"], alpha=0.1),
        n("Conv", ["l2", w("w3", 8, 1, 3, 3), w("b3", 8, s=0.1)], ["c3"],
          pads=[1, 1, 1, 1], group=8, strides=[2, 2]),
        n("Sigmoid", ["c3"], ["s3"]),
        n("Mul", ["c3", "s3"], ["m3"]),
        n("Conv", ["l2", w("w4", 8, 8, 1, 1), w("b4", 8, s=0.1)], ["c4"], strides=[2, 2]),
        n("Concat", ["m3", "c4"], ["cat"], axis=1),
        n("GlobalAveragePool", ["cat"], ["gap"]),
        n("Flatten", ["gap"], ["flat"]),
        n("MatMul", ["flat", w("fc", 16, 10)], ["mm"]),
        n("Add", ["mm", w("fcb", 10, s=0.1)], ["y"]),
    ]  # fmt: skip
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 10])
    graph = helper.make_graph(nodes, "cnn", [x], [y], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


class _RandomImages(CalibrationDataReader):  # type: ignore[misc]
    def __init__(self) -> None:
        rng = np.random.default_rng(1)
        self.batches = iter(
            [{"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype("float32")} for _ in range(8)]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
def test_quantize_static_cnn_matches_onnxruntime(quant_format: str, tmp_path: Path) -> None:
    source, target = tmp_path / "cnn.onnx", tmp_path / "cnn_int8.onnx"
    onnx.save(_float_cnn(), source)
    quantize_static(
        str(source),
        str(target),
        _RandomImages(),
        quant_format=QuantFormat.from_string(quant_format),
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
    )
    model = onnx.load(target)
    kinds = {node.op_type for node in model.graph.node}
    assert ("QLinearConv" in kinds) == (quant_format == "QOperator")
    x = np.random.default_rng(2).uniform(-1, 1, (1, 3, 16, 16)).astype("float32")
    (got,) = _pytvm(model, {"x": x})
    # The output is dequantized: equal floats are equal codes.
    np.testing.assert_array_equal(got, _onnxruntime(model, {"x": x})[0])
    np.testing.assert_array_equal(got, _onnxruntime(model, {"x": x}, optimize=True)[0])


@pytest.mark.parametrize("target", ["llvm -mcpu=haswell", "llvm"])
def test_qlinear_conv_int8_weights_exact_with_and_without_dot_products(target: str) -> None:
    """Without 8-bit dot products (AVX2) qnn.conv2d runs on int16 operands; both exact."""
    rng = np.random.default_rng(11)
    x, w = _codes(rng, "int8", 1, 10, 9, 9), _codes(rng, "int8", 12, 10, 3, 3)
    consts = {"xs": np.float32(0.05), "xz": np.int8(-9), "w": w, "ws": np.float32(0.003)}
    consts.update(wz=np.int8(0), ys=np.float32(0.3), yz=np.int8(3))
    names = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz"]
    model = _model([helper.make_node("QLinearConv", names, ["y"], pads=[1, 1, 1, 1])], {"x": x},
                   consts, ["y"])  # fmt: skip
    mod, params = relay.frontend.from_onnx(model)
    lib = graph.build(mod, target=target, params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    assert _steps(m.get_output(0).numpy(), _onnxruntime(model, {"x": x})[0]) == 0


@pytest.mark.parametrize("a_dtype", ["uint8", "int8"])
def test_qlinear_matmul_int8_weight_takes_int8_product_exactly(a_dtype: str) -> None:
    rng = np.random.default_rng(12)
    a, b = _codes(rng, a_dtype, 2, 5, 40), _codes(rng, "int8", 40, 24)
    consts = {
        "as": np.float32(0.03), "az": np.array(7 if a_dtype == "uint8" else -7, a_dtype),
        "b": b, "bs": rng.uniform(0.001, 0.01, 24).astype("float32"), "bz": np.zeros(24, "int8"),
        "ys": np.float32(0.2), "yz": np.array(100 if a_dtype == "uint8" else 1, a_dtype),
    }  # fmt: skip
    names = ["a", "as", "az", "b", "bs", "bz", "ys", "yz"]
    model = _model([helper.make_node("QLinearMatMul", names, ["y"])], {"a": a}, consts, ["y"])
    assert _takes_int8_conv(model)
    assert _steps(_pytvm(model, {"a": a})[0], _onnxruntime(model, {"a": a})[0]) == 0


def test_matmul_integer_int8_weight_takes_int8_product() -> None:
    rng = np.random.default_rng(13)
    a, b = _codes(rng, "uint8", 6, 33), _codes(rng, "int8", 33, 17)
    node = helper.make_node("MatMulInteger", ["a", "b", "az"], ["y"])
    model = _model([node], {"a": a}, {"b": b, "az": np.uint8(140)}, ["y"])
    assert _takes_int8_conv(model)
    np.testing.assert_array_equal(_pytvm(model, {"a": a})[0], _onnxruntime(model, {"a": a})[0])
