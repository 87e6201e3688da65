"""Real architectures users bring: pytvm's latency against ONNX Runtime at 1 and 2 threads.

The suite (``bench/real_models_export.py``: torchvision CNNs and vision transformers, BERT-,
DistilBERT- and GPT-2-style text models, a Whisper encoder, a DBNet text detector, a UNet,
LSTM/GRU models; random weights, fixed shapes, batch 1) is exported once into a cache directory
by the PyTorch interpreter (``--torch-python``) and measured here. For each model and thread
count, pytvm (``from_onnx`` + ``pytvm.graph.build(target="llvm")`` + the graph executor, build
timed with an empty compile cache) and ONNX Runtime (CPU provider) each run in their own worker
process pinned with ``taskset`` (1 thread: core 1; 2 threads: cores 0,1), one model after the
other so that both peers see the same machine load; latency is the best of five batches
(``--repeat n``: of n rounds of workers, the builds after the first cached).

pytvm's outputs are checked against ONNX Runtime's: the largest absolute difference relative to
the largest magnitude of the output must stay under ``--rtol``. A model that fails to import,
build or run gets a row with its error.

``--profile NAME`` times every fused kernel of one model with the debug executor (at the first
of ``--threads``) and prints the slowest ones with their share.

Run: ``python bench/real_models.py`` (one model: ``--only resnet50``; JSON: ``--json out.json``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
from _harness import cpu_model, interleaved_best, run_worker
from real_models_export import DEFAULT_DIR, INPUT_RANGES_KEY, INT8_RTOL, MODELS, TORCH_PYTHON

from models import _fma_peak

EXPORT = Path(__file__).resolve().parent / "real_models_export.py"
CORES = {1: "1", 2: "0,1"}
PEERS = ("pytvm", "onnxruntime")


def feeds(path: Path) -> dict[str, np.ndarray]:
    """Inputs of the model at ``path``: normal floats, integers in the ranges its metadata gives."""
    import onnx

    model = onnx.load(str(path), load_external_data=False)
    meta = {p.key: p.value for p in model.metadata_props}
    ranges = json.loads(meta.get(INPUT_RANGES_KEY, "{}"))
    inits = {i.name for i in model.graph.initializer}
    rng = np.random.default_rng(0)
    out = {}
    for value in model.graph.input:
        if value.name in inits:
            continue
        tensor = value.type.tensor_type
        dims = [d.dim_value if d.dim_value > 0 else 1 for d in tensor.shape.dim]
        dtype = onnx.helper.tensor_dtype_to_np_dtype(tensor.elem_type)
        if np.issubdtype(dtype, np.integer):
            low, high = ranges.get(value.name, (0, 2))
            out[value.name] = rng.integers(low, high, dims).astype(dtype)
        else:
            out[value.name] = rng.standard_normal(dims).astype(dtype)
    return out


def compare(ours: list[np.ndarray], expected: list[np.ndarray]) -> tuple[float, float]:
    """The largest absolute difference over all outputs, and the largest of each output's
    difference divided by that output's scale (its largest magnitude); inf on a shape mismatch
    or a NaN where the reference has none.
    """
    if len(ours) != len(expected):
        return math.inf, math.inf
    worst_abs, worst_rel = 0.0, 0.0
    for a, b in zip(ours, expected, strict=True):
        if a.shape != b.shape:
            return math.inf, math.inf
        a64, b64 = a.astype(np.float64), b.astype(np.float64)
        if np.isnan(a64).any() and not np.isnan(b64).any():
            return math.inf, math.inf
        diff = float(np.nanmax(np.abs(a64 - b64))) if a.size else 0.0
        scale = float(np.nanmax(np.abs(b64))) if b.size else 0.0
        worst_abs = max(worst_abs, diff)
        worst_rel = max(worst_rel, diff / scale if scale > 0 else diff)
    return worst_abs, worst_rel


def best_ms(run: Any, min_seconds: float) -> float:
    """Milliseconds per call: the best of five batches of about ``min_seconds / 5`` each (on a
    shared machine the best batch is the one least disturbed by other work).
    """
    best = interleaved_best({0: run}, batch_s=min_seconds / 5, rounds=5, budget_s=3 * min_seconds)
    return 1e3 * float(best[0])


def _ort_session(path: Path, threads: int) -> Any:
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    return ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])


def build_pytvm(path: Path) -> tuple[Any, float]:
    """``from_onnx`` + ``graph.build(target="llvm")`` of the model; the factory and seconds."""
    import onnx

    from pytvm import graph
    from pytvm.ffi.host_library import runtime_library
    from pytvm.frontend import from_onnx

    runtime_library()  # built once per install (the worker's cache is fresh): not build time
    start = time.perf_counter()
    mod, params = from_onnx(onnx.load(str(path)))
    lib = graph.build(mod, target="llvm", params=params)
    return lib, time.perf_counter() - start


def _pytvm(path: Path, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    import pytvm
    from pytvm.runtime.graph_executor import GraphModule

    pytvm.runtime.set_num_threads(threads)
    inputs = feeds(path)
    expected = _ort_session(path, threads).run(None, inputs)
    lib, build_s = build_pytvm(path)
    m = GraphModule(lib["default"](pytvm.cpu()))
    m.set_input(None, None, **inputs)
    m.run()
    ours = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
    max_abs, rel = compare(ours, expected)
    ms = best_ms(m.run, opts.min_seconds)
    return {"ms": ms, "build_s": build_s, "max_abs": max_abs, "rel": rel}


def _onnxruntime(path: Path, threads: int, opts: argparse.Namespace) -> dict[str, Any]:
    start = time.perf_counter()
    sess = _ort_session(path, threads)
    build_s = time.perf_counter() - start
    inputs = feeds(path)
    return {"ms": best_ms(lambda: sess.run(None, inputs), opts.min_seconds), "build_s": build_s}


def _first_line(err: BaseException) -> str:
    lines = [line for line in str(err).splitlines() if line.strip()]
    return f"{type(err).__name__}: {lines[0] if lines else ''}"[:160]


def _worker(opts: argparse.Namespace) -> None:
    path = Path(opts.model_dir) / f"{opts.worker_model}.onnx"
    if opts.profile:
        from real_profile import profile

        print(profile(path, opts.threads[0], opts.top, opts.min_seconds))
        return
    runner = _pytvm if opts.worker == "pytvm" else _onnxruntime
    try:
        result = runner(path, opts.threads[0], opts)
    except Exception as err:
        result = {"note": _first_line(err)}
    print(json.dumps(result))


def _worker_argv(peer: str, name: str, threads: int, opts: argparse.Namespace) -> list[str]:
    argv = [sys.executable, __file__, "--worker", peer, "--worker-model", name]
    argv += ["--threads", str(threads), "--model-dir", str(opts.model_dir)]
    return [*argv, "--min-seconds", str(opts.min_seconds), "--top", str(opts.top)]


def _measure(
    peer: str, name: str, threads: int, opts: argparse.Namespace, cache: str
) -> dict[str, Any]:
    argv = _worker_argv(peer, name, threads, opts)
    result = run_worker(argv, threads, CORES[threads], {"XDG_CACHE_HOME": cache})
    return {"note": f"worker died: {result}"[:160]} if isinstance(result, str) else result


def _best(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two measurements of one peer merged: the lower latency, the first (cold) build time, the
    larger difference from ONNX Runtime, every note.
    """
    if not old or "ms" not in old:
        return {**old, **new} if "ms" in new else {**new, **old}
    merged = {**old}
    if "ms" in new:
        merged["ms"] = min(old["ms"], new["ms"])
        for key in ("max_abs", "rel"):
            if key in new:
                merged[key] = max(old.get(key, 0.0), new[key])
    if "note" in new:
        merged["note"] = new["note"]
    return merged


