"""Tuning curves of one convolution: TVM v0.18's AutoTVM beside pytvm's, best GFLOP/s by trial.

The task is resnet18's 3x3 64->64 convolution on 56x56 (NCHW, float32, batch 1, stride 1, pad 1).

* TVM v0.18 (run by the interpreter ``--tvm-python`` with TVM's ``python/`` on
  ``--tvm-pythonpath``): ``relay.nn.conv2d`` as a Relay function, its task found by
  ``autotvm.task.extract_from_program(..., ops=(relay.op.get("nn.conv2d"),))`` for
  ``llvm -mcpu=<this CPU, as TVM's LLVM names it>`` (where that LLVM is older than the CPU and
  says ``generic``: the CPU it knows with the same vector ISA, see :func:`tvm_mcpu`): the
  template ``conv2d_NCHWc.x86``.
* pytvm: the same convolution as a one-node ONNX model, imported with ``from_onnx``, its task
  found by ``pytvm.autotvm.task.extract_from_program`` for ``llvm`` (this CPU): the strategy
  row's template the graph build uses for it (``conv2d_nchw_packed.x86`` today); and pytvm's
  ``conv2d_NCHWc.x86`` (TVM's name) created with ``autotvm.task.create`` on the same
  convolution with data and kernel already packed in blocks of 16 channels (pytvm's compute
  takes them packed; TVM's packs 4-D arguments itself and tunes the blocks too).

Each peer tunes with the same tuner (``--tuner``: ``xgb`` = ``XGBTuner``, ``random`` =
``RandomTuner``, ``ga``, ``gridsearch``), the same ``n_trial`` and the same
``measure_option(builder=LocalBuilder(n_parallel=--n-parallel, timeout=--build-timeout),
runner=RPCRunner(key, tracker, number=, repeat=, min_repeat_ms=, timeout=))``. Each peer's own
tracker and RPC server run on loopback; the server is pinned to core 1 (``taskset -c 1``, one
runtime thread), the tuner and its builders to core 0. Both peers are measured in the same run.
The table gives the best GFLOP/s found by trials 1, 5, 10, 20, 50, 100, 200 (of those run), the
trials run, how many failed, and the tuning wall time; ``--json PATH`` writes every trial.

TVM v0.18 here is built with ``USE_LLVM OFF`` and TVM's LLVM code generator as a separate
library (``--tvm-llvm-plugin``, see bench/micro_tvm018.py). AutoTVM's builders are processes
TVM starts itself, so the plugin is loaded in every TVM process by a ``sitecustomize`` module
this script writes to a temporary directory put first on TVM's ``PYTHONPATH``. TVM needs
``xgboost`` (``pip install xgboost-cpu``) for its XGBTuner and ``tornado`` for its tracker.

Run: ``.venv/bin/python bench/tune_tvm018.py --tvm-python /work/venv-tvm018/bin/python
--tvm-pythonpath /work/tvm018/python --tvm-llvm-plugin
/work/tvm018/build-llvm-ext/libtvm_llvm_ext.so`` (``--trials 200 --tuner xgb --tuner random``,
``--peer pytvm`` for one peer only). Without a TVM v0.18 that interpreter can import, its rows
say why and pytvm's are still measured.
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
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _harness import Fleet, Proc, cpu_model, environ, free_port
from tune_conv_worker import CONV, KEY
from tune_retime import TimerSpec, retime

REPO = Path(__file__).resolve().parents[1]
WORKER = Path(__file__).resolve().parent / "tune_conv_worker.py"

MARKS = (1, 5, 10, 20, 50, 100, 200)
TUNERS = ("xgb", "random", "ga", "gridsearch")
PEERS = ("tvm018", "pytvm")
TRACKER_CORES, SERVER_CORES, TUNER_CORES = "0", "1", "0"

_SITECUSTOMIZE = (
    "import ctypes, os\n"
    "if os.environ.get('TVM018_LLVM_PLUGIN'):\n"
    "    ctypes.CDLL(os.environ['TVM018_LLVM_PLUGIN'], mode=ctypes.RTLD_GLOBAL)\n"
)

_TVM_CHECK = (
    "import tvm\n"
    "print(tvm.__version__, flush=True)\n"
    "from tvm import autotvm, relay, rpc\n"
    "import xgboost, tornado\n"
    "print(tvm.get_global_func('target.build.llvm', allow_missing=True) is not None)\n"
)


# ---------------------------------------------------------------------------- the driver


def tvm018_unavailable(python: str | None, pythonpath: str, plugin: str | None) -> str | None:
    """Why ``python`` cannot tune with TVM v0.18's AutoTVM, or None when it can."""
    if not python or not Path(python).is_file():
        return f"--tvm-python {python}: no such interpreter" if python else "no --tvm-python given"
    with tempfile.TemporaryDirectory(prefix="tvm018-site-") as site:
        env = _tvm_env(Path(site), pythonpath, plugin)
        try:
            done = subprocess.run(
                [python, "-c", _TVM_CHECK],
                capture_output=True,
                text=True,
                timeout=300,
                check=False,
                env=env,
            )
        except (OSError, subprocess.TimeoutExpired) as err:
            return f"{python} -c 'import tvm': {err}"
    lines = done.stdout.split()
    if lines and not lines[0].startswith("0.18"):
        return f"{python} imports TVM {lines[0]}, not 0.18"
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["(no message)"])[-1]
        return f"{python} cannot import tvm.autotvm, xgboost and tornado: {last}"
    if lines[-1] != "True":
        return (
            f"{python}'s TVM has no LLVM code generator"
            " (build it with USE_LLVM or give --tvm-llvm-plugin)"
        )
    return None


