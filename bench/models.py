"""Model latency and build time: pytvm's graph compiler against ONNX Runtime and apache-tvm.

The reference models (``shared/models/make_models.py``) are compiled and run by each peer in its
own subprocess pinned with ``taskset`` to 1 or 2 cores (and told to use that many threads), all
in the same run: pytvm (``from_onnx`` + ``pytvm.graph.build(target="llvm")`` + the graph
executor), ONNX Runtime (CPU provider) and apache-tvm 0.27 untuned (``relax.frontend.onnx`` +
``tvm.compile`` + the Relax VM). Latency is the median of timed runs after a warm-up; build
time is import + compile with an empty compile cache. A second table gives pytvm's memory
plans with both planners. The CPU and the measured FMA peak are printed with the figures.
Run: ``make bench`` or
``python bench/models.py`` (quick: ``--quick``; one model: ``--only resnet18``).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _harness import cpu_model, run_worker

REPO = Path(__file__).resolve().parents[1]
MODELS = ("mlp", "cnn_small", "resnet18", "mobilenet_v2", "transformer_block")
PEERS = ("pytvm", "onnxruntime", "tvm")
MAKE_MODELS = REPO / "models" / "make_models.py"


def _inputs(path: Path) -> dict[str, np.ndarray]:
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    feeds = {}
    for value in model.graph.input:
        if value.name in inits:
            continue
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in value.type.tensor_type.shape.dim]
        feeds[value.name] = rng.standard_normal(dims).astype("float32")
    return feeds


def _median_ms(run: Any, min_seconds: float, max_runs: int = 200) -> float:
    run()  # warm-up
    times: list[float] = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < min_seconds and len(times) < max_runs):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e3


def _pytvm(path: Path, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    import onnx

    import pytvm
    from pytvm import graph
    from pytvm.frontend import from_onnx
    from pytvm.runtime.graph_executor import GraphModule

    pytvm.runtime.set_num_threads(threads)
    from pytvm.runtime.module import runtime_library

    runtime_library()  # built once per install (the worker's cache is fresh): not build time
    start = time.perf_counter()
    mod, params = from_onnx(onnx.load(str(path)))
    lib = graph.build(mod, target="llvm", params=params)
    build_s = time.perf_counter() - start
    m = GraphModule(lib["default"](pytvm.cpu()))
    feeds = _inputs(path)
    m.set_input(None, None, **feeds)
    m.run()
    ours = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
    import onnxruntime as ort

    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    expected = sess.run(None, feeds)
    correct = all(
        np.allclose(a, b, rtol=1e-4, atol=1e-4) for a, b in zip(ours, expected, strict=True)
    )
    ms = _median_ms(m.run, opts.min_seconds)
    return {"ms": ms, "build_s": build_s, "correct": correct}


def _onnxruntime(path: Path, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    start = time.perf_counter()
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    build_s = time.perf_counter() - start
    feeds = _inputs(path)
    return {"ms": _median_ms(lambda: sess.run(None, feeds), opts.min_seconds), "build_s": build_s}


def _tvm(path: Path, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    import onnx
    import tvm
    from tvm import relax
    from tvm.relax.frontend.onnx import from_onnx

    start = time.perf_counter()
    mod = from_onnx(onnx.load(str(path)), keep_params_in_input=False)
    mod = relax.transform.DecomposeOpsForInference()(mod)
    mod = relax.transform.LegalizeOps()(mod)
    vm = relax.VirtualMachine(tvm.compile(mod, target="llvm"), tvm.cpu())
    build_s = time.perf_counter() - start
    args = [tvm.runtime.tensor(v) for v in _inputs(path).values()]
    ms = _median_ms(lambda: vm["main"](*args), opts.min_seconds, max_runs=20)
    return {"ms": ms, "build_s": build_s}


_RUNNERS = {"pytvm": _pytvm, "onnxruntime": _onnxruntime, "tvm": _tvm}


def _worker(peer: str, threads: int, opts: argparse.Namespace) -> None:
    results: dict[str, Any] = {}
    for name in opts.models:
        try:
            results[name] = _RUNNERS[peer](Path(opts.model_dir) / f"{name}.onnx", threads, opts)
        except Exception as err:
            results[name] = {"note": f"{type(err).__name__}: {str(err)[:100]}"}
    print(json.dumps(results))


def _run_peer(peer: str, threads: int, cores: str, opts: argparse.Namespace) -> dict[str, Any]:
    argv = [sys.executable, __file__, "--worker", peer, "--threads", str(threads)]
    argv += ["--model-dir", opts.model_dir, "--min-seconds", str(opts.min_seconds)]
    argv += ["--models", *opts.models]
    with tempfile.TemporaryDirectory(prefix="pytvm-cold-cache-") as cache:
        # an empty compile cache: build times are cold, as apache-tvm's (it has no cache)
        result = run_worker(argv, threads, cores, {"XDG_CACHE_HOME": cache})
    if isinstance(result, str):
        return {name: {"note": result} for name in opts.models}
    return result


def _memory_rows(opts: argparse.Namespace) -> list[str]:
    import onnx

    from pytvm import graph
    from pytvm.frontend import from_onnx

    rows = []
    for name in opts.models:
        mod, params = from_onnx(onnx.load(str(Path(opts.model_dir) / f"{name}.onnx")))
        cells = []
        for planner in ("storage_token", "arena"):
            cpu = graph.plan_memory(mod, params, planner=planner).devices[1]
            act = cpu.planned_bytes - cpu.pinned_bytes
            bound = cpu.lower_bound - cpu.pinned_bytes
            cells.append(f"{act / 1e6:9.2f} ({act / bound if bound else 1:5.3f}x)")
        no_reuse = (cpu.no_reuse_bytes - cpu.pinned_bytes) / 1e6
        rows.append(f"{name:18} {no_reuse:10.2f} {bound / 1e6:10.2f} {cells[0]:>20} {cells[1]:>20}")
    return rows


def _fma_peak(threads: int, cores: str) -> float:
    from kernels import _fma_peak as peak  # the kernel bench's FMA probe

    return float(peak(threads, cores)[0])


def _cell(result: dict[str, Any]) -> str:
    return f"{result['ms']:10.2f}" if "ms" in result else f"{'n/a':>10}"


def main() -> None:
    """Measure every peer on 1 and 2 cores and print latency, build time and memory tables."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--threads", type=int, default=1, help=argparse.SUPPRESS)
    parser.add_argument("--model-dir", help="where the reference models are (default: made)")
    parser.add_argument("--models", nargs="+", default=list(MODELS), help=argparse.SUPPRESS)
    parser.add_argument("--only", help="run only this model")
    parser.add_argument("--min-seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument("--quick", action="store_true", help="small models, short timing")
    parser.add_argument("--no-tvm", action="store_true", help="skip apache-tvm (slow builds)")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory-plan table")
    opts = parser.parse_args()
    if opts.worker:
        _worker(opts.worker, opts.threads, opts)
        return
    if opts.quick:
        opts.models, opts.min_seconds = ["mlp", "cnn_small"], 0.1
    if opts.only:
        opts.models = [opts.only]
    with tempfile.TemporaryDirectory(prefix="pytvm-models-") as tmp:
        if not opts.model_dir:
            opts.model_dir = tmp
            subprocess.run([sys.executable, str(MAKE_MODELS), tmp], check=True, capture_output=True)
        peers = [p for p in PEERS if not (opts.no_tvm and p == "tvm")]
        print(f"CPU: {cpu_model()}")
        results: dict[tuple[str, int], dict[str, Any]] = {}
        for threads, cores in ((1, "0"), (2, "0,1")):
            print(f"FMA peak, {threads} thread(s): {_fma_peak(threads, cores):.1f} GFLOP/s")
            for peer in peers:
                results[(peer, threads)] = _run_peer(peer, threads, cores, opts)
        _print_latency(opts, peers, results)
        if not opts.no_memory:
            print("\nactivation memory, MB (inputs, parameters and outputs excluded):")
            print(
                f"{'model':18} {'no reuse':>10} {'bound':>10} {'storage_token':>20} {'arena':>20}"
            )
            for row in _memory_rows(opts):
                print(row)


def _print_latency(
    opts: argparse.Namespace, peers: list[str], results: dict[tuple[str, int], dict[str, Any]]
) -> None:
    for threads in (1, 2):
        print(f"\nlatency (ms), {threads} thread(s); ratio = pytvm / ONNX Runtime")
        header = f"{'model':18}" + "".join(f" {p:>10}" for p in peers) + f" {'ratio':>8}"
        print(header + f" {'pytvm build s':>14} {'tvm build s':>12}")
        ratios = []
        for name in opts.models:
            cells = [results[(p, threads)].get(name, {}) for p in peers]
            ours, ort = cells[0], cells[1]
            ratio = ours["ms"] / ort["ms"] if "ms" in ours and "ms" in ort else math.nan
            if not math.isnan(ratio):
                ratios.append(ratio)
            tvm_build = cells[2].get("build_s", math.nan) if len(cells) > 2 else math.nan
            notes = [f"{p}: {c['note']}" for p, c in zip(peers, cells, strict=True) if "note" in c]
            if ours.get("correct") is False:
                notes.append("pytvm: WRONG RESULT against ONNX Runtime")
            print(
                f"{name:18}" + "".join(f" {_cell(c)}" for c in cells) + f" {ratio:8.2f}"
                f" {ours.get('build_s', math.nan):14.2f} {tvm_build:12.2f}"
                + (f"  ({'; '.join(notes)})" if notes else "")
            )
        if ratios:
            geo = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            print(f"{'geometric mean':18}" + " " * (11 * len(peers)) + f" {geo:8.2f}")


if __name__ == "__main__":
    main()
