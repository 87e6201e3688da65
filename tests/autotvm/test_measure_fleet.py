"""Tuning across a tracker fleet: a tracker and two RPC servers (``python -m
pytvm.exec.rpc_server``, each pinned to its own core when ``taskset`` exists) measuring a
convolution and a dense task, resuming from the records, applying the best; and servers that
die, hang or return wrong numbers while the tuning goes on (``faulty_rpc_server.py``).
"""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import autotvm
from pytvm.autotvm.measure import MeasureErrorNo, MeasureInput
from pytvm.rpc.services.tracker import Tracker
from pytvm.rpc.sessions.tracker_client import connect_tracker
from pytvm.testing.autotvm import DENSE_ARGS, conv2d_nchwc_args
from pytvm.topi.x86 import strategy  # noqa: F401 - registers the strategy rows' templates

KEY = "fleet"
FAULTY_SERVER = Path(__file__).with_name("faulty_rpc_server.py")
CONV_ARGS = conv2d_nchwc_args(2, 8)


def _servers(port: int) -> int:
    with connect_tracker("127.0.0.1", port, connect_timeout=10) as tracker:
        info = tracker.summary()["server_info"]
    return sum(1 for item in info if item["key"] == f"server:{KEY}")


def _wait_for_servers(port: int, count: int, procs: list[subprocess.Popen[bytes]]) -> None:
    """Poll the tracker until ``count`` servers of KEY are registered (30 s at most)."""
    deadline = time.monotonic() + 30
    while _servers(port) != count:
        dead = [p.args for p in procs if p.poll() is not None]
        assert not dead, f"server exited before registering: {dead}"
        assert time.monotonic() < deadline, f"{count} servers did not register within 30 s"
        time.sleep(0.05)


def _start(argv: list[str], cpu: int | None = None) -> subprocess.Popen[bytes]:
    pin = ["taskset", "-c", str(cpu)] if cpu is not None and shutil.which("taskset") else []
    return subprocess.Popen([*pin, sys.executable, *argv])


def _stop(proc: subprocess.Popen[bytes]) -> None:
    if proc.poll() is None:
        proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait(timeout=10)


def _server_argv(port: int) -> list[str]:
    argv = ["-m", "pytvm.exec.rpc_server", "--tracker", f"127.0.0.1:{port}", "--key", KEY]
    return [*argv, "--host", "127.0.0.1", "--port", "0", "--silent"]


@pytest.fixture(scope="module")
def tracker_port() -> Iterator[int]:
    """A tracker and two servers of KEY, pinned to cores 0 and 1."""
    with Tracker(host="127.0.0.1", port=0, silent=True) as tracker:
        procs = [_start(_server_argv(tracker.port), cpu) for cpu in (0, 1)]
        try:
            _wait_for_servers(tracker.port, 2, procs)
            yield tracker.port
        finally:
            for proc in procs:
                _stop(proc)


@pytest.fixture(scope="module")
def builder() -> Iterator[Any]:
    """One builder (two worker processes) for every task of this file."""
    made = autotvm.LocalBuilder(n_parallel=2)
    try:
        yield made
    finally:
        made.close()


def _option(port: int, builder: Any, **runner: Any) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"number": 2, "repeat": 2, "cooldown_interval": 0, **runner}
    runner_ = autotvm.RPCRunner(KEY, "127.0.0.1", port, **kwargs)
    option: dict[str, Any] = autotvm.measure_option(builder=builder, runner=runner_)
    return option


def _tune(task: Any, option: dict[str, Any], log: Path, n_trial: int, history: Any = ()) -> Any:
    tuner = autotvm.tuner.RandomTuner(task)
    if history:
        tuner.load_history(history)
    tuner.tune(n_trial, option, callbacks=[autotvm.callback.log_to_file(log)])
    return tuner


def test_fleet_tunes_resumes_and_applies_the_best(
    tracker_port: int, builder: Any, tmp_path: Path
) -> None:
    target = tvm.target.Target("llvm")
    conv = autotvm.task.create("conv2d_NCHWc.x86", CONV_ARGS, target)
    dense = autotvm.task.create("dense.x86", DENSE_ARGS, target)
    log = tmp_path / "records.json"
    for task in (conv, dense):
        _tune(task, _option(tracker_port, builder), log, min(12, len(task.config_space)))
    records = autotvm.record.load_from_file(log)
    by_task = {
        name: [r for r in records if r[0].task.name == name] for name in (conv.name, dense.name)
    }
    assert len(by_task[conv.name]) == 12
    assert len(by_task[dense.name]) == min(12, len(dense.config_space))
    assert all(res.error_no == 0 for _, res in records), [r.costs for _, r in records if r.error_no]

    # a restarted tuner skips what the records measured
    first = {inp.config.index for inp, _ in by_task[conv.name]}
    _tune(conv, _option(tracker_port, builder), log, 4, history=records)
    resumed = autotvm.record.load_from_file(log)[len(records) :]
    assert len(resumed) == 4 and not first & {inp.config.index for inp, _ in resumed}

    # apply_history_best gives each task's fastest record back
    for task in (conv, dense):
        mine = [r for r in autotvm.record.load_from_file(log) if r[0].task.name == task.name]
        best = min(mine, key=lambda r: float(np.mean(r[1].costs)))[0].config
        with autotvm.apply_history_best(log):
            got = autotvm.task.DispatchContext.current.query(target, task.workload)
        assert got.index == best.index


