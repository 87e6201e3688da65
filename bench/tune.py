"""Auto-tuning models: tuning time and trials, latency untuned, tuned and ONNX Runtime's.

Per model (the reference models of ``models/make_models.py``: mlp, cnn_small, resnet18,
mobilenet_v2, transformer_block; with ``--real`` the real-architecture suite's models present
in ``bench/real_models_export.py``'s cache, ``--only`` to choose):

1. tuning, in one worker process pinned to cores 0,1: ``autotvm.task.extract_from_program`` of
   the imported model for ``llvm``, then each task tuned with ``--tuner`` (``XGBTuner``,
   ``RandomTuner``, ...) for up to ``--trials`` trials with ``--early-stopping``, measured with
   ``measure_option(builder=LocalBuilder(n_parallel=2), runner=RPCRunner(key, tracker, number=,
   repeat=, min_repeat_ms=, timeout=))`` through a pytvm tracker on loopback with two RPC
   servers registered under the key, one pinned to core 0 and one to core 1 (each one runtime
   thread). ``--budget-minutes`` caps the model's tuning time: each task gets the share of what
   is left of it that its FLOPs are of the FLOPs of the tasks not yet tuned (so time a task did
   not use, its space exhausted or stopped early, goes to the later ones; a task stops at its
   first batch past its share, and has at least one batch;
   the records of every trial go to ``<work>/<model>.records.json``);
2. latency, in worker processes pinned with ``taskset`` (1 thread: core 1; 2 threads: cores
   0,1) and told to use that many threads: one builds pytvm untuned (``graph.build``) and tuned
   (``graph.build`` inside ``autotvm.apply_history_best(records)``) and times the two in
   interleaved batches (best of five, ``_harness.interleaved_best``: a load change hits both
   alike; on this shared machine separate processes differed by up to 1.4x where one process
   found them equal); the other times ONNX Runtime (CPU provider, ``real_models.best_ms``).
   ``--rounds`` rounds of the two workers in turn, the best of each kind kept; the first round's
   builds start from an empty compile cache. Both builds are checked against ONNX Runtime.

The table: model, tasks, trials, tuning wall time, then per thread count untuned, tuned and
ORT milliseconds, tuned/ORT and tuned/untuned; the geometric means of the ratios last. The CPU
and its measured FMA peak come first.

Run: ``.venv/bin/python bench/tune.py --budget-minutes 15`` (``--only resnet18``; ``--real``
for the real-architecture suite; ``--trials 1000 --early-stopping 400``; ``--json out.json``;
``--from-records DIR``: measure the latency with an earlier run's records, no tuning).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from _harness import Fleet, cpu_model, environ, free_port
from tune_tvm018 import run_pinned

REPO = Path(__file__).resolve().parents[1]
REFERENCE = ("mlp", "cnn_small", "resnet18", "mobilenet_v2", "transformer_block")
MAKE_MODELS = REPO / "models" / "make_models.py"
CORES = {1: "1", 2: "0,1"}
SERVER_CORES = ("0", "1")
TUNE_CORES = "0,1"
KEY = "tune"
KINDS = ("untuned", "tuned", "onnxruntime")
#: The latency workers and the kinds each measures.
WORKERS = {"pytvm": ("untuned", "tuned"), "onnxruntime": ("onnxruntime",)}


# ---------------------------------------------------------------------------- tuning worker


def task_budgets(flops: list[float], budget_s: float) -> list[float]:
    """Each task's share of ``budget_s`` by its FLOPs (equal shares when none has FLOPs)."""
    total = sum(f for f in flops if f > 0)
    if total <= 0:
        return [budget_s / len(flops)] * len(flops) if flops else []
    return [budget_s * max(f, 0.0) / total for f in flops]


