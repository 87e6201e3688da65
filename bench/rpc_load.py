"""RPC server under load: many clients connecting at once, pytvm's server against apache-tvm's.

Each round, ``--clients`` clients (threads spread over ``--procs`` client processes, so one
client's GIL does not serialise them all) are released together; each one connects, handshakes,
calls ``rpc.test.addone(1)`` on the server and closes. Its *connect latency* is the time from
the start of ``connect`` to that first call returning. A round's *sessions/s* is its client
count over the time from the first release to the last return. Rounds repeat ``--rounds``
times against each server in turn (pytvm, apache-tvm, pytvm, ...), so a change in the machine's
load hits both alike; the table gives sessions/s over all rounds, p50/p99 of the time until
``connect`` returned, and p50/p99/max of the time until the first call returned.

Both servers run as subprocesses pinned with ``taskset`` to the servers' core set (every
worker they fork inherits it); the client processes are pinned to the other cores when
``--pinning split`` (the default where there are two cores or more), or share every core with
the servers under ``--pinning none``. The pytvm server comes from this checkout, or from
``--pytvm-root DIR`` (e.g. a ``git worktree`` of an older commit: its ``pytvm.__file__`` is
printed). Run: ``python bench/rpc_load.py``; ``--quick`` is a smoke run (10 clients, 1 round).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from _harness import REPO, Fleet, Proc, cpu_model, free_port

HOST = "127.0.0.1"


# ---------------------------------------------------------------------------- client processes


def _client_main(port: int, threads: int) -> None:
    """A client process: for each ``go`` line on stdin, run ``threads`` sessions at once and
    print one JSON line ``[[start, end, error], ...]`` (``time.monotonic`` seconds).
    """
    from pytvm.rpc.sessions.client import connect

    def one(out: list[Any], index: int, go: threading.Event) -> None:
        go.wait()
        start = time.monotonic()
        try:
            sess = connect(HOST, port, connect_timeout=60)
            connected = time.monotonic()
            try:
                if sess.get_function("rpc.test.addone")(1) != 2:
                    raise RuntimeError("wrong answer from rpc.test.addone")
                end = time.monotonic()
            finally:
                sess.close()
            out[index] = [start, end, "", connected]
        except Exception as err:
            now = time.monotonic()
            out[index] = [start, now, f"{type(err).__name__}: {err}", now]

    print("ready", flush=True)
    for line in sys.stdin:
        if line.strip() != "go":
            break
        go = threading.Event()
        out: list[Any] = [None] * threads
        workers = [threading.Thread(target=one, args=(out, i, go)) for i in range(threads)]
        for worker in workers:
            worker.start()
        go.set()
        for worker in workers:
            worker.join()
        print(json.dumps(out), flush=True)


class _Clients:
    """``procs`` client processes with ``total`` threads between them, pinned to ``cores``."""

    def __init__(self, port: int, total: int, procs: int, cores: str) -> None:
        counts = [total // procs + (i < total % procs) for i in range(procs)]
        self.popens = []
        for count in filter(None, counts):
            argv = ["taskset", "-c", cores, sys.executable, __file__, "--client", str(port)]
            popen = subprocess.Popen(
                [*argv, str(count)],
                cwd=REPO,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                text=True,
            )
            self.popens.append(popen)
        for popen in self.popens:
            assert popen.stdout is not None
            if popen.stdout.readline().strip() != "ready":
                raise RuntimeError("a client process did not start")

    def round(self) -> list[list[Any]]:
        """Release every client at once; their ``[start, end, error]`` records."""
        for popen in self.popens:
            assert popen.stdin is not None
            popen.stdin.write("go\n")
            popen.stdin.flush()
        records: list[list[Any]] = []
        for popen in self.popens:
            assert popen.stdout is not None
            records += json.loads(popen.stdout.readline())
        return records

    def close(self) -> None:
        for popen in self.popens:
            assert popen.stdin is not None
            popen.stdin.close()
        for popen in self.popens:
            try:
                popen.wait(30)
            except subprocess.TimeoutExpired:
                popen.kill()
                popen.wait()


# ---------------------------------------------------------------------------- servers


def _pytvm_env(root: str | None) -> dict[str, str]:
    env = dict(os.environ)
    if root:
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH", "")]))
    return env


def _pytvm_file(root: str | None) -> str:
    probe = [sys.executable, *_isolated(root), "-c", "import pytvm; print(pytvm.__file__)"]
    env = _pytvm_env(root)
    out = subprocess.run(probe, cwd=REPO, env=env, capture_output=True, text=True, check=True)
    return out.stdout.strip()


def _isolated(root: str | None) -> list[str]:
    """``-P`` (no current directory on ``sys.path``) when pytvm must come from ``root``: the
    servers run in this checkout's directory.
    """
    return ["-P"] if root else []


def _start_servers(
    fleet: Fleet, root: str | None, extra: list[str], skip_tvm: bool
) -> dict[str, Proc]:
    py_port, tvm_port = free_port(), free_port()
    py_argv = [sys.executable, *_isolated(root), "-m", "pytvm.cli", "rpc", "server", "--host", HOST]
    py_argv += ["--port", str(py_port), "--port-end", str(py_port + 100), "--silent", *extra]
    tvm_argv = [sys.executable, "-m", "tvm.exec.rpc_server", "--host", HOST]
    tvm_argv += ["--port", str(tvm_port), "--port-end", str(tvm_port + 100)]
    saved = dict(os.environ)
    try:  # the fleet's subprocesses inherit this process's environment
        os.environ.clear()
        os.environ.update(_pytvm_env(root))
        servers = {"pytvm": fleet.start("pytvm-server", py_argv, r"listening on [\d.]+:(\d+)")}
    finally:
        os.environ.clear()
        os.environ.update(saved)
    if not skip_tvm:
        servers["apache-tvm"] = fleet.start("tvm-server", tvm_argv, r"bind to [\d.]+:(\d+)")
    for proc in servers.values():
        proc.wait_ready()
    return servers


# ---------------------------------------------------------------------------- report


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[index]


def _summary(rounds: list[list[list[Any]]]) -> dict[str, Any]:
    latencies, handshakes, errors, rates = [], [], [], []
    for records in rounds:
        ok = [r for r in records if not r[2]]
        errors += [r[2] for r in records if r[2]]
        latencies += [r[1] - r[0] for r in ok]
        handshakes += [r[3] - r[0] for r in ok]
        span = max(r[1] for r in records) - min(r[0] for r in records)
        rates.append(len(ok) / span if span > 0 else 0.0)
    ms = [x * 1e3 for x in latencies] or [float("nan")]
    connect_ms = [x * 1e3 for x in handshakes] or [float("nan")]
    return {
        "rate": statistics.median(rates),
        "connect_p50": _percentile(connect_ms, 50),
        "connect_p99": _percentile(connect_ms, 99),
        "p50": _percentile(ms, 50),
        "p99": _percentile(ms, 99),
        "max": max(ms),
        "n": len(latencies),
        "errors": errors,
    }


def main() -> None:
    """Parse the options, then run as one client process or measure each server under load."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--clients", type=int, default=100, help="clients released at once")
    parser.add_argument("--procs", type=int, default=4, help="client processes sharing them")
    parser.add_argument("--rounds", type=int, default=5, help="rounds against each server")
    parser.add_argument("--pinning", choices=("split", "none"), help="see the module docstring")
    parser.add_argument("--pytvm-root", help="import the pytvm server from this directory")
    parser.add_argument(
        "--server-arg", action="append", default=[], help="extra `pytvm rpc server` argument"
    )
    parser.add_argument("--quick", action="store_true", help="smoke run: 10 clients, 1 round")
    parser.add_argument(
        "--skip-tvm", action="store_true", help="measure the pytvm server only (experiments)"
    )
    parser.add_argument("--client", nargs=2, type=int, help=argparse.SUPPRESS)
    opts = parser.parse_args()
    if opts.client:
        _client_main(*opts.client)
        return
    if opts.quick:
        opts.clients, opts.rounds = min(opts.clients, 10), 1

    cores = sorted(os.sched_getaffinity(0))
    pinning = opts.pinning or ("split" if len(cores) > 1 else "none")
    if pinning == "split" and len(cores) > 1:
        server_cores, client_cores = str(cores[0]), ",".join(map(str, cores[1:]))
    else:
        server_cores = client_cores = ",".join(map(str, cores))

    print("RPC server load: clients connecting at once, pytvm vs apache-tvm 0.27, same run")
    print(f"CPU: {cpu_model()}, {len(cores)} usable cores; load {os.getloadavg()[0]:.2f}")
    print(f"servers on cores {server_cores}, {opts.procs} client processes on cores {client_cores}")
    print(f"pytvm server: {_pytvm_file(opts.pytvm_root)} {' '.join(opts.server_arg)}")
    print(f"{opts.clients} clients x {opts.rounds} rounds; each: connect, addone(1), close\n")

    results: dict[str, list[list[list[Any]]]] = {}
    with tempfile.TemporaryDirectory(prefix="pytvm-bench-load-") as tmp:
        fleet = Fleet(server_cores, Path(tmp))
        try:
            servers = _start_servers(fleet, opts.pytvm_root, opts.server_arg, opts.skip_tvm)
            clients = {
                name: _Clients(proc.port, opts.clients, opts.procs, client_cores)
                for name, proc in servers.items()
            }
            try:
                for _ in range(opts.rounds):
                    for name, group in clients.items():
                        time.sleep(1.0)  # let the previous round's workers exit and respawn
                        results.setdefault(name, []).append(group.round())
            finally:
                for group in clients.values():
                    group.close()
        finally:
            fleet.stop_all()

    print("connect: connect() returned (handshake and session set up); first call: connect() then")
    print("one remote call returned; milliseconds from each client's release")
    head = f"{'server':12s} {'sessions/s':>11s} {'connect p50':>12s} {'connect p99':>12s}"
    print(f"{head} {'call p50':>9s} {'call p99':>9s} {'call max':>9s}  ok")
    for name, rounds in results.items():
        s = _summary(rounds)
        print(
            f"{name:12s} {s['rate']:11.1f} {s['connect_p50']:12.1f} {s['connect_p99']:12.1f}"
            f" {s['p50']:9.1f} {s['p99']:9.1f} {s['max']:9.1f}"
            f"  {s['n']}/{opts.clients * opts.rounds}"
        )
        for error in sorted(set(s["errors"]))[:3]:
            print(f"    error: {error}")


if __name__ == "__main__":
    main()
