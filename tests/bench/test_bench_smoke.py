from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.needs_cc
def test_ffi_bench_prints_table() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "ffi.py"), "--number", "200", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("case"))
    assert header.split() == ["case", "plain", "py", "pytvm", "tvm_ffi", "pytvm/tvm_ffi"]
    for row in (
        "Python->C, 0 args",
        "Python->C, 1 int",
        "Python->C, 4 ints",
        "Python->C, 1 float, 1 str",
        "Python->C, NDArray",
        "Python->Python, 0 args",
        "Python->Python, 4 ints",
    ):
        line = next(line for line in lines if line.startswith(row))
        numbers = line[len(row) :].split()
        assert len(numbers) == 4 and all(float(n) >= 0 for n in numbers), line
    path = next(line for line in lines if line.startswith("Python->C path:"))
    assert "fast-call extension" in path or "ctypes" in path


@pytest.mark.skipif(
    importlib.util.find_spec("tvm") is None
    or shutil.which("taskset") is None
    or not hasattr(os, "sched_setaffinity")
    or not hasattr(os, "pidfd_open"),
    reason="needs apache-tvm, taskset and Linux (sched_setaffinity, pidfd_open)",
)
def test_rpc_bench_prints_tables() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "rpc.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("pinning: ") and "taskset -c" in line for line in lines)
    headers = [line.split() for line in lines if line.startswith("case")]
    assert headers == [
        ["case", "pytvm", "apache-tvm", "pytvm/tvm"],
        ["case", "pytvm", "apache-tvm", "pytvm/tvm"],
        ["case", "raw", "socket", "pytvm", "apache-tvm", "pytvm/raw"],
        ["case", "pytvm", "apache-tvm", "pytvm/tvm"],
    ]
    expected = [
        ("own server", 3),
        ("pytvm server", 3),
        ("tvm server", 3),
        ("host->remote copyfrom, 1 KiB", 3),
        ("host->remote nd.array, 256 KiB", 3),
        ("remote->host numpy(), 256 KiB", 3),
        ("send 256 KiB", 4),
        ("recv 256 KiB", 4),
        ("median", 3),
        ("min", 3),
        ("max", 3),
    ]
    for suffix, count in expected:
        rows = [line for line in lines if line.split(",", 1)[-1].lstrip().startswith(suffix)]
        assert rows, f"no row for {suffix!r} in:\n{result.stdout}"
        for row in rows:
            numbers = row.rsplit(None, count)[1:]
            assert len(numbers) == count and all(float(n) > 0 for n in numbers), row
