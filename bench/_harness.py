"""What the benchmarks share: timing in interleaved batches, and subprocesses pinned with
``taskset``, each in its own session, found ready by the address line it prints, and always
stopped (process group, SIGTERM then SIGKILL).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


@contextlib.contextmanager
def environ(env: dict[str, str]) -> Any:
    """``env`` as this process's environment while the block runs (processes started inside
    inherit it).
    """
    saved = dict(os.environ)
    os.environ.clear()
    os.environ.update(env)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Proc:
    """A pinned subprocess in its own session; output goes to a file scanned for its address."""

    def __init__(self, name: str, cores: str, argv: list[str], pattern: str, workdir: Path) -> None:
        self.name = name
        self.log = workdir / f"{name}.log"
        self._pattern = re.compile(pattern)
        with self.log.open("wb") as out:
            self.popen = subprocess.Popen(
                ["taskset", "-c", cores, *argv],
                cwd=REPO,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.port = 0

    def wait_ready(self, timeout: float = 60.0) -> int:
        """Wait for the address line; return the port it names."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            match = self._pattern.search(self.log.read_text(errors="replace"))
            if match:
                self.port = int(match.group(1))
                return self.port
            if self.popen.poll() is not None:
                break
            time.sleep(0.02)
        raise RuntimeError(f"{self.name} did not start; its output:\n{self.output()}")

    def output(self) -> str:
        return self.log.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        """SIGTERM the process group, then SIGKILL whatever is left after a grace period."""
        pgid = self.popen.pid
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGTERM)
        try:
            self.popen.wait(5)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(pgid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.popen.wait(5)


class Fleet:
    """All subprocesses of one run; stops every one of them on exit, error or not."""

    def __init__(self, cores: str, workdir: Path) -> None:
        self.cores, self.workdir = cores, workdir
        self.procs: list[Proc] = []

    def start(self, name: str, argv: list[str], pattern: str) -> Proc:
        proc = Proc(name, self.cores, argv, pattern, self.workdir)
        self.procs.append(proc)
        return proc

    def pytvm_server(
        self,
        name: str = "pytvm-server",
        tracker: int | None = None,
        key: str = "bench",
        popen_executables: Sequence[str] = (),
    ) -> Proc:
        port = free_port()
        argv = [sys.executable, "-m", "pytvm.cli", "rpc", "server", "--host", "127.0.0.1"]
        argv += ["--port", str(port), "--port-end", str(port + 100), "--silent"]
        if tracker is not None:
            argv += ["--key", key, "--tracker", f"127.0.0.1:{tracker}"]
        for path in popen_executables:
            argv += ["--popen-executable", str(path)]
        return self.start(name, argv, r"server listening on [\d.]+:(\d+)")

    def stop_all(self) -> None:
        for proc in reversed(self.procs):
            proc.stop()


def interleaved_best(
    fns: dict[Any, Callable[[], object]], *, batch_s: float, rounds: int, budget_s: float
) -> dict[Any, float]:
    """Seconds per call for each of ``fns``: the best of ``rounds`` batches of about
    ``batch_s``, the batches of all of them taken in turn (so a change in the machine's load
    hits them alike). One that has spent ``budget_s`` stops after two batches.

    One calibrating call each comes first; it only warms up unless it is already longer than a
    batch, in which case it is a sample too (so a 2 s copy is not paid for once more).
    """
    samples: dict[Any, list[float]] = {}
    spent: dict[Any, float] = {}
    inner: dict[Any, int] = {}
    for key, fn in fns.items():
        t0 = time.perf_counter()
        fn()
        first = time.perf_counter() - t0
        samples[key] = [first] if first >= batch_s else []
        spent[key] = first
        inner[key] = max(1, int(batch_s / max(first, 1e-7)))

    def done(key: Any) -> bool:
        n = len(samples[key])
        return n >= rounds or (n >= 2 and spent[key] >= budget_s)

    while not all(map(done, fns)):
        for key, fn in fns.items():
            if done(key):
                continue
            n = inner[key]
            t0 = time.perf_counter()
            for _ in range(n):
                fn()
            elapsed = time.perf_counter() - t0
            spent[key] += elapsed
            samples[key].append(elapsed / n)
    return {key: min(values) for key, values in samples.items()}


def best_ms(run: Callable[[], object], seconds: float) -> float:
    """The best time of ``run`` in ms over about ``seconds`` of calls, after a warm-up call."""
    run()
    best, deadline = float("inf"), time.perf_counter() + seconds
    while time.perf_counter() < deadline:
        start = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - start)
    return best * 1e3


def pin(core: int) -> None:
    os.sched_setaffinity(0, {core})


def cpu_model() -> str:
    with contextlib.suppress(OSError):
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return platform.processor() or "unknown"


def run_worker(
    argv: Sequence[str], threads: int, cores: str, extra_env: dict[str, str] | None = None
) -> dict[str, Any] | str:
    """Run a benchmark worker pinned to ``cores`` with every library told to use ``threads``;
    the JSON object its last output line holds, or the last line of its error output.
    """
    env = {**os.environ, **(extra_env or {})}
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "TVM_NUM_THREADS"):
        env[var] = str(threads)
    proc = subprocess.run(
        ["taskset", "-c", cores, *argv], capture_output=True, text=True, env=env, check=False
    )
    if proc.returncode != 0:
        lines = proc.stderr.strip().splitlines()
        return lines[-1] if lines else f"exited with status {proc.returncode}"
    result: dict[str, Any] = json.loads(proc.stdout.strip().splitlines()[-1])
    return result


MIB = 1 << 20


def size_name(size: int) -> str:
    if size >= MIB and size % MIB == 0:
        return f"{size // MIB} MiB"
    if size >= 1024 and size % 1024 == 0:
        return f"{size // 1024} KiB"
    return f"{size} B"


def mib_per_s_by_op(
    fns: dict[Any, Callable[[], object]], ops: Any, size: int, opts: Any
) -> dict[Any, float]:
    """MiB/s of each copy in ``fns`` (keys ``(..., op, ...)`` with ``op`` second), the copies of
    one op timed in interleaved batches against each other.
    """
    out: dict[Any, float] = {}
    for op in ops:
        part = {key: fn for key, fn in fns.items() if key[1] == op}
        best = interleaved_best(
            part, batch_s=opts.batch_s, rounds=opts.rounds, budget_s=opts.budget_s
        )
        for key, per in best.items():
            out[key] = size / MIB / per
    return out


def choose_pinnings(choice: str | None) -> tuple[list[int], list[tuple[str, int]]]:
    """The usable cores and the client pinnings to measure: ``("same core", c0)`` (the servers'
    core) and/or ``("2 cores", c1)``, per ``--pinning`` (None: both).
    """
    cores = sorted(os.sched_getaffinity(0))
    out = []
    if choice in (None, "both", "same") or len(cores) == 1:
        out.append(("same core", cores[0]))
    if choice in (None, "both", "split") and len(cores) > 1:
        out.append(("2 cores", cores[1]))
    return cores, out