def _tvm_env(site: Path, pythonpath: str, plugin: str | None) -> dict[str, str]:
    """TVM's environment: the plugin loader first on the path, TopHub off."""
    (site / "sitecustomize.py").write_text(_SITECUSTOMIZE)
    env = {k: v for k, v in os.environ.items() if k != "TVM018_LLVM_PLUGIN"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), pythonpath) if p)
    env["TOPHUB_LOCATION"] = "NONE"
    if plugin:
        env["TVM018_LLVM_PLUGIN"] = str(Path(plugin).resolve())
    return env


def write_conv_onnx(path: Path) -> None:
    """The convolution as a one-node ONNX model (input ``data``, a seeded constant weight)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    c = CONV
    rng = np.random.default_rng(0)
    w = rng.standard_normal((c["out_c"], c["in_c"], c["kernel"], c["kernel"])).astype("float32")
    p, s = c["pad"], c["stride"]
    node = helper.make_node(
        "Conv",
        ["data", "weight"],
        ["out"],
        kernel_shape=[c["kernel"]] * 2,
        pads=[p] * 4,
        strides=[s, s],
    )
    out_size = (c["size"] + 2 * p - c["kernel"]) // s + 1
    graph = helper.make_graph(
        [node],
        "conv",
        [
            helper.make_tensor_value_info(
                "data", TensorProto.FLOAT, [c["batch"], c["in_c"], c["size"], c["size"]]
            )
        ],
        [
            helper.make_tensor_value_info(
                "out", TensorProto.FLOAT, [c["batch"], c["out_c"], out_size, out_size]
            )
        ],
        [numpy_helper.from_array(w, "weight")],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, str(path))


def run_pinned(
    argv: list[str], cores: str, env: dict[str, str], timeout: float
) -> dict[str, Any] | str:
    """Run ``argv`` pinned to ``cores`` in its own session (its group killed when it is done
    or past ``timeout``); the JSON of its last output line, or why there is none.
    """
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(
            ["taskset", "-c", cores, *argv],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            cwd=REPO,
            start_new_session=True,
        )
        try:
            proc.wait(timeout)
        except subprocess.TimeoutExpired:
            return f"timed out after {timeout:.0f} s"
        finally:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(10)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    if proc.returncode != 0:
        lines = [ln for ln in stderr.strip().splitlines() if ln.strip()]
        return lines[-1][:300] if lines else f"exited with status {proc.returncode}"
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            result: dict[str, Any] = json.loads(line)
            return result
    return "printed no result"


def _start_servers(fleet: Fleet, peer: str, python: str, env: dict[str, str]) -> tuple[Proc, Proc]:
    """The peer's tracker (core 0) and one RPC server under ``KEY`` (core 1)."""
    fleet.cores = TRACKER_CORES
    port = free_port()
    if peer == "tvm018":
        argv = [python, "-m", "tvm.exec.rpc_tracker", "--host", "127.0.0.1"]
        pattern = r"bind to [\d.]+:(\d+)"
    else:
        argv = [python, "-m", "pytvm.cli", "rpc", "tracker", "--host", "127.0.0.1"]
        pattern = r"tracker listening on [\d.]+:(\d+)"
    argv += ["--port", str(port), "--port-end", str(port + 100)]
    with environ(env):
        tracker = fleet.start(f"{peer}-tracker", argv, pattern)
    tracker.wait_ready()
    fleet.cores = SERVER_CORES
    port = free_port()
    if peer == "tvm018":
        argv = [python, "-m", "tvm.exec.rpc_server", "--host", "127.0.0.1"]
        pattern = r"bind to [\d.]+:(\d+)"
    else:
        argv = [python, "-m", "pytvm.cli", "rpc", "server", "--host", "127.0.0.1", "--silent"]
        pattern = r"server listening on [\d.]+:(\d+)"
    argv += ["--port", str(port), "--port-end", str(port + 100)]
    argv += ["--key", KEY, "--tracker", f"127.0.0.1:{tracker.port}"]
    with environ({**env, "TVM_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}):
        server = fleet.start(f"{peer}-server", argv, pattern)
    server.wait_ready()
    return tracker, server


def _peer_env(peer: str, opts: argparse.Namespace, work: Path) -> tuple[str, dict[str, str]]:
    """The peer's interpreter and environment."""
    if peer == "tvm018":
        site = work / "tvm018-site"
        site.mkdir(exist_ok=True)
        return opts.tvm_python, _tvm_env(site, opts.tvm_pythonpath, opts.tvm_llvm_plugin)
    return sys.executable, dict(os.environ)


def tune_once(
    peer: str, tuner: str, template: str | None, opts: argparse.Namespace, work: Path
) -> dict[str, Any]:
    """One tuning run: the peer's tracker and server started, its worker run, all stopped."""
    python, env = _peer_env(peer, opts, work)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS"):
        env[var] = "1"
    name = f"{peer}-{template or 'extracted'}-{tuner}"
    fleet = Fleet(TRACKER_CORES, work)
    try:
        tracker, _server = _start_servers(fleet, peer, python, env)
        spec = {
            "peer": peer,
            "tuner": tuner,
            "template": template,
            "onnx": str(work / "conv.onnx"),
            "tracker": tracker.port,
            "trials": opts.trials,
            "n_parallel": opts.n_parallel,
            "build_timeout": opts.build_timeout,
            "run_timeout": opts.run_timeout,
            "number": opts.number,
            "repeat": opts.repeat,
            "min_repeat_ms": opts.min_repeat_ms,
            "log": str(work / f"{name}.json"),
        }
        argv = [python, str(WORKER), json.dumps(spec)]
        start = time.perf_counter()
        result = run_pinned(argv, TUNER_CORES, env, opts.timeout)
        wall = time.perf_counter() - start
    except RuntimeError as err:
        result, wall = str(err).splitlines()[0], math.nan
    finally:
        fleet.stop_all()
    if isinstance(result, str):
        return {"name": name, "note": result}
    result.update(name=name, peer=peer, tuner=tuner, run_wall_s=wall, log=spec["log"])
    return result


def best_by_trial(trials: Sequence[dict[str, Any]], marks: Sequence[int]) -> list[float | None]:
    """The best GFLOP/s among the first ``m`` trials for each mark (None past the trials run)."""
    out: list[float | None] = []
    for m in marks:
        if m > len(trials):
            out.append(None)
            continue
        out.append(max(t["gflops"] for t in trials[:m]))
    return out


def format_row(run: dict[str, Any], marks: Sequence[int]) -> str:
    """One table row: name, best GFLOP/s at each mark, trials, failures, wall seconds."""
    if "note" in run:
        return f"{run['name']:40} ({run['note']})"
    cells = "".join(
        f" {v:7.1f}" if v is not None else f" {'-':>7}" for v in best_by_trial(run["trials"], marks)
    )
    failed = sum(1 for t in run["trials"] if t["error_no"] != 0)
    label = f"{run['peer']} {run['task']} {run['tuner']}"
    return f"{label:40}{cells} {len(run['trials']):7d} {failed:7d} {run['wall_s']:8.1f}"


def _fma_peak() -> float | None:
    try:
        from kernels import _fma_peak as peak  # the kernel bench's FMA probe

        return float(peak(1, SERVER_CORES)[0])
    except (OSError, subprocess.CalledProcessError, ImportError):
        return None


def _retime_best(
    runs: Sequence[dict[str, Any]], opts: argparse.Namespace, work: Path
) -> dict[str, dict[str, Any]]:
    """Re-time every run's best configuration in turns on the servers' core; print the table."""
    specs = []
    for run in runs:
        if "trials" in run and any(t["error_no"] == 0 for t in run["trials"]):
            python, env = _peer_env(run["peer"], opts, work)
            key = f"{run['peer']} {run['task']} {run['tuner']}"
            specs.append(TimerSpec(key, run["peer"], python, env, Path(run["log"])))
    if not specs or opts.retime_rounds < 1:
        return {}
    got = retime(specs, SERVER_CORES, work, rounds=opts.retime_rounds, number=opts.retime_number)
    print(
        f"\nbest configurations re-timed in turns on core {SERVER_CORES}"
        f" (best of {opts.retime_rounds} rounds of time_evaluator(number={opts.retime_number})):"
    )
    print(f"{'peer task tuner':40} {'tuning GFLOP/s':>15} {'re-timed GFLOP/s':>17} {'ms':>8}")
    for key, cell in got.items():
        if "note" in cell:
            print(f"{key:40} ({cell['note']})")
            continue
        print(
            f"{key:40} {cell['tuned_gflops']:15.1f} {cell['retimed_gflops']:17.1f}"
            f" {cell['retimed_ms']:8.2f}"
        )
    return got


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    ap.add_argument("--tvm-python", default=os.environ.get("TVM018_PYTHON"))
    ap.add_argument("--tvm-pythonpath", default=os.environ.get("TVM018_PYTHONPATH", ""))
    ap.add_argument(
        "--tvm-llvm-plugin",
        default=os.environ.get("TVM018_LLVM_PLUGIN"),
        help="TVM's LLVM code generator built as a library (loaded in every TVM process)",
    )
    ap.add_argument("--peer", choices=PEERS, action="append", help="tune with these peers only")
    ap.add_argument("--tuner", choices=TUNERS, action="append", help="default: xgb and random")
    ap.add_argument("--trials", type=int, default=200, help="n_trial of each run")
    ap.add_argument("--n-parallel", type=int, default=1, help="LocalBuilder(n_parallel=)")
    ap.add_argument("--build-timeout", type=float, default=20.0)
    ap.add_argument("--run-timeout", type=float, default=10.0)
    ap.add_argument("--number", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--min-repeat-ms", type=int, default=50)
    ap.add_argument("--timeout", type=float, default=3600.0, help="seconds for one tuning run")
    ap.add_argument("--retime-rounds", type=int, default=7, help="0: no re-timing")
    ap.add_argument("--retime-number", type=int, default=10)
    ap.add_argument("--no-peak", action="store_true", help="skip the FMA peak measurement")
    ap.add_argument("--json", type=Path, help="write every run's trials here")
    ap.add_argument("--work", type=Path, help="keep the logs and records here")
    return ap


def _print_setup(opts: argparse.Namespace) -> float | None:
    """Print the CPU, its FMA peak (returned) and the task and measure options."""
    print(f"CPU: {cpu_model()}")
    peak = None
    if not opts.no_peak:
        peak = _fma_peak()
        shown = f"{peak:.1f} GFLOP/s" if peak else "n/a"
        print(f"FMA peak, 1 thread (core {SERVER_CORES}): {shown}")
    c = CONV
    print(
        f"task: conv2d NCHW float32 data 1x{c['in_c']}x{c['size']}x{c['size']} weight"
        f" {c['out_c']}x{c['in_c']}x{c['kernel']}x{c['kernel']} stride {c['stride']}"
        f" pad {c['pad']}; {opts.trials} trials;"
        f" LocalBuilder(n_parallel={opts.n_parallel}) on core {TUNER_CORES},"
        f" RPCRunner(number={opts.number}, repeat={opts.repeat},"
        f" min_repeat_ms={opts.min_repeat_ms}) server on core {SERVER_CORES}"
    )
    return peak


def main(argv: list[str] | None = None) -> int:
    """Tune the convolution with each peer and tuner; print the curves' table."""
    opts = _parser().parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # stop the fleet on SIGTERM too
    peers = opts.peer or list(PEERS)
    tuners = opts.tuner or ["xgb", "random"]
    marks = [m for m in MARKS if m <= opts.trials] or [opts.trials]
    if opts.trials not in marks:
        marks.append(opts.trials)
    peak = _print_setup(opts)
    runs: list[dict[str, Any]] = []
    with contextlib.ExitStack() as stack:
        if opts.work:
            work = opts.work.resolve()
            work.mkdir(parents=True, exist_ok=True)
        else:
            work = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="pytvm-tune-conv-")))
        write_conv_onnx(work / "conv.onnx")
        why = None
        if "tvm018" in peers:
            why = tvm018_unavailable(opts.tvm_python, opts.tvm_pythonpath, opts.tvm_llvm_plugin)
            if why:
                print(f"TVM v0.18 not available: {why}")
        jobs: list[tuple[str, str | None]] = []
        if "tvm018" in peers and not why:
            jobs.append(("tvm018", "conv2d_NCHWc.x86"))
        if "pytvm" in peers:
            jobs += [("pytvm", None), ("pytvm", "conv2d_NCHWc.x86")]
        header = f"{'peer task tuner':40}" + "".join(f" {'@' + str(m):>7}" for m in marks)
        header += f" {'trials':>7} {'failed':>7} {'wall s':>8}"
        print("\nbest GFLOP/s found by trial:")
        print(header, flush=True)
        for tuner in tuners:
            for peer, template in jobs:
                run = tune_once(peer, tuner, template, opts, work)
                runs.append(run)
                print(format_row(run, marks), flush=True)
        targets = {f"{r['peer']} {r['task']}": r["target"] for r in runs if "target" in r}
        print("targets: " + "; ".join(f"{k}: {v}" for k, v in targets.items()))
        retimed = _retime_best(runs, opts, work)
    if opts.json:
        doc = {"cpu": cpu_model(), "fma_peak": peak, "conv": CONV, "runs": runs, "retimed": retimed}
        opts.json.write_text(json.dumps(doc, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
