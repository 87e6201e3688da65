"""The server's limits and process model: key validation, handshake and idle deadlines, session
and pending-handshake caps, the spare pool, crash isolation, refusal messages, TVM's keywords.
"""

from __future__ import annotations

import inspect
import logging
import os
import select
import signal
import socket
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import tvm.rpc

import pytvm
from pytvm.ffi.errors import RPCSessionBrokenError, TVMValueError
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.client import connect
from pytvm.rpc.wire.base import (
    MAX_KEY_BYTES,
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPCError,
    recv_key,
    recvall,
    send_key,
)
from pytvm.rpc.wire.protocol import encode_init_server
from pytvm.testing.rpc import is_closed_by_peer

_I32 = struct.Struct("<i")


@pytest.fixture(scope="module", autouse=True)
def worker_functions() -> Iterator[None]:
    """Registered before the servers fork, so their session workers have them."""
    funcs: dict[str, Callable[..., object]] = {
        "testing.limits.getpid": os.getpid,
        "testing.limits.block": time.sleep,
        "testing.limits.crash": lambda: os.kill(os.getpid(), signal.SIGSEGV),
    }
    for name, func in funcs.items():
        pytvm.register_func(name, func, override=True)
    yield
    for name in funcs:
        pytvm.remove_global_func(name)


