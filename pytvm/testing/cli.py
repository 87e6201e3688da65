"""CLI test helper: run ``python -m pytvm`` in a subprocess and capture what it prints."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

__all__ = ["run_pytvm"]


def run_pytvm(
    *args: str, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``python -m pytvm <args>`` in ``cwd`` (with environment ``env``, this process's when
    None): its exit status, stdout and stderr as text (a non-zero status does not raise;
    ``subprocess.TimeoutExpired`` after ``timeout`` s).
    """
    return subprocess.run(
        [sys.executable, "-m", "pytvm", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=timeout,
        env=env,
        check=False,
    )
