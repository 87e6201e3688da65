"""Operator cases of real models, each as a one-node ONNX model: pytvm against ONNX Runtime.

Each case is measured next to a neighbour of nearly the same size whose extents are powers of
two (or multiples of 16), so a schedule that only vectorizes the friendly shapes shows as a
cliff: ViT's attention batch matmul (197 tokens; 192), GPT-2's LM head (768 -> 50257; 50256),
SqueezeNet's classifier 1x1 conv (1000 channels; 1008), ShuffleNet/RegNet's 1x1 conv (232; 240),
DBNet's and UNet's stride-2 ConvTranspose (kernel 2 and kernel 4), the transcendentals of
activations (Tanh, Pow, Sigmoid, SiLU, Exp, Log; ReLU as the memory-bound reference) and
softmax over Whisper's (1, 4, 1500, 1500) scores and BERT's (1, 4, 128, 128).

For every case a worker process pinned with ``taskset`` (1 thread: core 1) builds the model with
pytvm (``from_onnx`` + ``graph.build(target="llvm")``) and ONNX Runtime, checks pytvm's output
against ONNX Runtime's, and times both in interleaved batches (best batch). Throughput counts a
multiply-add as two operations and one per output element for element-wise ops and softmax.
Run: ``python bench/ops.py`` (``--only softmax``, ``--json out.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from _harness import interleaved_best, run_worker
from real_models import CORES, build_pytvm, compare, cpu_description

from models import _fma_peak

UNARY = (1, 256, 56, 56)


@dataclass(frozen=True)
class Case:
    """One operator case: its ONNX node(s), inputs, constants and operation count."""

    name: str
    ops: tuple[tuple[str, tuple[str, ...], dict[str, Any]], ...]  # (op, inputs, attributes)
    inputs: Mapping[str, tuple[int, ...]]
    output: tuple[int, ...]
    flops: float
    consts: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    positive: bool = False  # inputs drawn from [0.1, 4) (Log, Pow with a tensor exponent)


def _matmul(b: int, m: int, k: int, n: int) -> Case:
    shapes = {"a": (b, m, k), "b": (b, k, n)}
    return Case(
        f"batch matmul [{b},{m},{k}]x[{b},{k},{n}]",
        (("MatMul", ("a", "b"), {}),),
        shapes,
        (b, m, n),
        2.0 * b * m * n * k,
    )


def _dense(m: int, k: int, n: int) -> Case:
    return Case(
        f"dense [1,{m},{k}] -> {n} (const weight)",
        (("MatMul", ("x", "w"), {}),),
        {"x": (1, m, k)},
        (1, m, n),
        2.0 * m * n * k,
        {"w": (k, n)},
    )


def _conv1x1(ci: int, co: int, hw: int) -> Case:
    return Case(
        f"conv 1x1 {ci}->{co} on {hw}x{hw}",
        (("Conv", ("x", "w", "bias"), {}),),
        {"x": (1, ci, hw, hw)},
        (1, co, hw, hw),
        2.0 * ci * co * hw * hw,
        {"w": (co, ci, 1, 1), "bias": (co,)},
    )


def _conv_transpose(c: int, hw: int, k: int, pad: int) -> Case:
    attrs = {"kernel_shape": [k, k], "strides": [2, 2], "pads": [pad] * 4}
    out = (hw - 1) * 2 - 2 * pad + k
    return Case(
        f"conv_transpose {c}->{c} k{k} s2 p{pad} on {hw}x{hw}",
        (("ConvTranspose", ("x", "w", "bias"), attrs),),
        {"x": (1, c, hw, hw)},
        (1, c, out, out),
        2.0 * c * c * k * k * hw * hw,
        {"w": (c, c, k, k), "bias": (c,)},
    )


def _unary(name: str, op: str, positive: bool = False) -> Case:
    n = math.prod(UNARY)
    return Case(
        f"{name} 1x256x56x56", ((op, ("x",), {}),), {"x": UNARY}, UNARY, n, positive=positive
    )


def _softmax(shape: tuple[int, ...]) -> Case:
    label = "x".join(map(str, shape))
    return Case(
        f"softmax {label} (last axis)",
        (("Softmax", ("x",), {"axis": -1}),),
        {"x": shape},
        shape,
        math.prod(shape),
    )


CASES = (
    _matmul(4, 197, 64, 197),
    _matmul(4, 192, 64, 192),
    _dense(16, 768, 50257),
    _dense(16, 768, 50256),
    _conv1x1(512, 1000, 13),
    _conv1x1(512, 1008, 13),
    _conv1x1(232, 232, 7),
    _conv1x1(240, 240, 7),
    _conv_transpose(24, 160, 2, 0),
    _conv_transpose(24, 160, 4, 1),
    _unary("relu", "Relu"),
    _unary("tanh", "Tanh"),
    _unary("sigmoid", "Sigmoid"),
    Case(
        "silu 1x256x56x56 (x*sigmoid(x))",
        (("Sigmoid", ("x",), {}), ("Mul", ("x", "s0"), {})),
        {"x": UNARY},
        UNARY,
        math.prod(UNARY),
    ),
    _unary("exp", "Exp"),
    _unary("log", "Log", positive=True),
    Case(
        "pow x^2.0 (constant) 1x256x56x56",
        (("Pow", ("x", "y"), {}),),
        {"x": UNARY},
        UNARY,
        math.prod(UNARY),
        {"y": ()},
    ),
    Case(
        "pow x^y (tensor) 1x256x56x56",
        (("Pow", ("x", "y"), {}),),
        {"x": UNARY, "y": UNARY},
        UNARY,
        math.prod(UNARY),
        positive=True,
    ),
    _softmax((1, 4, 1500, 1500)),
    _softmax((1, 4, 128, 128)),
)


def onnx_model(case: Case) -> Any:
    """The case as an ONNX model (opset 17): nodes chained by ``s<i>`` names, output ``out``."""
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(1)
    nodes = []
    for i, (op, ins, attrs) in enumerate(case.ops):
        out = "out" if i == len(case.ops) - 1 else f"s{i}"
        nodes.append(helper.make_node(op, list(ins), [out], **attrs))
    inits = []
    for name, shape in case.consts.items():
        value = np.full(shape, 2.0) if not shape else rng.standard_normal(shape) * 0.05
        inits.append(numpy_helper.from_array(value.astype(np.float32), name))
    graph = helper.make_graph(
        nodes,
        "case",
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in case.inputs.items()],
        [helper.make_tensor_value_info("out", TensorProto.FLOAT, case.output)],
        inits,
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def case_inputs(case: Case) -> dict[str, np.ndarray]:
    """Normal inputs, or uniform in [0.1, 4) for cases that need positive ones."""
    rng = np.random.default_rng(0)
    out = {}
    for name, shape in case.inputs.items():
        if case.positive:
            out[name] = rng.uniform(0.1, 4.0, shape).astype(np.float32)
        else:
            out[name] = rng.standard_normal(shape, dtype=np.float32)
    return out


def measure(case: Case, threads: int, min_seconds: float) -> dict[str, Any]:
    """Build the case with pytvm and ONNX Runtime, compare outputs, time both interleaved."""
    import onnx
    import onnxruntime as ort

    import pytvm
    from pytvm.runtime.graph_executor import GraphModule

    pytvm.runtime.set_num_threads(threads)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "case.onnx"
        onnx.save(onnx_model(case), str(path))
        so = ort.SessionOptions()
        so.intra_op_num_threads, so.inter_op_num_threads = threads, 1
        sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
        lib, build_s = build_pytvm(path)
    inputs = case_inputs(case)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input(None, None, **inputs)
    m.run()
    max_abs, rel = compare([m.get_output(0).numpy()], sess.run(None, inputs))
    fns = {"pytvm": m.run, "onnxruntime": lambda: sess.run(None, inputs)}
    best = interleaved_best(fns, batch_s=min_seconds / 5, rounds=5, budget_s=3 * min_seconds)
    return {
        "pytvm_ms": best["pytvm"] * 1e3,
        "ort_ms": best["onnxruntime"] * 1e3,
        "build_s": build_s,
        "max_abs": max_abs,
        "rel": rel,
    }


def _worker(opts: argparse.Namespace) -> None:
    case = next(c for c in CASES if c.name == opts.worker)
    try:
        result = measure(case, opts.threads, opts.min_seconds)
    except Exception as err:
        lines = [line for line in str(err).splitlines() if line.strip()]
        result = {"note": f"{type(err).__name__}: {lines[0] if lines else ''}"[:160]}
    print(json.dumps(result))


def main() -> None:
    """Measure every case (or ``--only`` ones) and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", nargs="+", help="cases whose name contains one of these")
    parser.add_argument("--threads", type=int, default=1, choices=sorted(CORES))
    parser.add_argument("--min-seconds", type=float, default=1.0, help="time per case and peer")
    parser.add_argument("--rtol", type=float, default=1e-4, help="max |diff| / output scale")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        _worker(opts)
        return
    cases = [c for c in CASES if not opts.only or any(o in c.name for o in opts.only)]
    cores = CORES[opts.threads]
    import onnxruntime

    print(f"CPU: {cpu_description()}; ONNX Runtime {onnxruntime.__version__}")
    print(
        f"FMA peak, {opts.threads} thread(s) on cores {cores}: "
        f"{_fma_peak(opts.threads, cores):.1f} GFLOP/s"
    )
    print(
        f"\n{opts.threads} thread(s); ratio = pytvm / ONNX Runtime; GFLOP/s counts one per "
        "element for element-wise ops and softmax"
    )
    print(
        f"{'case':46} {'pytvm ms':>9} {'ORT ms':>9} {'pytvm GF/s':>10} {'ORT GF/s':>9} "
        f"{'ratio':>6}  correct (max|diff|, rel)"
    )
    results = {}
    for case in cases:
        argv = [sys.executable, __file__, "--worker", case.name, "--threads", str(opts.threads)]
        argv += ["--min-seconds", str(opts.min_seconds)]
        with tempfile.TemporaryDirectory(prefix="pytvm-cold-cache-") as cache:
            got = run_worker(argv, opts.threads, cores, {"XDG_CACHE_HOME": cache})
        r = {"note": f"worker died: {got}"[:160]} if isinstance(got, str) else got
        results[case.name] = r
        print(_row(case, r, opts.rtol), flush=True)
    if opts.json:
        opts.json.write_text(json.dumps({"cpu": cpu_description(), "cases": results}, indent=1))


def _row(case: Case, r: dict[str, Any], rtol: float) -> str:
    if "note" in r:
        return f"{case.name:46} {'-':>9} {'-':>9} {'-':>10} {'-':>9} {'-':>6}  {r['note']}"
    ours, ort = r["pytvm_ms"], r["ort_ms"]
    ok = "yes" if r["rel"] <= rtol else "NO"
    return (
        f"{case.name:46} {ours:9.3f} {ort:9.3f} {case.flops / ours / 1e6:10.1f} "
        f"{case.flops / ort / 1e6:9.1f} {ours / ort:6.2f}  {ok} {r['max_abs']:.1e} ({r['rel']:.0e})"
    )


if __name__ == "__main__":
    main()
