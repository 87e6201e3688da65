"""The C runtime's AOT executor (pytvm/src/crt/aot_executor) passes its C unit test: create,
info texts, set_input / run / get_output and every refusal, over a model written in C.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

import pytvm

pytestmark = pytest.mark.needs_cc

CRT_DIR = Path(pytvm.__file__).resolve().parent / "src" / "crt"


@pytest.mark.parametrize("config", ["", "-DTVM_CRT_CONFIG_MINIMAL=1"], ids=["full", "minimal"])
def test_aot_executor_c_unit_test_passes(tmp_path: Path, config: str) -> None:
    if shutil.which("make") is None or shutil.which("gcc") is None:
        pytest.fail("make and gcc are needed to build the C runtime; install them")
    cmd = ["make", "-C", str(CRT_DIR), "-j2", "CC=gcc", f"O={tmp_path}"]
    cmd += [f"CRT_CONFIG_FLAGS={config}", "aot-executor-test-host"]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    assert "5 tests, 0 failed" in out, out
