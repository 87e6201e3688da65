"""Depthwise convolutions (ONNX Conv with group = C, constant weight, bias, Relu) against ONNX
Runtime at 1 thread: the shapes of MobileNet/EfficientNet/MnasNet blocks, strides 1 and 2,
kernels 3 and 5, odd channel counts.

Each case is one graph (``from_onnx`` + ``pytvm.graph.build(target="llvm")`` + the graph
executor) timed best-of, interleaved with ONNX Runtime (``intra_op_num_threads=1``); the
implementation the strategy table chose is printed with it.

Run pinned: ``taskset -c 1 .venv/bin/python bench/depthwise_conv.py`` (``--cases 7x7`` keeps the
cases whose name contains a substring).
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

#: (channels, size, kernel, stride) of each case.
CASES = [
    (32, 112, 3, 1), (32, 112, 3, 2), (144, 56, 3, 1), (144, 56, 3, 2), (144, 56, 5, 2),
    (240, 28, 3, 1), (240, 28, 5, 1), (240, 28, 3, 2), (480, 14, 3, 1), (480, 14, 5, 1),
    (672, 14, 5, 1), (672, 14, 5, 2), (672, 14, 3, 2), (960, 7, 3, 1), (1152, 7, 5, 1),
    (1152, 7, 3, 1), (72, 56, 3, 2), (120, 28, 5, 1), (200, 14, 3, 1), (1000, 7, 3, 1),
    (72, 28, 3, 1), (120, 14, 3, 2), (200, 7, 5, 1), (184, 14, 3, 1),
]  # fmt: skip


def conv_model(c: int, size: int, k: int, stride: int) -> Any:
    """Depthwise Conv (pads k // 2) + bias + Relu over ``[1, c, size, size]``."""
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (c, 1, k, k)).astype("float32")
    b = rng.uniform(-1, 1, c).astype("float32")
    pad = k // 2
    nodes = [
        helper.make_node(
            "Conv", ["x", "w", "b"], ["c"], group=c, pads=[pad] * 4, strides=[stride] * 2
        ),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, c, size, size])
    y = onnx.ValueInfoProto(name="y")
    g = helper.make_graph(nodes, "depthwise", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _chosen(model: Any) -> str:
    from pytvm.topi.x86.strategy import OpWorkload, select

    w = model.graph.initializer[0]
    c = int(w.dims[0])
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    node = model.graph.node[0]
    attrs = {a.name: list(a.ints) or a.i for a in node.attribute}
    pads = tuple(attrs["pads"])
    wl = OpWorkload(
        "nn.conv2d", tuple(shape), tuple(w.dims), "float32", "float32",
        {"strides": tuple(attrs["strides"]), "padding": pads, "dilation": (1, 1), "groups": c},
        weight_constant=True,
    )  # fmt: skip
    return select("nn.conv2d", wl).name


def main() -> None:
    """Time each case against onnxruntime at 1 thread; one line per case."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=0.5)
    parser.add_argument("--cases", default="", help="substrings of case names (comma-separated)")
    opts = parser.parse_args()
    pytvm.runtime.set_num_threads(1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    wanted = [w for w in opts.cases.split(",") if w]
    print(f"{'case':22} {'pytvm':>8} {'ORT':>8} {'ratio':>6} {'diff':>8}  implementation")
    ratios = []
    for c, size, k, stride in CASES:
        name = f"{k}x{k} s{stride} {c} on {size}x{size}"
        if wanted and not any(w in name for w in wanted):
            continue
        model = conv_model(c, size, k, stride)
        x = np.random.default_rng(1).uniform(-1, 1, (1, c, size, size)).astype("float32")
        mod, params = from_onnx(model)
        with PassContext(opt_level=3):
            lib = graph.build(mod, target="llvm", params=params)
        m = GraphModule(lib["default"](pytvm.cpu()))
        m.set_input("x", x)
        sess = onnxruntime.InferenceSession(model.SerializeToString(), options)
        (expected,) = sess.run(None, {"x": x})
        m.run()
        diff = float(np.abs(m.get_output(0).numpy() - expected).max())
        times = [float("inf")] * 2
        for _ in range(3):
            for i, run in enumerate([m.run, lambda: sess.run(None, {"x": x})]):
                times[i] = min(times[i], best_ms(run, opts.seconds / 3))
        ratios.append(times[0] / times[1])
        print(
            f"{name:22} {times[0]:8.4f} {times[1]:8.4f} {times[0] / times[1]:6.2f} {diff:8.2g}  "
            f"{_chosen(model)}",
            flush=True,
        )
    if ratios:
        gmean = float(np.exp(np.mean(np.log(ratios))))
        print(f"geomean pytvm/ORT {gmean:.3f}, worst {max(ratios):.2f}")


if __name__ == "__main__":
    main()
