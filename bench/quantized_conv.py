"""Quantized convolutions and matrix products against ONNX Runtime at 1 thread, before/after.

Before and after the integer kernels, in one run (same process, interleaved best-of timings):

- ``qlinear``: QLinearConv 3x3 64 -> 64 on 56x56, uint8 data, per-channel symmetric int8
  weights; *before* is the int16 path (the same model with weight zero points of 1, which keeps
  the importer on it), *after* ``qnn.conv2d`` (8-bit dot products where the CPU has them);
- ``qdq``: the same convolution as QuantizeLinear/DequantizeLinear nodes around a float Conv
  (what ``quantize_static`` writes); *before* is FuseQDQ disabled (float arithmetic);
- ``qdq-mlp``: DequantizeLinear -> MatMul 256 -> 1024 -> Relu -> QuantizeLinear -> ... -> MatMul
  1024 -> 256 over 128 rows; before: FuseQDQ disabled;
- ``qgemm``: com.microsoft QGemm 1x1280 -> 1000 (per-column int8 weight, int32 bias, uint8
  out); before and after are the same;
- ``qlinear-1x1-16-96``: QLinearConv 1x1 16 -> 96 on 112x112 (before: the int16 path);
- ``qdq-dw-*`` and ``qlinear-dw-*``: depthwise convolutions (channels, size, kernel, stride);
  before: FuseQDQ disabled (float) and the int16 path (weight zero points of 1);
- ``float``: the float convolution of ``qlinear``, as a yardstick.

Run pinned: ``taskset -c 1 .venv/bin/python bench/quantized_conv.py``.
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
import onnx
import onnxruntime
from _harness import best_ms
from onnx import helper, numpy_helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.ir.transform import PassContext
from pytvm.runtime.graph_executor import GraphModule

_U8 = onnx.TensorProto.UINT8
_F32 = onnx.TensorProto.FLOAT


def _conv_model(
    c: int,
    f: int,
    size: int,
    form: str,
    groups: int = 1,
    w_zero: int = 0,
    kernel: int = 3,
    stride: int = 1,
) -> Any:
    """QLinearConv, its QDQ form or the float Conv, ``kernel`` x ``kernel`` with the padding
    that keeps the size at stride 1.
    """
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (f, c // groups, kernel, kernel)).astype("int8")
    consts = {
        "xs": np.float32(0.02), "xz": np.uint8(128), "w": w,
        "ws": rng.uniform(0.001, 0.004, f).astype("float32"), "wz": np.full(f, w_zero, "int8"),
        "ys": np.float32(0.1), "yz": np.uint8(100), "b": rng.integers(-500, 500, f).astype("int32"),
        "wf": (w * 0.003).astype("float32"),
    }  # fmt: skip
    n = helper.make_node
    pad = kernel // 2
    attrs: dict[str, Any] = {"pads": [pad] * 4, "group": groups, "strides": [stride] * 2}
    if form == "qlinear":
        ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
        nodes, dtype = [n("QLinearConv", ins, ["y"], **attrs)], _U8
    elif form == "float":
        nodes, dtype = [n("Conv", ["x", "wf"], ["y"], **attrs)], _F32
    else:
        nodes = [
            n("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
            n("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
            n("Conv", ["xd", "wd"], ["c"], **attrs),
            n("QuantizeLinear", ["c", "ys", "yz"], ["y"]),
        ]
        dtype = _U8
    return _wrap(nodes, consts, helper.make_tensor_value_info("x", dtype, [1, c, size, size]))


def _mlp_model(rows: int, width: int, hidden: int) -> Any:
    """Two QDQ MatMuls with a Relu between, per-column int8 weights."""
    rng = np.random.default_rng(0)
    consts: dict[str, Any] = {"xs": np.float32(0.02), "xz": np.uint8(128)}
    n = helper.make_node
    nodes, x = [], "x"
    for i, (k, m) in enumerate([(width, hidden), (hidden, width)]):
        consts.update({
            f"w{i}": rng.integers(-127, 128, (k, m)).astype("int8"),
            f"ws{i}": rng.uniform(0.0005, 0.002, m).astype("float32"),
            f"wz{i}": np.zeros(m, "int8"), f"ys{i}": np.float32(0.05), f"yz{i}": np.uint8(0),
        })  # fmt: skip
        xs, xz = ("xs", "xz") if i == 0 else ("ys0", "yz0")
        nodes += [
            n("DequantizeLinear", [x, xs, xz], [f"xd{i}"]),
            n("DequantizeLinear", [f"w{i}", f"ws{i}", f"wz{i}"], [f"wd{i}"], axis=1),
            n("MatMul", [f"xd{i}", f"wd{i}"], [f"m{i}"]),
            n("Relu", [f"m{i}"], [f"r{i}"]),
            n("QuantizeLinear", [f"r{i}", f"ys{i}", f"yz{i}"], ["y" if i else "q0"]),
        ]
        x = "q0"
    return _wrap(nodes, consts, helper.make_tensor_value_info("x", _U8, [1, rows, width]))


def _qgemm_model(k: int, n: int) -> Any:
    """com.microsoft QGemm of one uint8 row by a per-column int8 ``[n, k]`` weight (transB),
    an int32 bias and a uint8 output: a quantized classifier.
    """
    rng = np.random.default_rng(0)
    consts = {
        "xs": np.float32(0.02), "xz": np.uint8(128),
        "w": rng.integers(-127, 128, (n, k)).astype("int8"),
        "ws": rng.uniform(0.0005, 0.002, n).astype("float32"), "wz": np.zeros(n, "int8"),
        "b": rng.integers(-500, 500, n).astype("int32"), "ys": np.float32(0.3),
        "yz": np.uint8(100),
    }  # fmt: skip
    ins = ["x", "xs", "xz", "w", "ws", "wz", "b", "ys", "yz"]
    node = helper.make_node("QGemm", ins, ["y"], domain="com.microsoft", transB=1)
    model = _wrap([node], consts, helper.make_tensor_value_info("x", _U8, [1, k]))
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    return model


def _wrap(nodes: list[Any], consts: dict[str, Any], x: Any) -> Any:
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    y = onnx.ValueInfoProto(name="y")
    graph_ = helper.make_graph(nodes, "quantized", [x], [y], inits)
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)])


def _pytvm(model: Any, x: np.ndarray, disabled: tuple[str, ...] = ()) -> GraphModule:
    mod, params = from_onnx(model)
    with PassContext(opt_level=3, disabled_pass=disabled):
        lib = graph.build(mod, target="llvm", params=params)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    return m


def _cases() -> list[tuple[str, Any, Any, tuple[str, ...], np.ndarray]]:
    """(name, model after, model before, passes disabled before, input) of each case."""
    rng = np.random.default_rng(1)

    def codes(*shape: int) -> np.ndarray:
        return rng.integers(0, 256, shape).astype("uint8")

    image = codes(1, 64, 56, 56)
    qdq = _conv_model(64, 64, 56, "qdq")
    mlp = _mlp_model(128, 256, 1024)
    floats = rng.uniform(-1, 1, image.shape).astype("float32")
    fused = ("FuseQDQ",)
    cases = [
        ("qlinear", _conv_model(64, 64, 56, "qlinear"),
         _conv_model(64, 64, 56, "qlinear", w_zero=1), (), image),
        ("qdq", qdq, qdq, fused, image),
        ("qdq-mlp", mlp, mlp, fused, codes(1, 128, 256)),
        ("qgemm", _qgemm_model(1280, 1000), _qgemm_model(1280, 1000), (), codes(1, 1280)),
        ("qlinear-1x1-16-96", _conv_model(16, 96, 112, "qlinear", kernel=1),
         _conv_model(16, 96, 112, "qlinear", kernel=1, w_zero=1), (), codes(1, 16, 112, 112)),
    ]  # fmt: skip
    # depthwise (c, size, kernel, stride): before is the int16 path (QLinearConv, weight zero
    # points of 1) or the float convolution (QDQ, FuseQDQ disabled)
    for c, size, kernel, stride in [(128, 28, 3, 1), (144, 56, 3, 1), (672, 14, 5, 2),
                                    (96, 112, 3, 2)]:  # fmt: skip
        tail = f"{c}-{size}-k{kernel}s{stride}"
        x = codes(1, c, size, size)
        dw = {"groups": c, "kernel": kernel, "stride": stride}
        model = _conv_model(c, c, size, "qdq", **dw)
        cases.append((f"qdq-dw-{tail}", model, model, fused, x))
        cases.append((f"qlinear-dw-{tail}", _conv_model(c, c, size, "qlinear", **dw),
                      _conv_model(c, c, size, "qlinear", w_zero=1, **dw), (), x))  # fmt: skip
    cases.append(("float", _conv_model(64, 64, 56, "float"), _conv_model(64, 64, 56, "float"),
                  (), floats))  # fmt: skip
    return cases


def main() -> None:
    """Time each case before and after at 1 thread against onnxruntime; one line per case."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=1.0)
    parser.add_argument("--cases", default="", help="comma-separated names (default: all)")
    opts = parser.parse_args()
    pytvm.runtime.set_num_threads(1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    print(f"onnxruntime {onnxruntime.__version__}, 1 thread; best-of times in ms; diff: the "
          "largest difference from onnxruntime's output (codes, or float for 'float')")  # fmt: skip
    print(f"{'case':26} {'before':>8} {'after':>8} {'ORT':>8} {'after/ORT':>9} {'diff':>6}")
    wanted = set(filter(None, opts.cases.split(",")))
    for name, after_model, before_model, disabled, x in _cases():
        if wanted and name not in wanted:
            continue
        after = _pytvm(after_model, x)
        before = _pytvm(before_model, x, disabled)
        sess = onnxruntime.InferenceSession(after_model.SerializeToString(), options)
        (expected,) = sess.run(None, {"x": x})
        after.run()
        got = after.get_output(0).numpy()
        diff = np.abs(got.astype("float64") - expected.astype("float64")).max()
        times = [float("inf")] * 3
        for _ in range(2):  # interleaved
            for i, run in enumerate([before.run, after.run, lambda: sess.run(None, {"x": x})]):
                times[i] = min(times[i], best_ms(run, opts.seconds))
        print(
            f"{name:26} {times[0]:8.3f} {times[1]:8.3f} {times[2]:8.3f} "
            f"{times[1] / times[2]:8.2f}x {diff:6.3g}"
        )


if __name__ == "__main__":
    main()