def _tune_worker(spec: dict[str, Any]) -> dict[str, Any]:
    """Extract the model's tasks and tune each within its share of the budget."""
    import onnx

    from pytvm import autotvm
    from pytvm.frontend import from_onnx

    start = time.perf_counter()
    mod, params = from_onnx(onnx.load(spec["onnx"]))
    tasks = list(autotvm.task.extract_from_program(mod, params=params, target="llvm"))
    extract_s = time.perf_counter() - start
    flops = [float(t.flop or 0.0) for t in tasks]
    deadline_all = time.monotonic() + spec["budget_s"]
    measure = autotvm.measure_option(
        builder=autotvm.LocalBuilder(n_parallel=spec["n_parallel"], timeout=spec["build_timeout"]),
        runner=autotvm.RPCRunner(
            KEY,
            "127.0.0.1",
            spec["tracker"],
            number=spec["number"],
            repeat=spec["repeat"],
            min_repeat_ms=spec["min_repeat_ms"],
            timeout=spec["run_timeout"],
        ),
    )
    rows = []
    for i, task in enumerate(tasks):
        # the task's FLOPs share of what is left (time a task did not use goes to the others)
        budget = task_budgets(flops[i:], max(deadline_all - time.monotonic(), 0.0))[0]
        tuner = _make_tuner(autotvm, spec["tuner"], task)
        counted = {"trials": 0, "failed": 0}

        def count(
            _tuner: Any, _inputs: Any, results: Any, counted: dict[str, int] = counted
        ) -> None:
            counted["trials"] += len(results)
            counted["failed"] += sum(1 for r in results if int(r.error_no) != 0)

        deadline = time.monotonic() + budget
        more = tuner.has_next
        # the budget: no new batch once the task's share is spent (Tuner.tune asks has_next);
        # every task gets its first batch
        tuner.has_next = lambda more=more, deadline=deadline, counted=counted: (
            more() and (counted["trials"] == 0 or time.monotonic() < deadline)
        )
        t0 = time.perf_counter()
        tuner.tune(
            n_trial=min(spec["trials"], len(task.config_space)),
            measure_option=measure,
            early_stopping=spec["early_stopping"],
            callbacks=[count, autotvm.callback.log_to_file(spec["records"])],
            default_first=True,
        )
        rows.append(
            {
                "task": task.name,
                "workload": repr(task.workload),
                "flop": float(task.flop or 0.0),
                "space": len(task.config_space),
                "budget_s": budget,
                "wall_s": time.perf_counter() - t0,
                "best_gflops": float(tuner.best_flops) / 1e9,
                **counted,
            }
        )
    return {"extract_s": extract_s, "wall_s": time.perf_counter() - start, "tasks": rows}


def _make_tuner(autotvm: Any, name: str, task: Any) -> Any:
    tuners = autotvm.tuner
    if name == "xgb":
        return tuners.XGBTuner(task, num_threads=1)
    if name == "ga":
        return tuners.GATuner(task)
    if name == "gridsearch":
        return tuners.GridSearchTuner(task)
    return tuners.RandomTuner(task)


# ---------------------------------------------------------------------------- latency worker


def _latency_worker(
    worker: str, path: Path, threads: int, records: str, min_seconds: float
) -> dict[str, dict[str, Any]]:
    """Milliseconds per inference: ONNX Runtime's (worker ``onnxruntime``), or pytvm's untuned
    and tuned builds timed in interleaved batches in this one process (worker ``pytvm``; tuned
    only with ``records``), each with its difference from ONNX Runtime.
    """
    from _harness import interleaved_best
    from real_models import _ort_session, best_ms, compare, feeds

    inputs = feeds(path)
    sess = _ort_session(path, threads)
    if worker == "onnxruntime":
        return {"onnxruntime": {"ms": best_ms(lambda: sess.run(None, inputs), min_seconds)}}
    expected = sess.run(None, inputs)
    import onnx

    import pytvm
    from pytvm import autotvm, graph
    from pytvm.frontend import from_onnx
    from pytvm.runtime.graph_executor import GraphModule

    pytvm.runtime.set_num_threads(threads)
    mod, params = from_onnx(onnx.load(str(path)))
    out: dict[str, dict[str, Any]] = {}
    modules: dict[str, Any] = {}
    for kind in ("untuned", "tuned") if records else ("untuned",):
        start = time.perf_counter()
        with autotvm.apply_history_best(records) if kind == "tuned" else contextlib.nullcontext():
            lib = graph.build(mod, target="llvm", params=params)
        build_s = time.perf_counter() - start
        m = GraphModule(lib["default"](pytvm.cpu()))
        m.set_input(None, None, **inputs)
        m.run()
        ours = [m.get_output(i).numpy() for i in range(m.get_num_outputs())]
        max_abs, rel = compare(ours, expected)
        out[kind] = {"build_s": build_s, "max_abs": max_abs, "rel": rel}
        modules[kind] = m
    fns: dict[str, Callable[[], object]] = {k: m.run for k, m in modules.items()}
    best = interleaved_best(fns, batch_s=min_seconds / 5, rounds=5, budget_s=3 * min_seconds)
    for kind, seconds in best.items():
        out[kind]["ms"] = 1e3 * float(seconds)
    return out


