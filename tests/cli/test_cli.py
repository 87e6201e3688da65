"""The ``pytvm`` command, run as a subprocess the way a user runs it."""

from __future__ import annotations

import json
import platform
import re
import subprocess
import sys
from pathlib import Path

import numpy
import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _pytvm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytvm", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def test_help_lists_subcommands() -> None:
    result = _pytvm("--help")
    assert result.returncode == 0, result.stderr
    assert "usage: pytvm" in result.stdout
    assert "info" in result.stdout


def test_unknown_subcommand_fails_with_usage() -> None:
    result = _pytvm("no-such-command")
    assert result.returncode == 2
    assert "usage: pytvm" in result.stderr


def test_info_reports_versions_devices_and_functions() -> None:
    import pytvm

    result = _pytvm("info")
    assert result.returncode == 0, result.stderr
    rows = (line.split(":", 1) for line in result.stdout.splitlines())
    fields = {name: value.strip() for name, value in rows}
    assert fields["pytvm"] == pytvm.__version__
    assert fields["python"] == platform.python_version()
    assert fields["numpy"] == numpy.__version__
    assert "cc" in fields
    assert "cpu" in fields["device apis"].split(", ")
    assert re.fullmatch(r"[0-9]+", fields["global functions"])
    assert int(fields["global functions"]) > 0


def test_info_json_matches_the_installation() -> None:
    import pytvm

    result = _pytvm("info", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["version"] == pytvm.__version__
    assert report["python"] == platform.python_version()
    assert report["numpy"] == numpy.__version__
    assert report["cc"] is None or set(report["cc"]) == {"path", "version"}
    assert "cpu" in report["device_apis"]
    assert report["device_apis"] == sorted(report["device_apis"])
    assert isinstance(report["global_functions"], int)
    assert report["global_functions"] > 0


def test_console_script_runs_when_installed() -> None:
    script = Path(sys.executable).with_name("pytvm")
    if not script.exists():
        pytest.skip("the pytvm console script is not installed in this environment")
    result = subprocess.run([script, "--help"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "info" in result.stdout