def _measure_model(
    name: str, opts: argparse.Namespace, note: str | None
) -> dict[int, dict[str, dict[str, Any]]]:
    """Every peer at every thread count, ``--repeat`` times in turn; the best of each."""
    cells: dict[int, dict[str, dict[str, Any]]] = {t: {p: {} for p in PEERS} for t in opts.threads}
    if note:
        return {t: {p: {"note": note} for p in PEERS} for t in opts.threads}
    # one compile cache per thread count (its build depends on the cores): the first build is
    # cold, repeats find it there
    caches = {t: tempfile.TemporaryDirectory(prefix="pytvm-cold-cache-") for t in opts.threads}
    try:
        for _ in range(opts.repeat):
            for t in opts.threads:
                for peer in PEERS:
                    got = _measure(peer, name, t, opts, caches[t].name)
                    cells[t][peer] = _best(cells[t][peer], got)
    finally:
        for cache in caches.values():
            cache.cleanup()
    return cells


def export_missing(opts: argparse.Namespace) -> dict[str, str]:
    """Export the selected models missing from the cache; the export error of each that failed."""
    model_dir = Path(opts.model_dir)
    missing = [n for n in opts.only if not (model_dir / f"{n}.onnx").exists()]
    if missing:
        print(f"exporting {len(missing)} model(s) with {opts.torch_python} ...", flush=True)
        argv = [str(opts.torch_python), str(EXPORT), "--out", str(model_dir), "--only", *missing]
        subprocess.run(argv, check=False)
    errors = {}
    for name in opts.only:
        if not (model_dir / f"{name}.onnx").exists():
            err = model_dir / f"{name}.error"
            text = err.read_text().splitlines()[0] if err.exists() else "no ONNX file"
            errors[name] = f"export failed: {text}"[:160]
    return errors


