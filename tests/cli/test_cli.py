"""The ``pytvm`` command, run as a subprocess the way a user runs it."""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import numpy
import pytest

from pytvm.cli.main import build_parser
from pytvm.testing.cli import run_pytvm

REPO_ROOT = Path(__file__).resolve().parents[2]


def _pytvm(*args: str) -> subprocess.CompletedProcess[str]:
    return run_pytvm(*args, cwd=REPO_ROOT, timeout=120)


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
    result = subprocess.run(
        [script, "--help"], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    assert "info" in result.stdout


def _one_error_line(result: subprocess.CompletedProcess[str], prog: str) -> str:
    """The single ``<prog>: error: ...`` line a failing command printed (no traceback)."""
    assert "Traceback" not in result.stderr, result.stderr
    errors = [line for line in result.stderr.splitlines() if line.startswith(f"{prog}: error: ")]
    assert len(errors) == 1, result.stderr
    return errors[0]


def _dead_port() -> int:
    with socket.socket() as sock:  # bound, never listening: connecting is refused
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def test_version_prints_the_package_version() -> None:
    import pytvm

    result = _pytvm("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"pytvm {pytvm.__version__}\n"


def test_query_of_a_dead_tracker_fails_in_one_line_within_its_budget() -> None:
    port = _dead_port()
    start = time.monotonic()
    result = _pytvm("rpc", "query", "--port", str(port), "--connect-timeout", "0.5")
    assert time.monotonic() - start < 30
    assert result.returncode == 1 and result.stdout == ""
    line = _one_error_line(result, "pytvm rpc query")
    assert "cannot connect" in line and f"127.0.0.1:{port}" in line
    assert "0.5 s" in line  # the retry budget is stated


def test_query_retries_briefly_by_default() -> None:
    args = build_parser().parse_args(["rpc", "query"])
    assert 0 < args.connect_timeout <= 10


def test_debug_shows_the_traceback() -> None:
    port = str(_dead_port())
    for argv, env in (
        (["--debug", "rpc", "query", "--port", port], {}),
        (["rpc", "query", "--port", port], {"PYTVM_DEBUG": "1"}),
    ):
        result = subprocess.run(
            [sys.executable, "-m", "pytvm", *argv, "--connect-timeout", "0.1"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=120,
            env={**os.environ, **env},
            check=False,
        )
        assert result.returncode == 1
        assert "Traceback" in result.stderr and "ConnectionError" in result.stderr


def test_a_bad_port_range_fails_in_one_line() -> None:
    result = _pytvm("rpc", "tracker", "--port", "9100", "--port-end", "9000")
    assert result.returncode in (1, 2)
    assert "9100" in _one_error_line(result, "pytvm rpc tracker")


def test_bad_arguments_fail_with_usage_and_status_2() -> None:
    result = _pytvm("rpc", "server", "--port", "not-a-port")
    assert result.returncode == 2 and "Traceback" not in result.stderr
    assert "usage: pytvm rpc server" in result.stderr
    assert "argument --port: invalid int value: 'not-a-port'" in result.stderr


def test_no_c_compiler_fails_in_one_line() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytvm", "trace", "copy"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "CC": "/nonexistent/cc"},
        check=False,
    )
    assert result.returncode == 1
    assert "no C compiler found" in _one_error_line(result, "pytvm trace copy")


def _subcommand_paths(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[Any]:
    found: list[Any] = [(path, parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                found += _subcommand_paths(sub, (*path, name))
    return found


def test_every_help_states_the_defaults() -> None:
    paths = _subcommand_paths(build_parser())
    assert len(paths) >= 9  # pytvm, info, rpc and its four commands, trace and its scenario
    procs = [
        subprocess.Popen(
            [sys.executable, "-m", "pytvm", *path, "--help"],
            cwd=REPO_ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for path, _ in paths
    ]
    for (path, parser), proc in zip(paths, procs):
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        flat = " ".join(out.split())
        for action in parser._actions:
            default = action.default
            if not action.option_strings or default in (None, False, "", argparse.SUPPRESS):
                continue
            where = f"pytvm {' '.join(path)} {action.option_strings[-1]}"
            assert "(default: " in flat.split(action.option_strings[-1], 1)[1], where
            if "(default: $" not in flat:
                assert f"(default: {default})" in flat, where
