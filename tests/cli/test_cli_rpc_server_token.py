"""``pytvm rpc server``: where its auth token comes from, and what it warns about."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from pytvm.rpc.sessions.client import connect
from pytvm.rpc.wire.base import RPCError
from pytvm.rpc.wire.channel import reap


def _serve(*args: str, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Start ``pytvm rpc server``; returns (port, its command line, stderr after SIGTERM) once
    a client with token ``s3cret`` was served and one without was refused.
    """
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytvm", "rpc", "server", "--port", "0", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    try:
        assert proc.stdout is not None and proc.stderr is not None
        banner = proc.stdout.readline()
        match = re.search(r":(\d+)\s*$", banner)
        assert match, banner + proc.stderr.read()
        port = int(match.group(1))
        with Path(f"/proc/{proc.pid}/cmdline").open("rb") as f:
            cmdline = f.read().replace(b"\0", b" ").decode()
        with connect("127.0.0.1", port, auth_token="s3cret") as sess:
            assert sess.get_function("rpc.test.addone")(1) == 2
        with pytest.raises(RPCError):
            connect("127.0.0.1", port, auth_token="wrong")
    finally:
        reap(proc, timeout=10, terminate=True)
    return port, cmdline, proc.stderr.read()


def test_token_from_a_file_is_not_on_the_command_line(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    _, cmdline, stderr = _serve("--auth-token-file", str(token_file))
    assert "s3cret" not in cmdline and "visible" not in stderr


def test_token_from_the_environment() -> None:
    _, cmdline, stderr = _serve(env={"PYTVM_RPC_AUTH_TOKEN": "s3cret"})
    assert "s3cret" not in cmdline and "visible" not in stderr


def test_token_on_the_command_line_is_warned_about() -> None:
    _, cmdline, stderr = _serve("--auth-token", "s3cret")
    assert "s3cret" in cmdline and "--auth-token is visible" in stderr
    assert ("runs as root" in stderr) == (os.geteuid() == 0)