def cpu_description() -> str:
    """The CPU's model name, with its family/model/stepping from ``/proc/cpuinfo``."""
    fields: dict[str, str] = {}
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
            if not line.strip():
                break
    except OSError:
        pass
    ids = "/".join(fields.get(k, "?") for k in ("cpu family", "model", "stepping"))
    return f"{cpu_model()} (family/model/stepping {ids})"


def tolerance(name: str, rtol: float) -> float:
    """The accepted difference from ONNX Runtime relative to the output's scale: ``rtol``, or
    the model's own when larger (int8 models: a few quantization steps).
    """
    return max(rtol, MODELS[name].rtol) if name in MODELS else rtol


def geomean(values: list[float]) -> float:
    """The geometric mean (nan for none)."""
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def _row(name: str, cells: dict[int, dict[str, dict[str, Any]]], opts: argparse.Namespace) -> str:
    notes: list[str] = []
    build = cells[opts.threads[0]]["pytvm"].get("build_s", math.nan)
    line = f"{name:22} {build:7.1f}"
    correct = None
    for t in opts.threads:
        ours, ort = cells[t]["pytvm"], cells[t]["onnxruntime"]
        ratio = ours["ms"] / ort["ms"] if "ms" in ours and "ms" in ort else math.nan
        cells[t]["ratio"] = {"value": ratio}
        line += "".join(f" {c['ms']:9.2f}" if "ms" in c else f" {'-':>9}" for c in (ours, ort))
        line += f" {ratio:6.2f}"
        for peer, c in (("pytvm", ours), ("ORT", ort)):
            if "note" in c and c["note"] not in notes:
                notes.append(f"{peer}: {c['note']}" if peer == "ORT" else c["note"])
        if "rel" in ours:
            ok = ours["rel"] <= tolerance(name, opts.rtol)
            correct = ok if correct is None else correct and ok
            diff = f"{ours['max_abs']:.1e} ({ours['rel']:.0e})"
    if correct is None:
        line += f"  {'-':>20}"
    else:
        line += f"  {'yes' if correct else 'NO':>3} {diff:>16}"
    return line + (f"  {'; '.join(dict.fromkeys(notes))}" if notes else "")


def _header(opts: argparse.Namespace) -> str:
    head = f"{'model':22} {'build s':>7}"
    for t in opts.threads:
        head += f" {f'pytvm {t}t':>9} {f'ORT {t}t':>9} {'ratio':>6}"
    return head + f"  {'correct, max|diff| (rel)':>20}"


