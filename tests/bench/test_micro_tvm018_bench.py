"""bench/micro_tvm018.py says why TVM v0.18 is not available and exits 0 without it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "bench" / "micro_tvm018.py"


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TVM018_")}
    return subprocess.run(
        [sys.executable, str(SCRIPT), *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env=env,
    )


def test_without_tvm_python_prints_not_available() -> None:
    done = _run()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "TVM v0.18 not available: no --tvm-python given"


def test_interpreter_without_tvm018_prints_not_available(tmp_path: Path) -> None:
    # an interpreter whose path holds no TVM v0.18 (this one imports another TVM or none)
    done = _run("--tvm-python", sys.executable, "--tvm-pythonpath", str(tmp_path))
    assert done.returncode == 0, done.stderr
    (line,) = done.stdout.splitlines()
    assert line.startswith(f"TVM v0.18 not available: {sys.executable} ")
    assert "not 0.18" in line or "cannot import tvm" in line


def test_missing_interpreter_prints_not_available(tmp_path: Path) -> None:
    missing = tmp_path / "no-python"
    done = _run("--tvm-python", str(missing))
    assert done.returncode == 0, done.stderr
    assert (
        done.stdout.strip()
        == f"TVM v0.18 not available: --tvm-python {missing}: no such interpreter"
    )
