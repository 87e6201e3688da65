"""QLinearConv 3x3 64 -> 64 on 56x56 (uint8 data, int8 per-channel weights): pytvm against ONNX
Runtime at 1 thread, same process, interleaved best-of timings; also the QDQ form of the same
convolution and the float convolution as a yardstick.

Run pinned: ``taskset -c 1 .venv/bin/python bench/quantized_conv.py``.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
import onnx
import onnxruntime
from onnx import helper, numpy_helper

import pytvm
from pytvm import graph
from pytvm.frontend import from_onnx
from pytvm.runtime.graph_executor import GraphModule


def _model(c: int, f: int, size: int, form: str) -> onnx.ModelProto:
    rng = np.random.default_rng(0)
    w = rng.integers(-127, 128, (f, c, 3, 3)).astype("int8")
    consts = {
        "xs": np.float32(0.02), "xz": np.uint8(128), "w": w,
        "ws": rng.uniform(0.001, 0.004, f).astype("float32"), "wz": np.zeros(f, dtype="int8"),
        "ys": np.float32(0.1), "yz": np.uint8(100), "b": rng.integers(-500, 500, f).astype("int32"),
        "wf": (w * 0.003).astype("float32"),
    }  # fmt: skip
    n = helper.make_node
    pads = [1, 1, 1, 1]
    if form == "qlinear":
        ins = ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"]
        nodes, dtype = [n("QLinearConv", ins, ["y"], pads=pads)], onnx.TensorProto.UINT8
    elif form == "float":
        nodes, dtype = [n("Conv", ["x", "wf"], ["y"], pads=pads)], onnx.TensorProto.FLOAT
    else:
        nodes = [
            n("DequantizeLinear", ["x", "xs", "xz"], ["xd"]),
            n("DequantizeLinear", ["w", "ws", "wz"], ["wd"], axis=0),
            n("Conv", ["xd", "wd"], ["c"], pads=pads),
            n("QuantizeLinear", ["c", "ys", "yz"], ["y"]),
        ]
        dtype = onnx.TensorProto.UINT8
    x = helper.make_tensor_value_info("x", dtype, [1, c, size, size])
    y = helper.make_tensor_value_info("y", dtype, None)
    inits = [numpy_helper.from_array(np.asarray(v), k) for k, v in consts.items()]
    graph_ = helper.make_graph(nodes, form, [x], [y], inits)
    return helper.make_model(graph_, opset_imports=[helper.make_opsetid("", 17)])


def _best_ms(run: Callable[[], object], seconds: float) -> float:
    run()
    best, deadline = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def main() -> None:
    """Time each form at 1 thread against onnxruntime and print one line per form."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=2.0)
    parser.add_argument("--forms", default="qlinear,qdq,float")
    opts = parser.parse_args()
    pytvm.runtime.set_num_threads(1)
    c = f = 64
    size = 56
    flops = 2 * c * f * 9 * size * size
    for form in opts.forms.split(","):
        model = _model(c, f, size, form)
        rng = np.random.default_rng(1)
        if form == "float":
            x = rng.uniform(-1, 1, (1, c, size, size)).astype("float32")
        else:
            x = rng.integers(0, 256, (1, c, size, size)).astype("uint8")
        mod, params = from_onnx(model)
        m = GraphModule(graph.build(mod, target="llvm", params=params)["default"](pytvm.cpu()))
        m.set_input("x", x)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1
        sess = onnxruntime.InferenceSession(model.SerializeToString(), options)
        (expected,) = sess.run(None, {"x": x})
        m.run()
        got = m.get_output(0).numpy()
        diff = np.abs(got.astype("float64") - expected.astype("float64")).max()
        ours = min(_best_ms(m.run, opts.seconds) for _ in range(2))
        theirs = min(_best_ms(lambda: sess.run(None, {"x": x}), opts.seconds) for _ in range(2))
        print(
            f"{form:8s} pytvm {ours:7.3f} ms ({flops / ours / 1e6:6.1f} GOP/s)  "
            f"ORT {theirs:7.3f} ms  ratio {ours / theirs:5.2f}x  max diff {diff:g}"
        )


if __name__ == "__main__":
    main()