# ---------------------------------------------------------------------------- driver


def _worker_env(threads: int, cache: str | None = None) -> dict[str, str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS"):
        env[var] = str(threads)
    if cache:
        env["XDG_CACHE_HOME"] = cache
    return env


def tune_model(name: str, path: Path, opts: argparse.Namespace, work: Path) -> dict[str, Any]:
    """Tune one model through a tracker and two pinned servers; the worker's summary."""
    records = work / f"{name}.records.json"
    records.unlink(missing_ok=True)
    fleet = Fleet(SERVER_CORES[0], work)
    try:
        port = free_port()
        argv = [sys.executable, "-m", "pytvm.cli", "rpc", "tracker", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--port-end", str(port + 100)]
        tracker = fleet.start(f"{name}-tracker", argv, r"tracker listening on [\d.]+:(\d+)")
        tracker.wait_ready()
        for core in SERVER_CORES:
            fleet.cores = core
            with environ(_worker_env(1)):
                fleet.pytvm_server(
                    f"{name}-server{core}", tracker=tracker.port, key=KEY
                ).wait_ready()
        spec = {
            "onnx": str(path),
            "records": str(records),
            "tracker": tracker.port,
            "tuner": opts.tuner,
            "trials": opts.trials,
            "early_stopping": opts.early_stopping,
            "budget_s": opts.budget_minutes * 60.0,
            "n_parallel": opts.n_parallel,
            "build_timeout": opts.build_timeout,
            "run_timeout": opts.run_timeout,
            "number": opts.number,
            "repeat": opts.repeat,
            "min_repeat_ms": opts.min_repeat_ms,
        }
        argv = [sys.executable, str(Path(__file__).resolve()), "--tune-worker", json.dumps(spec)]
        # the cap is the budget plus the time to extract the tasks and finish a last batch
        timeout = opts.budget_minutes * 60.0 * 1.5 + 600.0
        result = run_pinned(argv, TUNE_CORES, _worker_env(2, str(work / f"{name}.cache")), timeout)
    except RuntimeError as err:
        result = str(err).splitlines()[0]
    finally:
        fleet.stop_all()
    if isinstance(result, str):
        return {"note": f"tuning: {result}"[:200]}
    result["records"] = str(records)
    return result


def records_summary(records: Path) -> dict[str, Any]:
    """What an earlier run's records say: per workload its trials and failures (no wall time)."""
    if not records.is_file():
        return {"note": f"no records {records}"}
    tasks: dict[str, dict[str, Any]] = {}
    for line in records.read_text().splitlines():
        row = json.loads(line)
        key = json.dumps(row["input"][1:3])
        cell = tasks.setdefault(key, {"task": row["input"][1], "trials": 0, "failed": 0})
        cell["trials"] += 1
        cell["failed"] += int(row["result"][1] != 0)
    return {"tasks": list(tasks.values()), "records": str(records), "wall_s": math.nan}


def measure_model(
    path: Path, records: str, opts: argparse.Namespace, work: Path
) -> dict[int, dict[str, dict[str, Any]]]:
    """Latency of every kind at every thread count: pytvm's untuned and tuned builds in one
    pinned worker (interleaved batches), ONNX Runtime in another; ``--rounds`` rounds of the
    two workers in turn, the best of each kind kept (a load change hits them alike).
    """
    has_records = bool(records and Path(records).is_file() and Path(records).stat().st_size)
    cells: dict[int, dict[str, dict[str, Any]]] = {t: {} for t in opts.threads}
    # each thread count's builds start from an empty compile cache (later rounds find it)
    caches = {t: tempfile.mkdtemp(prefix=f"pytvm{t}-cache-", dir=work) for t in opts.threads}
    for _ in range(opts.rounds):
        for threads in opts.threads:
            if not has_records:
                cells[threads]["tuned"] = {"note": "no tuning records"}
            for worker, kinds in WORKERS.items():
                argv = [sys.executable, str(Path(__file__).resolve()), "--latency-worker", worker]
                argv += ["--model-path", str(path), "--threads", str(threads)]
                argv += ["--records", records if has_records else ""]
                argv += ["--min-seconds", str(opts.min_seconds)]
                env = _worker_env(threads, caches[threads])
                got = run_pinned(argv, CORES[threads], env, 1800.0)
                for kind in kinds:
                    if kind == "tuned" and not has_records:
                        continue
                    new = {"note": got[:160]} if isinstance(got, str) else got.get(kind, {})
                    cells[threads][kind] = _best(cells[threads].get(kind, {}), new)
    return cells


def _best(old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Two measurements of one kind: the lower latency, the first (cold) build time, the larger
    difference from ONNX Runtime; a failure kept only where nothing was measured.
    """
    if "ms" not in old:
        return new
    if "ms" not in new:
        return old
    merged = {**old, "ms": min(old["ms"], new["ms"])}
    for key in ("max_abs", "rel"):
        if key in new:
            merged[key] = max(old.get(key, 0.0), new[key])
    return merged


def geomean(values: list[float]) -> float:
    """The geometric mean (nan for none)."""
    return math.exp(sum(map(math.log, values)) / len(values)) if values else math.nan


def ratios(cells: dict[int, dict[str, dict[str, Any]]], threads: int) -> tuple[float, float]:
    """tuned/ORT and tuned/untuned latency at ``threads`` (nan where one is missing)."""
    c = cells.get(threads, {})
    tuned, ort, untuned = (
        c.get(k, {}).get("ms", math.nan) for k in ("tuned", "onnxruntime", "untuned")
    )
    return tuned / ort, tuned / untuned


def format_row(name: str, result: dict[str, Any], opts: argparse.Namespace) -> str:
    """One line of the table (with the notes of whatever failed)."""
    tune = result["tune"]
    tasks = tune.get("tasks", [])
    trials = sum(t["trials"] for t in tasks)
    wall = tune.get("wall_s", math.nan)
    line = f"{name:20} {len(tasks):5d} {trials:6d} {wall / 60:7.1f}"
    notes = [tune["note"]] if "note" in tune else []
    for threads in opts.threads:
        cells = result["latency"][threads]
        line += "".join(
            f" {cells[k]['ms']:8.2f}" if "ms" in cells[k] else f" {'-':>8}" for k in KINDS
        )
        to_ort, to_untuned = ratios(result["latency"], threads)
        line += f" {to_ort:7.2f} {to_untuned:7.2f}"
        for kind in KINDS:
            if "note" in cells[kind]:
                notes.append(f"{kind} {threads}t: {cells[kind]['note']}")
            elif cells[kind].get("rel", 0.0) > opts.rtol:
                notes.append(f"{kind} {threads}t: WRONG (rel {cells[kind]['rel']:.1e})")
    return line + (f"  ({'; '.join(dict.fromkeys(notes))})" if notes else "")


def header(opts: argparse.Namespace) -> str:
    """The table's header line."""
    line = f"{'model':20} {'tasks':>5} {'trials':>6} {'tune min':>7}"
    for t in opts.threads:
        line += f" {f'untuned{t}':>8} {f'tuned{t}':>8} {f'ORT{t}':>8} {'t/ORT':>7} {'t/unt':>7}"
    return line


def _model_paths(opts: argparse.Namespace, tmp: Path) -> dict[str, Path]:
    paths: dict[str, Path] = {}
    wanted = set(opts.only or [])
    ref = [m for m in REFERENCE if not wanted or m in wanted]
    if ref:
        model_dir = opts.model_dir
        if model_dir is None:
            model_dir = tmp / "models"
            model_dir.mkdir()
            subprocess.run(
                [sys.executable, str(MAKE_MODELS), str(model_dir)],
                check=True,
                capture_output=True,
                timeout=600,
            )
        paths.update({m: Path(model_dir) / f"{m}.onnx" for m in ref})
    if opts.real:
        from real_models_export import DEFAULT_DIR

        real_dir = Path(opts.real_dir or DEFAULT_DIR)
        for onnx_path in sorted(real_dir.glob("*.onnx")):
            if not wanted or onnx_path.stem in wanted:
                paths.setdefault(f"{onnx_path.stem}", onnx_path)
    missing = sorted(wanted - set(paths))
    if missing:
        raise SystemExit(f"bench/tune.py: --only {', '.join(missing)}: no such model")
    return paths


def main(argv: list[str] | None = None) -> int:
    """Tune and measure each model; print the table and the geometric means."""
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tune-worker", help=argparse.SUPPRESS)
    ap.add_argument("--latency-worker", choices=tuple(WORKERS), help=argparse.SUPPRESS)
    ap.add_argument("--model-path", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--records", default="", help=argparse.SUPPRESS)
    ap.add_argument("--only", nargs="+", help="these models only")
    ap.add_argument("--model-dir", type=Path, help="the reference models (default: made)")
    ap.add_argument("--real", action="store_true", help="also the real-architecture suite")
    ap.add_argument("--real-dir", type=Path, help="its cache (default: real_models_export's)")
    ap.add_argument("--tuner", choices=("xgb", "random", "ga", "gridsearch"), default="xgb")
    ap.add_argument("--trials", type=int, default=1000, help="n_trial of each task")
    ap.add_argument("--early-stopping", type=int, default=400)
    ap.add_argument("--budget-minutes", type=float, default=15.0, help="tuning cap per model")
    ap.add_argument("--n-parallel", type=int, default=2, help="LocalBuilder(n_parallel=)")
    ap.add_argument("--build-timeout", type=float, default=20.0)
    ap.add_argument("--run-timeout", type=float, default=10.0)
    ap.add_argument("--number", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-repeat-ms", type=int, default=50)
    ap.add_argument("--threads", nargs="+", type=int, default=[1, 2], choices=sorted(CORES))
    ap.add_argument("--min-seconds", type=float, default=1.0, help="time per latency measurement")
    ap.add_argument("--rounds", type=int, default=2, help="rounds of latency workers, best kept")
    ap.add_argument("--rtol", type=float, default=1e-3, help="max |diff| / output scale vs ORT")
    ap.add_argument("--no-peak", action="store_true", help="skip the FMA peak measurement")
    ap.add_argument("--json", type=Path, help="also write the results here")
    ap.add_argument("--work", type=Path, help="keep records and logs here")
    ap.add_argument(
        "--from-records",
        type=Path,
        metavar="DIR",
        help="no tuning: the records DIR/<model>.records.json of an earlier run (its --work)",
    )
    opts = ap.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the fleet on SIGTERM too
    if opts.tune_worker:
        print(json.dumps(_tune_worker(json.loads(opts.tune_worker))), flush=True)
        return 0
    if opts.latency_worker:
        result = _latency_worker(
            opts.latency_worker, opts.model_path, opts.threads[0], opts.records, opts.min_seconds
        )
        print(json.dumps(result), flush=True)
        return 0
    return _drive(opts)


def _drive(opts: argparse.Namespace) -> int:
    with contextlib.ExitStack() as stack:
        tmp = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pytvm-tune-")))
        work = opts.work.resolve() if opts.work else tmp
        work.mkdir(parents=True, exist_ok=True)
        paths = _model_paths(opts, tmp)
        import onnxruntime

        print(f"CPU: {cpu_model()}; ONNX Runtime {onnxruntime.__version__}")
        peaks: dict[int, float] = {}
        if not opts.no_peak:
            from models import _fma_peak

            for t in opts.threads:
                peaks[t] = _fma_peak(t, CORES[t])
                print(f"FMA peak, {t} thread(s) on cores {CORES[t]}: {peaks[t]:.1f} GFLOP/s")
        print(
            f"tuning: {opts.tuner}, up to {opts.trials} trials per task, early stopping"
            f" {opts.early_stopping}, budget {opts.budget_minutes:g} min per model split by FLOPs;"
            f" LocalBuilder(n_parallel={opts.n_parallel}), RPCRunner(number={opts.number},"
            f" repeat={opts.repeat}, min_repeat_ms={opts.min_repeat_ms}), 2 servers (cores 0, 1)"
        )
        print("latency (ms): best of 5 batches; t/ORT = tuned / ORT, t/unt = tuned / untuned")
        print(header(opts), flush=True)
        results: dict[str, Any] = {}
        for name, path in paths.items():
            if opts.from_records:
                tune = records_summary(opts.from_records / f"{name}.records.json")
            else:
                tune = tune_model(name, path, opts, work)
            latency = measure_model(path, tune.get("records", ""), opts, work)
            results[name] = {"tune": tune, "latency": latency}
            print(format_row(name, results[name], opts), flush=True)
        summary = {}
        for t in opts.threads:
            pairs = [ratios(r["latency"], t) for r in results.values()]
            to_ort = geomean([a for a, _ in pairs if not math.isnan(a)])
            to_untuned = geomean([b for _, b in pairs if not math.isnan(b)])
            summary[t] = {"tuned_over_ort": to_ort, "tuned_over_untuned": to_untuned}
            print(
                f"geometric mean, {t} thread(s): tuned/ORT {to_ort:.2f}, tuned/untuned"
                f" {to_untuned:.2f} (over {sum(not math.isnan(a) for a, _ in pairs)} models)"
            )
        if opts.json:
            doc = {"cpu": cpu_model(), "fma_peak": peaks, "models": results, "geomean": summary}
            opts.json.write_text(json.dumps(doc, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
