"""FuseQDQ: convolutions and dense layers of dequantized 8-bit codes become integer products
(``qnn.conv2d``), within one quantization step of ONNX Runtime's fused QDQ models.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper
from onnxruntime.quantization import (  # type: ignore[import-untyped]
    CalibrationDataReader,
    QuantFormat,
    QuantType,
    quantize_static,
)

from pytvm import graph as g
from pytvm import relay
from pytvm.graph.functor import post_order
from pytvm.graph.int8_conv import int8_conv2d
from pytvm.graph.interpreter import interpret
from pytvm.graph.structural import assert_structural_equal
from pytvm.graph.transform import bind_params, fuse_qdq

F32 = "float32"
_FLOAT_CONV = re.compile(r"(?<!q)nn\.conv2d\(")


def _dq(q: g.Expr, zero: float | np.ndarray, scale: float | np.ndarray) -> g.Expr:
    x = g.call("cast", q, dtype=F32)
    if np.any(zero):
        x = g.call("subtract", x, g.const(np.asarray(zero, F32)))
    return g.call("multiply", x, g.const(np.asarray(scale, F32)))


def _conv(x: g.Expr, w: g.Expr) -> g.Call:
    return g.call("nn.conv2d", x, w, strides=(1, 1), padding=(1, 1, 1, 1), dilation=(1, 1))


def _mod(params: list[g.Var], body: g.Expr) -> g.IRModule:
    return g.IRModule.from_expr(g.Function(params, body))


def _weights(f: int, c: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(f * c)
    w = rng.integers(-127, 128, (f, c, 3, 3)).astype("int8")
    return w, rng.uniform(0.001, 0.01, (f, 1, 1, 1)).astype(F32)


def test_dequantized_conv_becomes_integer_conv_times_scale() -> None:
    x = g.Var("x", g.TensorType((1, 4, 6, 6), "uint8"))
    w, w_scale = _weights(8, 4)
    before = _mod([x], _conv(_dq(x, 3.0, 0.05), _dq(g.const(w), 0.0, w_scale)))
    acc = int8_conv2d(x, 3, w, (1, 1), (1, 1, 1, 1), (1, 1))
    scale = (np.float32(0.05) * w_scale.reshape(-1)).astype(F32).reshape(1, 8, 1, 1)
    expected = _mod([x], g.call("multiply", g.call("cast", acc, dtype=F32), g.const(scale)))
    after = fuse_qdq(before)
    assert_structural_equal(after, expected)
    data = np.random.default_rng(1).integers(0, 256, (1, 4, 6, 6)).astype("uint8")
    np.testing.assert_allclose(
        interpret(after["main"], {"x": data}),
        interpret(before["main"], {"x": data}),
        rtol=1e-5,
        atol=1e-4,
    )


def test_quantized_bias_joins_the_int32_accumulators() -> None:
    x = g.Var("x", g.TensorType((1, 4, 6, 6), "int8"))
    w, w_scale = _weights(8, 4)
    scale = (np.float32(0.05) * w_scale.reshape(-1)).astype(F32)
    codes = np.arange(-4, 4, dtype="int32") * 1000
    bias = g.const((codes * scale).astype(F32))
    conv = _conv(_dq(x, -2.0, 0.05), _dq(g.const(w), 0.0, w_scale))
    after = fuse_qdq(_mod([x], g.call("nn.bias_add", conv, bias, axis=1)))
    acc = int8_conv2d(x, -2, w, (1, 1), (1, 1, 1, 1), (1, 1))
    acc = g.call("nn.bias_add", acc, g.const(codes), axis=1)
    factor = g.const(scale.reshape(1, 8, 1, 1))
    expected = _mod([x], g.call("multiply", g.call("cast", acc, dtype=F32), factor))
    assert_structural_equal(after, expected)


def test_large_quantized_bias_codes_join_the_accumulators() -> None:
    """Codes of a few hundred thousand (depthwise layers): their float32 products with the
    scale are whole multiples only to float32's relative precision.
    """
    x = g.Var("x", g.TensorType((1, 4, 6, 6), "uint8"))
    w, w_scale = _weights(8, 4)
    scale = (np.float32(0.05) * w_scale.reshape(-1)).astype(F32)
    codes = np.array([311017, -298765, 150001, -99999, 7, 0, 262143, -1], dtype="int32")
    bias = g.const((codes * scale).astype(F32))
    conv = _conv(_dq(x, 3.0, 0.05), _dq(g.const(w), 0.0, w_scale))
    after = fuse_qdq(_mod([x], g.call("nn.bias_add", conv, bias, axis=1)))
    biases = [
        n.args[1]
        for n in post_order(after["main"].body)
        if isinstance(n, g.Call) and n.op == "nn.bias_add"
    ]
    assert len(biases) == 1 and isinstance(biases[0], g.Constant)
    assert biases[0].data.dtype == np.int32
    np.testing.assert_array_equal(biases[0].data, codes)


def test_float_bias_stays_a_float_add() -> None:
    x = g.Var("x", g.TensorType((1, 4, 6, 6), "uint8"))
    w, w_scale = _weights(8, 4)
    conv = _conv(_dq(x, 3.0, 0.05), _dq(g.const(w), 0.0, w_scale))
    bias = g.const(np.linspace(-0.1, 0.1, 8).astype(F32) + 1e-4)
    after = fuse_qdq(_mod([x], g.call("nn.bias_add", conv, bias, axis=1)))
    ops = [node.op for node in post_order(after["main"].body) if isinstance(node, g.Call)]
    assert ops == ["qnn.conv2d", "cast", "multiply", "nn.bias_add"]


def test_weight_zero_point_or_groups_keep_the_float_conv() -> None:
    x = g.Var("x", g.TensorType((1, 4, 6, 6), "uint8"))
    w, w_scale = _weights(8, 4)
    asymmetric = _mod([x], _conv(_dq(x, 3.0, 0.05), _dq(g.const(w), 1.0, w_scale)))
    assert_structural_equal(fuse_qdq(asymmetric), asymmetric)
    grouped_w = g.const(w[:, :2])
    grouped = g.call(
        "nn.conv2d",
        _dq(x, 3.0, 0.05),
        _dq(grouped_w, 0.0, w_scale),
        strides=(1, 1),
        padding=(1, 1, 1, 1),
        dilation=(1, 1),
        groups=2,
    )
    assert_structural_equal(fuse_qdq(_mod([x], grouped)), _mod([x], grouped))


def test_quantize_of_integer_conv_divides_the_scale_once() -> None:
    """``clip(float(acc) * s, 0, 6) / s_y`` becomes ``clip(float(acc) * (s / s_y), 0, 6 / s_y)``."""
    x = g.Var("x", g.TensorType((1, 4, 6, 6), "uint8"))
    w, w_scale = _weights(8, 4)
    conv = _conv(_dq(x, 3.0, 0.05), _dq(g.const(w), 0.0, w_scale))
    y_scale = np.float32(0.04)
    six = g.call("clip", conv, a_min=0.0, a_max=6.0)
    before = _mod([x], g.call("divide", six, g.const(y_scale)))
    acc = int8_conv2d(x, 3, w, (1, 1), (1, 1, 1, 1), (1, 1))
    scale = (np.float32(0.05) * w_scale.reshape(-1)).astype(F32).reshape(1, 8, 1, 1)
    scaled = g.call("multiply", g.call("cast", acc, dtype=F32), g.const(scale / y_scale))
    bound = float(np.float32(6.0) / y_scale)
    expected = _mod([x], g.call("clip", scaled, a_min=0.0, a_max=bound))
    assert_structural_equal(fuse_qdq(before), expected)


def test_dequantized_depthwise_conv_becomes_integer_conv() -> None:
    x = g.Var("x", g.TensorType((1, 6, 7, 7), "uint8"))
    rng = np.random.default_rng(9)
    w = rng.integers(-127, 128, (12, 1, 3, 3)).astype("int8")  # two filters a channel
    w_scale = rng.uniform(0.001, 0.01, (12, 1, 1, 1)).astype(F32)
    attrs: dict[str, Any] = {
        "strides": (2, 2),
        "padding": (1, 1, 1, 1),
        "dilation": (1, 1),
        "groups": 6,
    }
    dq_w = _dq(g.const(w), 0.0, w_scale)
    before = _mod([x], g.call("nn.conv2d", _dq(x, 100.0, 0.05), dq_w, **attrs))
    acc = int8_conv2d(x, 100, w, (2, 2), (1, 1, 1, 1), (1, 1), groups=6)
    scale = (np.float32(0.05) * w_scale.reshape(-1)).astype(F32).reshape(1, 12, 1, 1)
    expected = _mod([x], g.call("multiply", g.call("cast", acc, dtype=F32), g.const(scale)))
    after = fuse_qdq(before)
    assert_structural_equal(after, expected)
    data = rng.integers(0, 256, (1, 6, 7, 7)).astype("uint8")
    np.testing.assert_allclose(
        interpret(after["main"], {"x": data}),
        interpret(before["main"], {"x": data}),
        rtol=1e-5,
        atol=1e-4,
    )


# --- ONNX QDQ models against ONNX Runtime (graph optimizations on: its own integer kernels) ---


def _onnxruntime(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> Any:
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    return onnxruntime.InferenceSession(model.SerializeToString(), options).run(None, feeds)


def _pytvm(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    mod, params = relay.frontend.from_onnx(model)
    got = relay.create_executor("graph", mod).evaluate()(**feeds, **params)
    return [got.numpy()] if not isinstance(got, (list, tuple)) else [g_.numpy() for g_ in got]


def _fused_ops(model: onnx.ModelProto) -> str:
    mod, params = relay.frontend.from_onnx(model)
    main = bind_params(mod["main"], params)
    return str(fuse_qdq(g.IRModule.from_expr(main)))


def _steps(a: np.ndarray, b: np.ndarray) -> int:
    return int(np.abs(a.astype("int64") - b.astype("int64")).max(initial=0))


def _model(nodes: list[onnx.NodeProto], x: onnx.ValueInfoProto, consts: dict[str, Any]) -> Any:
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    out = onnx.ValueInfoProto(name="y")
    graph_ = helper.make_graph(nodes, "qdq", [x], [out], inits)
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)])


def test_qdq_conv_bias_relu_within_one_step_of_onnxruntime() -> None:
    rng = np.random.default_rng(5)
    f, c = 24, 16
    w_scale = rng.uniform(0.002, 0.004, f).astype(F32)
    consts = {
        "xs": np.float32(2 / 255), "xz": np.uint8(128),
        "w": rng.integers(-127, 128, (f, c, 3, 3)).astype("int8"), "ws": w_scale,
        "wz": np.zeros(f, "int8"),
        "b": rng.integers(-5000, 5000, f).astype("int32"), "bs": np.float32(2 / 255) * w_scale,
        "bz": np.zeros(f, "int32"), "ys": np.float32(0.02), "yz": np.uint8(0),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
        n("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        n("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
        n("Conv", ["xd", "wd", "bd"], ["c"], pads=[1, 1, 1, 1], strides=[2, 2]),
        n("Relu", ["c"], ["r"]),
        n("QuantizeLinear", ["r", "ys", "yz"], ["y"]),
    ]
    x = rng.integers(0, 256, (1, c, 15, 15)).astype("uint8")
    info = helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, list(x.shape))
    model = _model(nodes, info, consts)
    fused = _fused_ops(model)
    assert "qnn.conv2d(" in fused and _FLOAT_CONV.search(fused) is None
    assert "divide(" not in fused  # QuantizeLinear's division folded into the scale
    assert _steps(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]) <= 1


def test_qdq_depthwise_conv_within_one_step_of_onnxruntime() -> None:
    rng = np.random.default_rng(6)
    c = 20
    consts = {
        "xs": np.float32(2 / 255), "xz": np.uint8(120),
        "w": rng.integers(-127, 128, (c, 1, 5, 5)).astype("int8"),
        "ws": rng.uniform(0.002, 0.004, c).astype(F32), "wz": np.zeros(c, "int8"),
        "ys": np.float32(0.03), "yz": np.uint8(128),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
        n("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        n("Conv", ["xd", "wd"], ["c"], pads=[2, 2, 2, 2], strides=[2, 2], group=c),
        n("QuantizeLinear", ["c", "ys", "yz"], ["y"]),
    ]
    x = rng.integers(0, 256, (1, c, 14, 14)).astype("uint8")
    info = helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, list(x.shape))
    model = _model(nodes, info, consts)
    fused = _fused_ops(model)
    assert "qnn.conv2d(" in fused and _FLOAT_CONV.search(fused) is None
    got, want = _pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]
    assert _steps(got, want) <= 1 and len(np.unique(want)) > 20


def test_qdq_matmul_within_one_step_of_onnxruntime() -> None:
    rng = np.random.default_rng(6)
    consts = {
        "xs": np.float32(0.03), "xz": np.uint8(120),
        "w": rng.integers(-127, 128, (48, 20)).astype("int8"),
        "ws": rng.uniform(0.002, 0.01, 20).astype(F32), "wz": np.zeros(20, "int8"),
        "ys": np.float32(0.2), "yz": np.uint8(128),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
        n("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=1),
        n("MatMul", ["xd", "wd"], ["m"]),
        n("QuantizeLinear", ["m", "ys", "yz"], ["y"]),
    ]
    x = rng.integers(0, 256, (2, 3, 48)).astype("uint8")
    info = helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, list(x.shape))
    model = _model(nodes, info, consts)
    fused = _fused_ops(model)
    assert "qnn.conv2d" in fused and "nn.dense" not in fused
    assert _steps(_pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]) <= 1


def test_qdq_gemm_trans_b_with_bias_within_one_step_of_onnxruntime() -> None:
    rng = np.random.default_rng(8)
    n_out, k = 30, 64
    w_scale = rng.uniform(0.002, 0.01, n_out).astype(F32)
    consts = {
        "xs": np.float32(0.03), "xz": np.uint8(110),
        "w": rng.integers(-127, 128, (n_out, k)).astype("int8"), "ws": w_scale,
        "wz": np.zeros(n_out, "int8"),
        "b": rng.integers(-4000, 4000, n_out).astype("int32"), "bs": np.float32(0.03) * w_scale,
        "bz": np.zeros(n_out, "int32"), "ys": np.float32(0.1), "yz": np.uint8(128),
    }  # fmt: skip
    n = helper.make_node
    nodes = [
        n("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
        n("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
        n("DequantizeLinear", ["b", "bs", "bz"], ["bd"], axis=0),
        n("Gemm", ["xd", "wd", "bd"], ["m"], transB=1),
        n("QuantizeLinear", ["m", "ys", "yz"], ["y"]),
    ]
    x = rng.integers(0, 256, (3, k)).astype("uint8")
    info = helper.make_tensor_value_info("x", onnx.TensorProto.UINT8, list(x.shape))
    model = _model(nodes, info, consts)
    fused = _fused_ops(model)
    assert "qnn.conv2d" in fused and "nn.dense" not in fused
    got, want = _pytvm(model, {"x": x})[0], _onnxruntime(model, {"x": x})[0]
    assert _steps(got, want) <= 1 and len(np.unique(want)) > 20


def _float_cnn() -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    inits: list[onnx.TensorProto] = []

    def w(name: str, *shape: int, s: float = 0.2) -> str:
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * s).astype(F32), name))
        return name

    n = helper.make_node
    nodes = [
        n("Conv", ["x", w("w1", 16, 3, 3, 3), w("b1", 16, s=0.1)], ["c1"], pads=[1, 1, 1, 1]),
        n("Relu", ["c1"], ["r1"]),
        n("Conv", ["r1", w("w2", 16, 16, 3, 3), w("b2", 16, s=0.1)], ["c2"], pads=[1, 1, 1, 1],
          strides=[2, 2]),
        n("Relu", ["c2"], ["r2"]),
        n("GlobalAveragePool", ["r2"], ["gap"]),
        n("Flatten", ["gap"], ["flat"]),
        n("MatMul", ["flat", w("fc", 16, 10)], ["mm"]),
        n("Add", ["mm", w("fcb", 10, s=0.1)], ["y"]),
    ]  # fmt: skip
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, 3, 16, 16])
    y = helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, 10])
    graph_ = helper.make_graph(nodes, "cnn", [x], [y], inits)
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)])


class _RandomImages(CalibrationDataReader):  # type: ignore[misc]
    def __init__(self) -> None:
        rng = np.random.default_rng(1)
        self.batches = iter(
            [{"x": rng.uniform(-1, 1, (1, 3, 16, 16)).astype(F32)} for _ in range(8)]
        )

    def get_next(self) -> dict[str, np.ndarray] | None:
        return next(self.batches, None)


def test_quantize_static_qdq_cnn_runs_integer_convs_within_one_step(tmp_path: Path) -> None:
    source, target = tmp_path / "cnn.onnx", tmp_path / "cnn_qdq.onnx"
    onnx.save(_float_cnn(), source)
    quantize_static(
        str(source),
        str(target),
        _RandomImages(),
        quant_format=QuantFormat.QDQ,
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        per_channel=True,
    )
    model = onnx.load(target)
    fused = _fused_ops(model)
    assert fused.count("qnn.conv2d(") == 3 and _FLOAT_CONV.search(fused) is None  # + MatMul
    x = np.random.default_rng(2).uniform(-1, 1, (1, 3, 16, 16)).astype(F32)
    (got,) = _pytvm(model, {"x": x})
    (expected,) = _onnxruntime(model, {"x": x})
    # The output is dequantized: compare in steps of its scale.
    scale = np.abs(expected).max() / 127
    assert np.abs(got - expected).max() <= scale * 1.01
