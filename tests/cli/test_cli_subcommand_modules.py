"""Each subcommand module runs by itself (``python -m pytvm.cli.<name>``), through the shared
parser and error handling of ``pytvm.cli._command``, without importing ``pytvm.cli.main``.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]


def _module(name: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", f"pytvm.cli.{name}", *args],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("name", ["info", "rpc", "trace"])
def test_subcommand_module_prints_its_own_help(name: str) -> None:
    result = _module(name, "--help")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"usage: pytvm {name} ")


def test_info_module_reports_as_json() -> None:
    result = _module("info", "--json")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout)["version"]


def test_rpc_module_turns_an_unreachable_tracker_into_one_error_line() -> None:
    with socket.socket() as closed:  # bound, never listening: connecting is refused
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
        result = _module("rpc", "query", "--port", str(port), "--connect-timeout", "0.1")
    assert result.returncode == 1
    last = result.stderr.strip().splitlines()[-1]
    assert last.startswith("pytvm rpc query: error: cannot connect to the tracker"), result.stderr
    assert "Traceback" not in result.stderr


def test_subcommand_modules_do_not_load_the_command_entry_point() -> None:
    code = (
        "import sys, pytvm.cli.info, pytvm.cli.rpc, pytvm.cli.trace\n"
        "print(sorted(m for m in sys.modules if m.startswith('pytvm.cli')))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "pytvm.cli.main" not in result.stdout
