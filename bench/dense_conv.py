"""Dense (one group) convolutions with few output channels on large planes (ONNX Conv with a
constant weight, bias and Relu) against ONNX Runtime at 1 thread: DBNet's 3x3 96->24 and its
probability head, MobileNet/EfficientNet projections, stems, UNet decoders, and the
power-of-two ResNet layers as a check.

Each case is one graph (``from_onnx`` + ``pytvm.graph.build(target="llvm")`` + the graph
executor) timed best-of, interleaved with ONNX Runtime (``intra_op_num_threads=1``); the
implementation the strategy table chose is printed with it, and the achieved GFLOP/s.

Run pinned: ``taskset -c 1 .venv/bin/python bench/dense_conv.py`` (``--cases 3x3`` keeps the
cases whose name contains a substring; ``--model dbnet`` takes the cases from an exported model of
``bench/real_models.py`` instead, each with the number of its layers, and sums both peers' time
over them).
"""

from __future__ import annotations

import argparse
from collections import Counter
from pathlib import Path
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

#: (input channels, output channels, size, kernel, stride) of each case.
CASES = [
    (96, 24, 160, 3, 1), (64, 32, 80, 3, 1), (32, 1, 160, 3, 1), (3, 32, 224, 3, 2),
    (96, 24, 56, 1, 1), (144, 24, 56, 1, 1), (240, 40, 28, 1, 1), (32, 16, 112, 1, 1),
    (24, 96, 160, 3, 1), (96, 24, 80, 3, 1), (16, 16, 320, 3, 1),
    (64, 64, 56, 3, 1), (128, 128, 28, 3, 1), (256, 256, 14, 3, 1), (512, 512, 7, 3, 1),
    (64, 256, 56, 1, 1), (256, 64, 56, 1, 1), (512, 128, 28, 1, 1), (1024, 256, 14, 1, 1),
]  # fmt: skip


def model_cases(path: Path) -> Counter[tuple[int, int, int, int, int]]:
    """The square one-group convolutions with a constant weight of an ONNX model, counted."""
    from onnx import shape_inference

    m = shape_inference.infer_shapes(onnx.load(str(path)))
    values = [*m.graph.value_info, *m.graph.input]
    shapes = {v.name: [d.dim_value for d in v.type.tensor_type.shape.dim] for v in values}
    weights = {i.name: list(i.dims) for i in m.graph.initializer}
    cases: Counter[tuple[int, int, int, int, int]] = Counter()
    for node in m.graph.node:
        if node.op_type != "Conv":
            continue
        attrs = {a.name: list(a.ints) or a.i for a in node.attribute}
        w, x = weights.get(node.input[1]), shapes.get(node.input[0])
        if attrs.get("group", 1) != 1 or w is None or not x or len(x) != 4 or len(w) != 4:
            continue
        k, stride = w[2], attrs.get("strides", [1, 1])[0]
        pads = attrs.get("pads", [0] * 4)
        if x[2] != x[3] or w[2] != w[3] or any(p != k // 2 for p in pads) or x[2] < 2:
            continue
        cases[(x[1], w[0], x[2], k, stride)] += 1
    return cases


def conv_model(ci: int, co: int, size: int, k: int, stride: int) -> Any:
    """Conv (pads k // 2) + bias + Relu over ``[1, ci, size, size]``."""
    rng = np.random.default_rng(0)
    w = rng.uniform(-1, 1, (co, ci, k, k)).astype("float32")
    b = rng.uniform(-1, 1, co).astype("float32")
    pad = k // 2
    nodes = [
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[pad] * 4, strides=[stride] * 2),
        helper.make_node("Relu", ["c"], ["y"]),
    ]
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")]
    x = helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, ci, size, size])
    y = onnx.ValueInfoProto(name="y")
    g = helper.make_graph(nodes, "conv", [x], [y], inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


def _chosen(ci: int, co: int, size: int, k: int, stride: int) -> str:
    from pytvm.topi.x86.strategy import OpWorkload, select

    pad = k // 2
    wl = OpWorkload(
        "nn.conv2d", (1, ci, size, size), (co, ci, k, k), "float32", "float32",
        {"strides": (stride, stride), "padding": (pad,) * 4, "dilation": (1, 1), "groups": 1},
        weight_constant=True,
    )  # fmt: skip
    row = select("nn.conv2d", wl)
    return row.name + (f" {row.weight_layout(wl)}" if row.weight_layout else "")


def main() -> None:
    """Time each case against onnxruntime at 1 thread; one line per case."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--seconds", type=float, default=0.6)
    parser.add_argument("--cases", default="", help="substrings of case names (comma-separated)")
    parser.add_argument("--model", help="the convolutions of this exported model instead")
    opts = parser.parse_args()
    cases: Counter[tuple[int, int, int, int, int]] = Counter(CASES)
    if opts.model:
        from real_models_export import DEFAULT_DIR

        cases = model_cases(Path(DEFAULT_DIR) / f"{opts.model}.onnx")
    pytvm.runtime.set_num_threads(1)
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = 1
    wanted = [w for w in opts.cases.split(",") if w]
    print(f"{'case':30} {'pytvm':>8} {'ORT':>8} {'ratio':>6} {'GF/s':>6} {'diff':>8}  impl")
    ratios, totals = [], [0.0, 0.0]
    for (ci, co, size, k, stride), count in cases.items():
        name = f"{k}x{k} s{stride} {ci}->{co} on {size}x{size}" + (
            f" x{count}" if count > 1 else ""
        )
        if wanted and not any(w in name for w in wanted):
            continue
        model = conv_model(ci, co, size, k, stride)
        x = np.random.default_rng(1).uniform(-1, 1, (1, ci, size, size)).astype("float32")
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
        totals = [t + count * ms for t, ms in zip(totals, times, strict=True)]
        out = (size + 2 * (k // 2) - k) // stride + 1
        gflops = 2 * ci * co * k * k * out * out / times[0] / 1e6
        print(
            f"{name:30} {times[0]:8.4f} {times[1]:8.4f} {times[0] / times[1]:6.2f} "
            f"{gflops:6.1f} {diff:8.2g}  {_chosen(ci, co, size, k, stride)}",
            flush=True,
        )
    if ratios:
        gmean = float(np.exp(np.mean(np.log(ratios))))
        print(
            f"geomean pytvm/ORT {gmean:.3f}, worst {max(ratios):.2f}; total pytvm "
            f"{totals[0]:.3f} ms, ORT {totals[1]:.3f} ms"
        )


if __name__ == "__main__":
    main()
