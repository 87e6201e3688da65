"""``pytvm rpc``: tracker, proxy and query as real subprocesses; server wiring in-process."""

from __future__ import annotations

import os
import signal
import socket
import struct
import subprocess
import sys
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytvm.cli.main import main
from pytvm.rpc.services.tracker import Tracker
from pytvm.rpc.wire.base import RPC_TRACKER_MAGIC, TrackerCode, recvall, recvjson, sendjson
from pytvm.testing.cli import run_pytvm

REPO_ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 30.0


def _pytvm(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return run_pytvm(*args, cwd=REPO_ROOT, timeout=TIMEOUT, env=env)


def _start(*args: str) -> tuple[subprocess.Popen[str], int]:
    """Start a long-running ``pytvm rpc`` service; return it and the port it printed."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "pytvm", *args],
        cwd=REPO_ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    assert " listening on 127.0.0.1:" in line, (line, proc.stderr.read() if proc.stderr else "")
    return proc, int(line.rsplit(":", 1)[1])


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    with Tracker(port=0, silent=True) as tr:
        yield tr


def test_rpc_help_lists_its_commands() -> None:
    result = _pytvm("rpc", "--help")
    assert result.returncode == 0, result.stderr
    for command in ("tracker", "query", "proxy", "server"):
        assert command in result.stdout


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_rpc_tracker_serves_then_exits_cleanly_on_signal(sig: signal.Signals) -> None:
    proc, port = _start("rpc", "tracker", "--port", "0", "--silent")
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
            sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
            assert struct.unpack("<i", recvall(sock, 4))[0] == RPC_TRACKER_MAGIC
            sendjson(sock, [TrackerCode.PING])
            assert recvjson(sock) == TrackerCode.SUCCESS
        proc.send_signal(sig)
        assert proc.wait(TIMEOUT) == 0
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_rpc_proxy_serves_then_exits_cleanly_on_signal(sig: signal.Signals) -> None:
    proc, port = _start("rpc", "proxy", "--port", "0")
    try:
        assert port > 0
        proc.send_signal(sig)
        assert proc.wait(TIMEOUT) == 0
    finally:
        proc.kill()
        proc.wait(TIMEOUT)


def test_rpc_query_prints_the_text_summary(tracker: Tracker) -> None:
    with socket.create_connection(("127.0.0.1", tracker.port), timeout=TIMEOUT) as server:
        server.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
        recvall(server, 4)
        sendjson(server, [TrackerCode.UPDATE_INFO, {"key": "server:board", "addr": [None, 9]}])
        assert recvjson(server) == TrackerCode.SUCCESS
        sendjson(server, [TrackerCode.PUT, "board", [9, "board:0.5"], None])
        assert recvjson(server) == TrackerCode.SUCCESS
        result = _pytvm("rpc", "query", "--port", str(tracker.port))
    assert result.returncode == 0, result.stderr
    assert "Server List" in result.stdout
    assert f"{'127.0.0.1:9':21s}    server:board" in result.stdout
    assert "Queue Status" in result.stdout
    assert "board   1      1     0" in result.stdout


def test_rpc_query_reads_tracker_address_from_the_environment(tracker: Tracker) -> None:
    env = dict(os.environ, TVM_TRACKER_HOST="127.0.0.1", TVM_TRACKER_PORT=str(tracker.port))
    result = _pytvm("rpc", "query", env=env)
    assert result.returncode == 0, result.stderr
    assert f"Tracker address 127.0.0.1:{tracker.port}" in result.stdout


def test_rpc_server_requires_a_key_with_a_tracker() -> None:
    result = _pytvm("rpc", "server", "--tracker", "127.0.0.1:9190")
    assert result.returncode == 2
    assert "--key is required with --tracker" in result.stderr


def test_rpc_commands_reject_a_malformed_tracker_address() -> None:
    result = _pytvm("rpc", "proxy", "--tracker", "no-port-here")
    assert result.returncode == 2
    assert "expected host:port" in result.stderr


def test_rpc_server_builds_the_server_from_its_flags(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    made: list[dict[str, Any]] = []

    class FakeServer:
        def __init__(self, **kwargs: Any) -> None:
            made.append(kwargs)
            self.port = 9095
            self.terminated = False

        def wait(self) -> None:
            pass  # returns at once, as if terminated

        def terminate(self) -> None:
            self.terminated = True

    module = types.ModuleType("pytvm.rpc.services.server")
    module.Server = FakeServer  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pytvm.rpc.services.server", module)
    status = main(
        [
            "rpc",
            "server",
            "--port",
            "9095",
            "--key",
            "board",
            "--tracker",
            "10.0.0.1:9190",
            "--custom-addr",
            "10.0.0.2",
            "--through-proxy",
            "--auth-token",
            "secret",
            "--load-library",
            "a.so:b.so",
            "--silent",
            "--timeout",
            "5",
        ]
    )
    assert status == 0
    assert made == [
        {
            "host": "127.0.0.1",
            "port": 9095,
            "port_end": None,
            "key": "board",
            "tracker_addr": ("10.0.0.1", 9190),
            "tracker_token": None,
            "custom_addr": "10.0.0.2",
            "is_proxy": True,
            "auth_token": "secret",
            "load_library": "a.so:b.so",
            "silent": True,
            "timeout": 5.0,
            "max_sessions": None,
            "idle_timeout": None,
            "spare_workers": None,
            "no_fork": False,
            "allow_popen_binary": False,
            "popen_executables": [],
        }
    ]
    assert "127.0.0.1:9095" in capsys.readouterr().out


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("command", ["server", "tracker", "proxy"])
def test_rpc_port_alone_searches_from_that_port(command: str) -> None:
    port = _free_port()  # an ephemeral port, far above TVM's default port_end of 9199
    proc, bound = _start("rpc", command, "--port", str(port))
    try:
        assert bound == port
    finally:
        proc.terminate()
        proc.wait(TIMEOUT)


def test_rpc_server_prints_a_port_that_moved() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        proc, bound = _start("rpc", "server", "--port", str(port), "--silent")
        proc.terminate()
        _, err = proc.communicate(timeout=TIMEOUT)
    assert bound != port and port < bound < port + 100
    assert f"port {port} on 127.0.0.1 is busy; listening on port {bound}" in err


def test_rpc_server_limits_from_the_command_line() -> None:
    proc, port = _start("rpc", "server", "--port", "0", "--max-sessions", "1", "--silent")
    try:
        from pytvm.rpc.sessions.client import connect
        from pytvm.rpc.wire.base import RPCError

        first = connect("127.0.0.1", port)
        with pytest.raises(RPCError, match="max-sessions"):
            connect("127.0.0.1", port)
        first.close()
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=TIMEOUT)
    assert "max_sessions=1" in err