def test_runner_counts_the_servers_of_its_key(tracker_port: int) -> None:
    runner = autotvm.RPCRunner(KEY, "127.0.0.1", tracker_port, check_correctness=False)
    runner.set_task(autotvm.task.create("dense.x86", DENSE_ARGS, "llvm"))
    assert runner.n_parallel == 2
    bad = autotvm.RPCRunner("no-such-key", "127.0.0.1", tracker_port)
    with pytest.raises(ValueError, match="no server of key 'no-such-key'"):
        bad.set_task(autotvm.task.create("dense.x86", DENSE_ARGS, "llvm"))


def _measure_until(task: Any, option: dict[str, Any], code: MeasureErrorNo) -> Any:
    """Measure batches of 3 (one per server) until one result has ``code``: every result is
    that fault or a success, and the batches go on. Returns the faulty result and the results.
    """
    batch = autotvm.measure.create_measure_batch(task, option)
    seen: list[Any] = []
    for start in range(0, 15, 3):
        configs = [task.config_space.get(i) for i in range(start, start + 3)]
        seen += batch([MeasureInput(task.target, task, c) for c in configs])
        faults = [r for r in seen if r.error_no == code]
        if faults:
            break
    assert {r.error_no for r in seen} <= {MeasureErrorNo.NO_ERROR, code}, seen
    assert faults, f"no candidate reached the faulty server in {len(seen)} measurements"
    assert any(r.error_no == MeasureErrorNo.NO_ERROR for r in seen)
    return faults[0], seen


@pytest.mark.parametrize(
    ("fault", "code", "text"),
    [
        ("wrong", MeasureErrorNo.WRONG_ANSWER, "differs from the default configuration"),
        ("hang", MeasureErrorNo.RUN_TIMEOUT, "timed out"),
        ("die", MeasureErrorNo.RUNTIME_DEVICE, "closed"),
    ],
)
def test_faulty_server(
    tracker_port: int, builder: Any, fault: str, code: MeasureErrorNo, text: str
) -> None:
    addr = f"127.0.0.1:{tracker_port}"
    proc = _start([str(FAULTY_SERVER), "--tracker", addr, "--key", KEY, "--fault", fault])
    try:
        _wait_for_servers(tracker_port, 3, [proc])
        task = autotvm.task.create("conv2d_NCHWc.x86", CONV_ARGS, "llvm")
        option = _option(tracker_port, builder, timeout=1, upload_margin=1, n_parallel=3)
        fault_res, _ = _measure_until(task, option, code)
        assert text in str(fault_res.costs[0])
        if fault == "die":
            proc.wait(timeout=10)
            _wait_for_servers(tracker_port, 2, [])
            batch = autotvm.measure.create_measure_batch(task, option)
            configs = [task.config_space.get(i) for i in (20, 21)]
            after = batch([MeasureInput(task.target, task, c) for c in configs])
            assert [r.error_no for r in after] == [0, 0]
    finally:
        _stop(proc)
        _wait_for_servers(tracker_port, 2, [])


def test_frozen_server_is_given_up(tracker_port: int, builder: Any) -> None:
    """A server stopped by SIGSTOP answers nothing, not even the session handshake: the
    connect timeout ends the lease (the runner's watchdog is the backstop) and its candidate is
    given up as RUN_TIMEOUT.
    """
    proc = _start(_server_argv(tracker_port))
    try:
        _wait_for_servers(tracker_port, 3, [proc])
        proc.send_signal(signal.SIGSTOP)
        task = autotvm.task.create("conv2d_NCHWc.x86", CONV_ARGS, "llvm")
        kwargs = {"timeout": 1, "upload_margin": 1, "n_parallel": 3, "request_timeout": 1}
        option = _option(tracker_port, builder, **kwargs)
        fault_res, _ = _measure_until(task, option, MeasureErrorNo.RUN_TIMEOUT)
        assert "did not answer the handshake" in str(fault_res.costs[0])
    finally:
        proc.send_signal(signal.SIGCONT)
        _stop(proc)
        _wait_for_servers(tracker_port, 2, [])
