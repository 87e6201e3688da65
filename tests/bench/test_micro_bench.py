"""bench/micro.py runs and prints its tables (one model, no Session, few host runs)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.needs_cc
@pytest.mark.skipif(
    shutil.which("arm-none-eabi-gcc") is None or shutil.which("qemu-system-arm") is None,
    reason="arm-none-eabi-gcc or qemu-system-arm is not installed",
)
def test_micro_bench_prints_memory_and_instructions() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "bench" / "micro.py"), "--only=kws_cnn", "--no-session", "-q"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("host CPU: ")
    row = next(line for line in lines if line.startswith("kws_cnn") and "|" in line)
    assert row.split()[1] == "2,656,768"  # MACs
    speed = [line for line in lines if line.startswith("kws_cnn") and "|" not in line][-1]
    assert int(speed.split()[1].replace(",", "")) > 2_656_768  # instructions per inference
    assert "skipped" in speed
    assert lines[-1].startswith("TVM v0.18: not measured here")