def _reply_code(port: int, record: bytes) -> int:
    """Send a raw handshake record; the server's i32 reply code."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(record)
        return int(_I32.unpack(recvall(sock, 4))[0])


def _key_record(key: str) -> bytes:
    raw = key.encode()
    return struct.pack("<ii", RPC_MAGIC, len(raw)) + raw


def _children(parent: int) -> set[int]:
    """Live child processes of ``parent`` (from /proc); a server's workers are the children of
    its fork server.
    """
    found = set()
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == parent and fields[0] != "Z":
                found.add(int(entry.name))
    return found


def _addone_works(port: int, key: str = "k") -> bool:
    sess = connect("127.0.0.1", port, key=key)
    try:
        return bool(sess.get_function("rpc.test.addone")(1) == 2)
    finally:
        sess.close()


@pytest.mark.parametrize("value", ["1e308", "inf", "nan", "-5", "0", "abc"])
def test_bad_timeout_option_is_refused_and_server_keeps_serving(
    value: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Server(port=0, key="k", silent=True) as server:
        assert _reply_code(server.port, _key_record(f"client:k -timeout={value}")) == (
            RPC_CODE_MISMATCH
        )
        assert _addone_works(server.port)
    assert f"-timeout={value!r}" in caplog.text


@pytest.mark.parametrize(
    "record",
    [
        struct.pack("<ii", RPC_MAGIC, -1),
        struct.pack("<ii", RPC_MAGIC, MAX_KEY_BYTES + 1),
        _key_record("client:k\n-timeout=1"),
        _key_record("client:k" + " -x=1" * 17),
        _key_record("client:k -timeout=1 -timeout=2"),
    ],
    ids=["negative-length", "long-length", "control-char", "many-options", "repeated-option"],
)
def test_malformed_handshake_is_refused_with_a_log_line(
    record: bytes, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Server(port=0, key="k", silent=True) as server:
        assert _reply_code(server.port, record) == RPC_CODE_MISMATCH
        assert _addone_works(server.port)
        assert server.session_count == 0 or server.wait_idle(10)
    assert "refused rpc client" in caplog.text


def test_client_checks_its_session_timeout() -> None:
    with pytest.raises(TVMValueError, match="session_timeout"):
        connect("127.0.0.1", 1, session_timeout=float("inf"))


def test_max_sessions_refuses_beyond_the_limit(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Server(port=0, key="k", silent=True, max_sessions=1) as server:
        first = connect("127.0.0.1", server.port, key="k")
        with pytest.raises(RPCError, match="max-sessions"):
            connect("127.0.0.1", server.port, key="k")
        first.close()
        assert server.wait_idle(10)
        assert _addone_works(server.port)
    assert "max_sessions=1" in caplog.text


def test_handshake_deadline_follows_a_smaller_timeout() -> None:
    # 2 s: the session of the client below must fit in it too, however loaded the machine is.
    with Server(port=0, key="k", silent=True, timeout=2) as server:
        with socket.create_connection(("127.0.0.1", server.port), timeout=10) as silent:
            start = time.monotonic()
            assert is_closed_by_peer(silent)  # not the 30 s default
            assert time.monotonic() - start < 10
        assert _addone_works(server.port)


def test_idle_timeout_closes_a_client_that_drips_bytes() -> None:
    with Server(port=0, key="k", silent=True, idle_timeout=0.5) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        send_key(sock, RPC_MAGIC, "client:k")
        assert _I32.unpack(recvall(sock, 4))[0] == RPC_MAGIC
        recv_key(sock)
        request = encode_init_server([]) * 100  # far more bytes than the drip sends
        start, got = time.monotonic(), b""
        for byte in request:
            sock.sendall(bytes([byte]))
            readable, _, _ = select.select([sock], [], [], 0.2)  # the drip's pace
            if readable:
                break
            assert time.monotonic() - start < 10, "the server kept a dripping client"
        while chunk := sock.recv(4096):
            got += chunk
        sock.close()
        assert b"idle_timeout" in got  # told why, then closed
        assert time.monotonic() - start < 10
        assert server.wait_idle(10)


def test_idle_timeout_spares_a_long_call_and_a_steady_client() -> None:
    # A second between calls: a loaded machine may delay the client, never that much.
    with Server(port=0, key="k", silent=True, idle_timeout=1.0) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        sess.get_function("testing.limits.block")(1.5)  # computing is not idling
        for _ in range(3):
            assert sess.get_function("rpc.test.addone")(1) == 2
        sess.close()


def test_slow_handshakes_hold_no_process() -> None:
    with Server(port=0, key="k", silent=True, spare_workers=1) as server:
        assert server.wait_idle(10)
        silent = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(20)]
        for sock in silent[:10]:
            sock.sendall(_I32.pack(RPC_MAGIC))  # half a header
        sess = connect("127.0.0.1", server.port, key="k")  # accepted after all of them
        assert sess.get_function("rpc.test.addone")(1) == 2
        assert server.session_count == 1
        # this session and one spare: no process per connection
        assert len(_children(server.fork_server_pid)) <= 2
        sess.close()
        for sock in silent:
            sock.close()


def test_pending_handshakes_are_capped() -> None:
    # The handshake deadline follows idle_timeout: 0.5 s frees the slots quickly, and bounds
    # only the gaps between the good client's requests, not its whole session.
    with Server(port=0, key="k", silent=True, idle_timeout=0.5, max_pending_handshakes=2) as server:
        silent = [socket.create_connection(("127.0.0.1", server.port)) for _ in range(4)]
        # The good client waits in the backlog until deadlines free the two slots.
        start = time.monotonic()
        assert _addone_works(server.port)
        assert time.monotonic() - start < 10
        for sock in silent:
            sock.close()


def test_spare_pool_is_forked_ahead() -> None:
    with Server(port=0, key="k", silent=True, spare_workers=3) as server:
        assert server.wait_idle(10)
        assert len(_children(server.fork_server_pid)) == 3
        sess = [connect("127.0.0.1", server.port, key="k") for _ in range(2)]
        pids = {s.get_function("testing.limits.getpid")() for s in sess}
        assert len(pids) == 2
        for s in sess:
            s.close()
        assert server.wait_idle(10)
        workers = _children(server.fork_server_pid)
        assert len(workers) == 3 and not pids & workers


def test_a_crashing_session_leaves_the_others_running() -> None:
    with Server(port=0, key="k", silent=True) as server:
        bystander = connect("127.0.0.1", server.port, key="k")
        victim = connect("127.0.0.1", server.port, key="k")
        with pytest.raises((ConnectionError, RPCError)):
            victim.get_function("testing.limits.crash")()
        assert bystander.get_function("rpc.test.addone")(1) == 2
        bystander.close()
        assert _addone_works(server.port)


def test_a_worker_killed_by_a_signal_is_named_on_both_sides(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        pid = sess.get_function("testing.limits.getpid")()
        expected = rf"the server's session worker \(pid {pid}\) died of SIGSEGV while serving"
        with pytest.raises(RPCSessionBrokenError, match=expected) as info:
            sess.get_function("testing.limits.crash")()
        assert isinstance(info.value, ConnectionError)  # what a closed connection raised before
        assert server.wait_idle(10)
    assert "rpc session for 127.0.0.1:" in caplog.text
    assert f"worker {pid} died of SIGSEGV" in caplog.text


def test_a_damaged_upload_is_refused_by_name_and_the_session_goes_on() -> None:
    from pytvm.ffi.libinfo import runtime_library_path

    whole = runtime_library_path().read_bytes()
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        sess.upload(bytearray(whole[: len(whole) // 2]), "half.so")
        with pytest.raises(ValueError, match=r"cannot load 'half.so': truncated: the file is"):
            sess.load_module("half.so")
        zeroed = whole[: len(whole) // 2] + bytes(len(whole) - len(whole) // 2)
        sess.upload(bytearray(zeroed), "zeroed.so")
        with pytest.raises(ValueError, match=r"cannot load 'zeroed.so': (corrupt|truncated)"):
            sess.load_module("zeroed.so")
        assert sess.get_function("rpc.test.addone")(1) == 2  # the same worker still serves


def test_a_damaged_load_library_fails_the_server_start(tmp_path: Path) -> None:
    from pytvm.ffi.libinfo import runtime_library_path

    whole = runtime_library_path().read_bytes()
    bad = tmp_path / "bad.so"
    bad.write_bytes(whole[: len(whole) // 3])
    with pytest.raises(ValueError, match=rf"cannot load {bad}: truncated"):
        Server(port=0, key="k", silent=True, load_library=str(bad))


def test_refusal_lists_causes_and_the_log_names_the_one(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Server(port=0, key="k", silent=True, auth_token="s3cret") as server:
        with pytest.raises(RPCError, match="you sent no -token") as info:
            connect("127.0.0.1", server.port, key="k")
        assert "auth_token=" in str(info.value)
        assert "registered with a tracker" in str(info.value)
        with pytest.raises(RPCError, match="auth token you sent is not"):
            connect("127.0.0.1", server.port, key="k", auth_token="wrong")
    assert "missing auth token" in caplog.text and "wrong auth token" in caplog.text


def test_tracker_server_log_says_it_takes_only_tracker_sessions(
    caplog: pytest.LogCaptureFixture,
) -> None:
    from pytvm.rpc.services.tracker import Tracker

    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Tracker(port=0, silent=True) as tracker:
        addr = ("127.0.0.1", tracker.port)
        with Server(port=0, key="dev", tracker_addr=addr, silent=True) as server:
            with pytest.raises(RPCError, match="only accepts sessions requested through it"):
                connect("127.0.0.1", server.port, key="dev")
    assert "only accepts sessions requested through it" in caplog.text


def test_server_init_callback_runs_in_each_worker() -> None:
    def init() -> None:
        pytvm.register_func("testing.limits.init_pid", os.getpid, override=True)

    with Server(port=0, key="k", silent=True, server_init_callback=init) as server:
        for _ in range(2):
            sess = connect("127.0.0.1", server.port, key="k")
            worker = sess.get_function("testing.limits.getpid")()
            assert sess.get_function("testing.limits.init_pid")() == worker
            sess.close()
    assert pytvm.get_global_func("testing.limits.init_pid", allow_missing=True) is None


def test_reuse_addr_and_no_fork_keywords() -> None:
    with Server(port=0, key="k", silent=True, reuse_addr=False, no_fork=True) as server:
        assert server._listen is not None
        assert server._listen.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) == 0
        assert _addone_works(server.port)


def test_server_takes_every_parameter_of_tvms_server() -> None:
    ours = inspect.signature(Server).parameters
    theirs = [p for p in inspect.signature(tvm.rpc.Server).parameters if p != "self"]
    assert [p for p in theirs if p not in ours] == []
    assert list(ours)[: len(theirs)] == theirs  # same positional order


def test_connect_enable_logging_logs_each_request(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="pytvm.rpc.client")
    with Server(port=0, key="k", silent=True) as server:
        quiet = connect("127.0.0.1", server.port, key="k")
        quiet.get_function("rpc.test.addone")(1)
        quiet.close()
        assert "call_func" not in caplog.text
        sess = connect("127.0.0.1", server.port, "k", 0, None, True)  # TVM's positions
        assert sess.get_function("rpc.test.addone")(41) == 42
        sess.close()
    assert "call_func(" in caplog.text and "41" in caplog.text
