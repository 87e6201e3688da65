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
        check=False,
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
        check=False,
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
        ["case", "one", "hop", "streamed", "stored", "streamed/1hop", "stored/1hop"],
    ]
    two_hops = lines[lines.index(next(x for x in lines if x.startswith("5. two hops"))) :]
    for case in ("host->remote copyfrom", "remote->host numpy()"):
        rows = [x for x in two_hops if case in x]
        assert len(rows) == 1 and all(float(n) > 0 for n in rows[0].rsplit(None, 5)[1:]), rows
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


@pytest.mark.needs_cc
@pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("taskset", "make", "size", "nm"))
    or (shutil.which("gcc") is None and shutil.which("clang") is None)
    or not hasattr(os, "sched_setaffinity"),
    reason="needs taskset, make, binutils (size, nm), gcc or clang, and Linux",
)
def test_crt_bench_prints_tables() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "crt.py"), "--quick"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("pinning: ") and "taskset -c" in line for line in lines)
    assert any(line.startswith("versions: ") for line in lines)
    headers = [line.split() for line in lines if line.startswith("case")]
    assert len(headers) == 4, result.stdout
    assert headers[0][0] == "case" and headers[0][-1] == "text" and ".bss" in headers[0]
    assert headers[1:] == [
        ["case", "us/call", "x", "one", "hop"],
        (
            "case 1hop cpu 1hop hex board cpu board hex srv cpu tcp only bc/1hop bh/1hop sc/1hop"
        ).split(),
        ["case", "median", "min", "max", "x", "one", "hop"],
    ]
    compilers = headers[0].count(".text")  # gcc and/or clang, a ratio column if both
    expected = [
        ("CRT core (", 3 * compilers + (compilers == 2)),
        ("MinRPC (", 3 * compilers + (compilers == 2)),
        ("serial framing+session (", 3 * compilers + (compilers == 2)),
        ("total", 3 * compilers + (compilers == 2)),
        ("one hop: ", 2),
        ("board: ", 2),
        ("server: ", 2),
        ("tcp only: ", 2),
        ("host->device copyfrom, 1 KiB", 9),
        ("device->host numpy(), 256 KiB", 9),
        ("one hop (", 4),
        ("board (", 4),
    ]
    for prefix, count in expected:
        rows = [line for line in lines if line.split(", ", 1)[-1].startswith(prefix)]
        assert rows, f"no row for {prefix!r} in:\n{result.stdout}"
        for row in rows:
            numbers = row.rsplit(None, count)[1:]
            assert len(numbers) == count and all(float(n) >= 0 for n in numbers), row
    text = next(line for line in lines if line.startswith("total")).split()
    assert int(text[1]) > 0 and int(text[3]) > 0  # .text and .bss of the first compiler
    assert any(line.startswith(".bss is dominated by the memory pool") for line in lines)


@pytest.mark.needs_cc
@pytest.mark.skipif(
    shutil.which("taskset") is None or not hasattr(os, "sched_setaffinity"),
    reason="needs taskset and sched_setaffinity",
)
def test_kernels_bench_prints_table_with_peak_and_ratios() -> None:
    result = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "kernels.py"),
            "--only",
            "128x768",
            "--peers",
            "pytvm,numpy",
            "--min-seconds",
            "0.02",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("CPU: ")
    assert any(line.startswith("FMA peak, 1 thread(s): ") for line in lines)
    rows = [line.split() for line in lines if line.startswith("matmul 128x768x768")]
    assert rows, result.stdout
    for row in rows:
        pytvm_gflops, numpy_gflops, ratio = float(row[3]), float(row[4]), float(row[5])
        assert pytvm_gflops > 0 and numpy_gflops > 0 and ratio > 0, row
    assert "WRONG RESULT" not in result.stdout


@pytest.mark.needs_cc
@pytest.mark.skipif(
    shutil.which("taskset") is None or not hasattr(os, "sched_setaffinity"),
    reason="needs taskset and sched_setaffinity",
)
def test_models_bench_prints_latency_build_and_memory_tables() -> None:
    result = subprocess.run(
        [
            sys.executable, str(REPO / "bench" / "models.py"), "--only", "mlp", "--no-tvm",
            "--min-seconds", "0.02",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("CPU: ")
    assert any(line.startswith("FMA peak, 2 thread(s): ") for line in lines)
    rows = [line.split() for line in lines if line.startswith("mlp ")]
    assert len(rows) == 3, result.stdout  # 1 thread, 2 threads, memory
    for row in rows[:2]:
        pytvm_ms, ort_ms, ratio = float(row[1]), float(row[2]), float(row[3])
        assert pytvm_ms > 0 and ort_ms > 0 and ratio > 0, row
    assert "WRONG RESULT" not in result.stdout
