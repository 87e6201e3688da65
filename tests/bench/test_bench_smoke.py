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
    assert "pytvm/tvm_ffi" in result.stdout
    for row in ("Python->C, 0 args", "Python->C, NDArray", "Python->Python, 4 ints"):
        assert row in result.stdout
    assert "Python->C path:" in result.stdout
