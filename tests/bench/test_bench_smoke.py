from __future__ import annotations

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