def main() -> None:
    """Export what is missing, measure every model at each thread count, print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--model-dir", type=Path, default=DEFAULT_DIR, help="the exported models")
    parser.add_argument("--only", nargs="+", default=list(MODELS), help="these models only")
    parser.add_argument("--threads", nargs="+", type=int, default=[1, 2], choices=sorted(CORES))
    parser.add_argument("--min-seconds", type=float, default=1.0, help="time per measurement")
    parser.add_argument(
        "--repeat", type=int, default=1, help="measure each model n times, keep the best"
    )
    parser.add_argument("--rtol", type=float, default=1e-3, help="max |diff| / output scale")
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--profile", metavar="NAME", help="per-kernel times of one model")
    parser.add_argument("--top", type=int, default=15, help="kernels shown by --profile")
    default_python = TORCH_PYTHON if TORCH_PYTHON.exists() else Path(sys.executable)
    parser.add_argument("--torch-python", type=Path, default=default_python)
    parser.add_argument("--worker", choices=PEERS, help=argparse.SUPPRESS)
    parser.add_argument("--worker-model", help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.worker:
        _worker(opts)
        return
    if opts.profile:
        opts.only = [opts.profile]
    errors = export_missing(opts)
    import onnxruntime

    print(f"CPU: {cpu_description()}; ONNX Runtime {onnxruntime.__version__}")
    peaks = {t: _fma_peak(t, CORES[t]) for t in opts.threads}
    for t, peak in peaks.items():
        print(f"FMA peak, {t} thread(s) on cores {CORES[t]}: {peak:.1f} GFLOP/s")
    if opts.profile:
        argv = [*_worker_argv("pytvm", opts.profile, opts.threads[0], opts), "--profile", "x"]
        threads = opts.threads[0]
        with tempfile.TemporaryDirectory(prefix="pytvm-cold-cache-") as cache:
            env = {**os.environ, "XDG_CACHE_HOME": cache, "TVM_NUM_THREADS": str(threads)}
            subprocess.run(["taskset", "-c", CORES[threads], *argv], env=env, check=False)
        return
    print(
        f"\nlatency (ms); ratio = pytvm / ONNX Runtime; correct: max|diff| <= {opts.rtol:g}"
        f" x the output's largest magnitude ({INT8_RTOL:g} for int8 models)"
    )
    print(_header(opts), flush=True)
    results: dict[str, Any] = {}
    for name in opts.only:
        cells = _measure_model(name, opts, errors.get(name))
        print(_row(name, cells, opts), flush=True)
        family = MODELS[name].family if name in MODELS else "?"
        results[name] = {"family": family, **{str(t): c for t, c in cells.items()}}
    summary = _summary(results, opts)
    if opts.json:
        doc = {"cpu": cpu_description(), "fma_peak": peaks, "models": results, **summary}
        opts.json.write_text(json.dumps(doc, indent=1, default=str))


def _summary(results: dict[str, Any], opts: argparse.Namespace) -> dict[str, Any]:
    """Print and return the geometric means (the architectures as exported, and apart from them
    the models derived from them: ORT-fused, int8), the models over 1.5x, wrong and failed.
    """
    out: dict[str, Any] = {"geomean": {}, "geomean_derived": {}, "over_1_5": {}}
    derived = {n for n in results if n in MODELS and MODELS[n].source is not None}
    for t in opts.threads:
        ratios = {n: r[str(t)]["ratio"]["value"] for n, r in results.items()}
        slow = sorted((n for n, v in ratios.items() if v > 1.5), key=lambda n: -ratios[n])
        out["over_1_5"][t] = slow
        for key, label, names in (
            ("geomean", "architectures", [n for n in ratios if n not in derived]),
            ("geomean_derived", "derived (ORT-fused, int8)", [n for n in ratios if n in derived]),
        ):
            done = [ratios[n] for n in names if not math.isnan(ratios[n])]
            out[key][t] = geomean(done)
            if names:
                print(
                    f"geometric mean, {t} thread(s), {label}: {geomean(done):.2f} over "
                    f"{len(done)} of {len(names)} models"
                )
        print(f"slower than 1.5x at {t} thread(s): {', '.join(slow) or 'none'}")
    wrong = [
        n
        for n, r in results.items()
        if any(r[str(t)]["pytvm"].get("rel", 0.0) > tolerance(n, opts.rtol) for t in opts.threads)
    ]
    failed = [n for n, r in results.items() if "ms" not in r[str(opts.threads[0])]["pytvm"]]
    print(f"wrong results: {', '.join(wrong) or 'none'}; failed: {', '.join(failed) or 'none'}")
    out["wrong"], out["failed"] = wrong, failed
    return out


if __name__ == "__main__":
    main()
