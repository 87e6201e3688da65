"""Compile an ONNX model: import it, look at the fused graph, build one shared object, run it
with the graph executor, check it against ONNX Runtime, and see where the time and memory go.

Run: ``python examples/08_onnx_model.py`` (needs ``onnx``; ``onnxruntime`` for the check).
"""

from __future__ import annotations

import importlib.util
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

import pytvm


def _model() -> Any:
    """A small CNN: conv + batch norm + relu, a residual conv block, pooling, a classifier."""
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(0)

    def weight(name: str, *shape: int) -> Any:
        return numpy_helper.from_array((rng.standard_normal(shape) * 0.2).astype("float32"), name)

    inits = [weight("w1", 8, 3, 3, 3), weight("w2", 8, 8, 3, 3), weight("fc", 10, 8)]
    inits += [weight(n, 8) for n in ("scale", "bias", "mean")]
    inits.append(numpy_helper.from_array(np.ones(8, "float32"), "var"))
    nodes = [
        helper.make_node("Conv", ["x", "w1"], ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node(
            "BatchNormalization", ["c1", "scale", "bias", "mean", "var"], ["b1"], name="bn1"
        ),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Add", ["c2", "r1"], ["a2"], name="residual"),
        helper.make_node("Relu", ["a2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["p"], name="pool"),
        helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1, name="classifier"),
    ]
    graph = helper.make_graph(
        nodes,
        "small_cnn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main() -> None:
    """Import, optimize, build, export, run, check, profile."""
    if importlib.util.find_spec("onnx") is None:
        print("skipped: onnx is not installed (pip install onnx onnxruntime)")
        return
    from pytvm import graph
    from pytvm.contrib import graph_executor
    from pytvm.frontend import from_onnx
    from pytvm.runtime.graph_executor import debug_executor

    model = _model()
    mod, params = from_onnx(model)
    print(f"imported: inputs {[p.name for p in mod['main'].params][:1]}, {len(params)} params")
    fused = graph.transform.optimize(
        mod.with_function(graph.transform.bind_params(mod["main"], params), "main")
    )
    kernels = [line for line in str(fused).splitlines() if "Primitive=1" in line]
    print(f"after the passes: {len(kernels)} fused kernels (batch norm folded into conv1)")

    lib = graph.build(mod, target="llvm", params=params)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "net.so"
        lib.export_library(str(path))
        loaded = pytvm.runtime.load_module(str(path))  # kernels, graph and params in one file
        m = graph_executor.GraphModule(loaded["default"](pytvm.cpu()))
        x = np.random.default_rng(1).standard_normal((1, 3, 16, 16)).astype("float32")
        m.set_input("x", x)
        m.run()
        y = m.get_output(0).numpy()
        print(f"output: shape {y.shape}, argmax {int(y.argmax())}")
        # timed before ONNX Runtime starts: its worker threads spin after each run and would
        # compete for the cores with this executor's
        print(f"latency: {m.benchmark(pytvm.cpu(), repeat=5, number=10).median * 1e6:.0f} us")
        try:
            import onnxruntime
        except ImportError:
            print("onnxruntime not installed: no check")
        else:
            sess = onnxruntime.InferenceSession(
                model.SerializeToString(),
                providers=["CPUExecutionProvider"],
            )
            (expected,) = sess.run(None, {"x": x})
            print(f"matches ONNX Runtime: {bool(np.allclose(y, expected, rtol=1e-4, atol=1e-4))}")

        debug = debug_executor.create(lib.get_graph_json(), lib.get_lib(), pytvm.cpu())
        debug.module["load_params"](pytvm.runtime.save_param_dict(lib.get_params()))
        debug.set_input("x", x)
        print(debug.profile(number=5).table(top=3))

    plan = graph.plan_memory(mod, params)
    print(plan)


if __name__ == "__main__":
    main()
