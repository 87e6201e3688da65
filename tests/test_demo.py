from __future__ import annotations

import re
import subprocess
import sys

import pytest


@pytest.mark.needs_cc
def test_demo_runs_end_to_end() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytvm.cli.demo"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    out = result.stdout
    assert "matches numpy: True" in out
    assert "call_python('demo.scale', 21, 2) = 42" in out
    assert "caught as KeyError" in out
    assert "c.numpy()[0] = 42.0" in out
    errors = re.findall(r"max abs error vs ONNX Runtime (\S+);", out)
    assert len(errors) == 2, out  # the compiled model here and on the server behind the tracker
    assert all(float(e) < 1e-3 for e in errors), errors
