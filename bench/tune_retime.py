"""The best configuration of each tuning log re-timed side by side, so that peers tuned at
different times (and machine loads) are compared in one window.

One timer process per log (TVM v0.18's interpreter for its logs, pytvm's for pytvm's), all
pinned to the same core: each takes the log's fastest successful record, recreates its task
with ``autotvm.task.create(name, args, target)``, instantiates the record's configuration,
builds it, and then answers each ``t`` line on its input with the seconds of one
``time_evaluator(number=N, repeat=1)`` call. The driver asks the timers in turn, ``rounds``
times, and keeps each one's best: a load change hits all of them alike.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any


def _timer(peer: str, log: str, number: int) -> None:
    """Build the best record of ``log`` and time it on request (the timer process)."""
    import numpy as np

    root = "pytvm" if peer == "pytvm" else "tvm"
    tvm: Any = importlib.import_module(root)
    autotvm: Any = importlib.import_module(f"{root}.autotvm")
    # the modules that register the templates: pytvm's strategy rows, TVM's topi
    importlib.import_module("pytvm.topi.x86.strategy" if peer == "pytvm" else "tvm.topi")

    records = [r for r in autotvm.record.load_from_file(log) if int(r[1].error_no) == 0]
    if not records:
        raise LookupError(f"{log}: no successful record")
    inp, res = min(records, key=lambda r: float(np.mean(r[1].costs)))
    task = autotvm.task.create(inp.task.name, inp.task.args, inp.target)
    with inp.target:
        sched, args = task.instantiate(inp.config)
    func = tvm.build(sched, args, target=inp.target)
    dev = tvm.cpu()
    rng = np.random.default_rng(0)
    arrays = [
        tvm.nd.array(rng.standard_normal([int(d) for d in a.shape]).astype(a.dtype), dev)
        for a in args
    ]
    evaluator = func.time_evaluator(func.entry_name, dev, number=number, repeat=1)
    evaluator(*arrays)  # warm-up
    ready = {"flop": float(task.flop), "tuned_s": float(np.mean(res.costs))}
    print(json.dumps({**ready, "config": str(inp.config)}), flush=True)
    for line in sys.stdin:
        if line.strip() != "t":
            break
        print(float(evaluator(*arrays).results[0]), flush=True)


@dataclass
class TimerSpec:
    """One log to re-time: its key in the results, peer, interpreter and environment."""

    key: str
    peer: str
    python: str
    env: dict[str, str]
    log: Path


@dataclass
class _Timer:
    spec: TimerSpec
    proc: subprocess.Popen[str]
    ready: dict[str, Any] = field(default_factory=dict)
    best: float = float("inf")
    note: str = ""


def _readline(stream: IO[str], timeout: float) -> str:
    ready, _, _ = select.select([stream], [], [], timeout)
    if not ready:
        raise TimeoutError(f"no answer in {timeout:.0f} s")
    line = stream.readline()
    if not line:
        raise EOFError("the timer exited")
    return line


def _stop(proc: subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    with contextlib.suppress(subprocess.TimeoutExpired):
        proc.wait(10)
    for stream in (proc.stdin, proc.stdout, proc.stderr):
        if stream is not None:
            with contextlib.suppress(OSError):
                stream.close()


def _start(spec: TimerSpec, core: str, number: int, workdir: Path) -> _Timer:
    env = {**spec.env, "TVM_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
    err = (workdir / f"{spec.key.replace(' ', '-')}.timer.log").open("w")
    argv = [spec.python, str(Path(__file__).resolve()), "--timer", spec.peer, str(spec.log)]
    proc = subprocess.Popen(
        ["taskset", "-c", core, *argv, str(number)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=err,
        text=True,
        env=env,
        start_new_session=True,
    )
    err.close()
    return _Timer(spec, proc)


def retime(
    specs: Sequence[TimerSpec],
    core: str,
    workdir: Path,
    rounds: int = 7,
    number: int = 10,
    timeout: float = 300.0,
) -> dict[str, dict[str, Any]]:
    """Each log's best configuration timed in turns on ``core``; per key the tuned and re-timed
    GFLOP/s (or a note saying why not).
    """
    timers = [_start(s, core, number, workdir) for s in specs]
    try:
        for t in timers:
            try:
                t.ready = json.loads(_readline(_out(t), timeout))
            except (TimeoutError, EOFError, ValueError) as err:
                t.note = f"{err}: {_last_error(workdir, t.spec.key)}"
        for _ in range(rounds):
            for t in timers:
                if t.note:
                    continue
                try:
                    _in(t).write("t\n")
                    _in(t).flush()
                    t.best = min(t.best, float(_readline(_out(t), timeout)))
                except (TimeoutError, EOFError, ValueError, BrokenPipeError) as err:
                    t.note = str(err)
    finally:
        for t in timers:
            _stop(t.proc)
    out: dict[str, dict[str, Any]] = {}
    for t in timers:
        if t.note:
            out[t.spec.key] = {"note": t.note[:200]}
            continue
        flop = t.ready["flop"]
        out[t.spec.key] = {
            "tuned_gflops": flop / t.ready["tuned_s"] / 1e9,
            "retimed_gflops": flop / t.best / 1e9,
            "retimed_ms": t.best * 1e3,
            "config": t.ready["config"],
        }
    return out


def _in(t: _Timer) -> IO[str]:
    assert t.proc.stdin is not None
    return t.proc.stdin


def _out(t: _Timer) -> IO[str]:
    assert t.proc.stdout is not None
    return t.proc.stdout


def _last_error(workdir: Path, key: str) -> str:
    log = workdir / f"{key.replace(' ', '-')}.timer.log"
    lines = [ln for ln in log.read_text(errors="replace").splitlines() if ln.strip()]
    return lines[-1][:200] if lines else "(no output)"


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "--timer":
        _timer(sys.argv[2], sys.argv[3], int(sys.argv[4]))
    else:
        sys.exit("usage: tune_retime.py --timer PEER LOG NUMBER (started by bench/tune_tvm018.py)")
