"""Speech-style recurrent stacks: pytvm against ONNX Runtime at one thread (or ``--threads``).

A 2-layer bidirectional LSTM and GRU (input 80, hidden 256, batch 1, T steps; ONNX models made
here with ``onnx.helper``, random weights), each imported, built (``pytvm.graph.build``,
llvm) and run by pytvm's graph executor, and run by ONNX Runtime (``intra_op_num_threads``)
in the same process, their runs interleaved (a loaded machine slows both alike); outputs are
compared. Pin it: ``taskset -c 1 python bench/rnn_layers.py``
(``--steps 200 1500``; two threads: ``taskset -c 0,1 ... --threads 2``).
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

GATES = {"LSTM": 4, "GRU": 3}


def stacked_model(
    op: str, steps: int, inp: int = 80, hidden: int = 256, layers: int = 2
) -> onnx.ModelProto:
    """``layers`` bidirectional ``op`` layers, each layer's two directions concatenated."""
    rng = np.random.default_rng(0)
    nodes, inits = [], []
    x, size = "x", inp
    for k in range(layers):
        g = GATES[op] * hidden
        for name, shape in (
            (f"W{k}", (2, g, size)),
            (f"R{k}", (2, g, hidden)),
            (f"B{k}", (2, 2 * g)),
        ):
            scale = 1 / np.sqrt(hidden)
            inits.append(
                numpy_helper.from_array(
                    (rng.standard_normal(shape) * scale).astype("float32"), name
                )
            )
        ins = [x, f"W{k}", f"R{k}", f"B{k}"]
        nodes.append(
            helper.make_node(op, ins, [f"y{k}"], hidden_size=hidden, direction="bidirectional")
        )
        nodes.append(helper.make_node("Transpose", [f"y{k}"], [f"t{k}"], perm=[0, 2, 1, 3]))
        inits.append(numpy_helper.from_array(np.array([steps, 1, 2 * hidden], "int64"), f"s{k}"))
        nodes.append(helper.make_node("Reshape", [f"t{k}", f"s{k}"], [f"h{k}"]))
        x, size = f"h{k}", 2 * hidden
    graph = helper.make_graph(
        nodes,
        f"{op.lower()}_stack",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [steps, 1, inp])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [steps, 1, 2 * hidden])],
        inits,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def _median_ms(runs: Sequence[Callable[[], object]], seconds: float = 4.0) -> list[float]:
    """The median time of each of ``runs``, called in turn (so a loaded machine slows all
    alike), for ``seconds`` in all.
    """
    for run in runs:
        run()
    times: list[list[float]] = [[] for _ in runs]
    start = time.perf_counter()
    while len(times[0]) < 5 or time.perf_counter() - start < seconds:
        for run, spent in zip(runs, times, strict=True):
            t0 = time.perf_counter()
            run()
            spent.append(time.perf_counter() - t0)
    return [statistics.median(spent) * 1e3 for spent in times]


def measure(op: str, steps: int, threads: int = 1) -> tuple[float, float, float, float]:
    """``(build s, pytvm ms, onnxruntime ms, max abs difference)``."""
    import onnxruntime as ort

    import pytvm as tvm
    from pytvm import graph
    from pytvm.frontend.onnx import from_onnx
    from pytvm.runtime import graph_executor

    tvm.runtime.set_num_threads(threads)
    model = stacked_model(op, steps)
    x = np.random.default_rng(1).standard_normal((steps, 1, 80)).astype("float32")
    t0 = time.perf_counter()
    mod, params = from_onnx(model)
    lib = graph.build(mod, target="llvm", params=params)
    build = time.perf_counter() - t0
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))
    m.set_input("x", x)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(model.SerializeToString(), opts)
    ours, theirs = _median_ms([m.run, lambda: sess.run(None, {"x": x})])
    m.run()
    got = m.get_output(0).numpy()
    want = sess.run(None, {"x": x})[0]
    return build, ours, theirs, float(np.abs(got - want).max())


def main() -> None:
    """Print the table for the steps and operators asked for."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, nargs="+", default=[200])
    parser.add_argument("--ops", nargs="+", default=["LSTM", "GRU"])
    parser.add_argument(
        "--threads", type=int, default=1, help="threads of both (pin as many cores)"
    )
    args = parser.parse_args()
    print(f"{'model':<28}{'build s':>9}{'pytvm ms':>10}{'ORT ms':>9}{'ratio':>7}{'max err':>10}")
    for op in args.ops:
        for steps in args.steps:
            build, ours, theirs, err = measure(op, steps, args.threads)
            name = f"2x bi-{op} 80->256 T={steps}"
            ratio = ours / theirs
            print(f"{name:<28}{build:>9.2f}{ours:>10.2f}{theirs:>9.2f}{ratio:>7.2f}{err:>10.1e}")


if __name__ == "__main__":
    main()
