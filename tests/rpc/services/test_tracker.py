"""The RPC tracker and its client, over real loopback sockets, and against stock TVM 0.27."""

from __future__ import annotations

import json
import socket
import struct
import sys
import threading
import types
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytvm.rpc.services.tracker import Tracker
from pytvm.rpc.sessions.tracker_client import TrackerSession, connect_tracker
from pytvm.rpc.wire._auth import session_mac
from pytvm.rpc.wire.base import RPC_TRACKER_MAGIC, RPCError, TrackerCode, recvjson, sendjson
from pytvm.testing.rpc import is_closed_by_peer, service_process, wait_for

TIMEOUT = 10.0
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    with Tracker(port=0, silent=True) as tr:
        yield tr


def _dial(port: int, handshake: bool = True) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    if handshake:
        sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
        assert struct.unpack("<i", sock.recv(4))[0] == RPC_TRACKER_MAGIC
    return sock


def _call(sock: socket.socket, message: Any) -> Any:
    sendjson(sock, message)
    return recvjson(sock)


def _summary(port: int) -> dict[str, Any]:
    with _dial(port) as sock:
        reply = _call(sock, [TrackerCode.SUMMARY])
    assert reply[0] == TrackerCode.SUCCESS
    summary: dict[str, Any] = reply[1]
    return summary


def _put(sock: socket.socket, key: str, port: int, match_key: str, addr: str | None = None) -> None:
    assert _call(sock, [TrackerCode.PUT, key, [port, match_key], addr]) == TrackerCode.SUCCESS


def _request_pending(sock: socket.socket, key: str, priority: int = 1) -> None:
    """Send REQUEST and make sure the tracker has queued it: a PING behind it is answered."""
    sendjson(sock, [TrackerCode.REQUEST, key, "", priority])
    assert _call(sock, [TrackerCode.PING]) == TrackerCode.SUCCESS


# ---------------------------------------------------------------------------- handshake


def test_tracker_echoes_its_magic(tracker: Tracker) -> None:
    with _dial(tracker.port, handshake=False) as sock:
        sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
        assert sock.recv(4) == struct.pack("<i", RPC_TRACKER_MAGIC)
        assert _call(sock, [TrackerCode.PING]) == TrackerCode.SUCCESS


def test_tracker_closes_connection_on_wrong_magic(tracker: Tracker) -> None:
    with _dial(tracker.port, handshake=False) as sock:
        sock.sendall(struct.pack("<i", 0xFF271))
        assert is_closed_by_peer(sock)
    with _dial(tracker.port) as sock:
        assert _call(sock, [TrackerCode.PING]) == TrackerCode.SUCCESS


def test_tracker_binds_first_free_port_of_range() -> None:
    with Tracker(port=0, silent=True) as first:
        with Tracker(port=first.port, port_end=first.port + 50, silent=True) as second:
            assert second.port > first.port
        with pytest.raises(OSError, match="cannot bind"):
            Tracker(port=first.port, port_end=first.port + 1, silent=True)


def test_terminate_is_idempotent_and_closes_the_port() -> None:
    tr = Tracker(port=0, silent=True)
    port = tr.port
    tr.terminate()
    tr.terminate()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)


# ---------------------------------------------------------------------------- matching


def test_put_then_request_returns_peer_host_port_and_match_key(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as client:
        _put(server, "x", 9090, "x:0.1")
        reply = _call(client, [TrackerCode.REQUEST, "x", "", 1])
        assert reply == [TrackerCode.SUCCESS, ["127.0.0.1", 9090, "x:0.1"]]


def test_put_with_custom_addr_reports_that_host(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as client:
        _put(server, "x", 9091, "x:0.2", addr="10.1.2.3")
        reply = _call(client, [TrackerCode.REQUEST, "x", "", 1])
        assert reply == [TrackerCode.SUCCESS, ["10.1.2.3", 9091, "x:0.2"]]


def test_request_before_put_waits_then_is_matched(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as client:
        _request_pending(client, "x")
        assert _summary(tracker.port)["queue_info"]["x"] == {"free": 0, "pending": 1}
        _put(server, "x", 9090, "x:0.3")
        assert recvjson(client) == [TrackerCode.SUCCESS, ["127.0.0.1", 9090, "x:0.3"]]
        assert _summary(tracker.port)["queue_info"]["x"] == {"free": 0, "pending": 0}


def test_higher_priority_is_served_first_and_equal_priorities_in_order(tracker: Tracker) -> None:
    with (
        _dial(tracker.port) as server,
        _dial(tracker.port) as low_first,
        _dial(tracker.port) as high,
        _dial(tracker.port) as low_second,
    ):
        _request_pending(low_first, "x", priority=1)
        _request_pending(high, "x", priority=5)
        _request_pending(low_second, "x", priority=1)
        for i in range(3):
            _put(server, "x", 9000 + i, f"x:{i}")
        assert recvjson(high)[1][2] == "x:0"
        assert recvjson(low_first)[1][2] == "x:1"
        assert recvjson(low_second)[1][2] == "x:2"


def test_free_resources_are_handed_out_oldest_first(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as client:
        for i in range(3):
            _put(server, "x", 9000 + i, f"x:{i}")
        got = [_call(client, [TrackerCode.REQUEST, "x", "", 1])[1][2] for _ in range(3)]
        assert got == ["x:0", "x:1", "x:2"]


def test_requests_of_other_keys_do_not_match(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as client:
        _put(server, "x", 9090, "x:0.1")
        _request_pending(client, "y")
        queues = _summary(tracker.port)["queue_info"]
        assert queues == {"x": {"free": 1, "pending": 0}, "y": {"free": 0, "pending": 1}}


def test_requester_that_disconnects_gives_the_resource_back(tracker: Tracker) -> None:
    with _dial(tracker.port) as server:
        gone = _dial(tracker.port)
        _request_pending(gone, "x")
        gone.close()
        _put(server, "x", 9090, "x:0.4")
        assert _summary(tracker.port)["queue_info"]["x"] == {"free": 1, "pending": 0}
        with _dial(tracker.port) as client:
            reply = _call(client, [TrackerCode.REQUEST, "x", "", 1])
        assert reply == [TrackerCode.SUCCESS, ["127.0.0.1", 9090, "x:0.4"]]


def test_closing_server_connection_drops_its_resources(tracker: Tracker) -> None:
    server = _dial(tracker.port)
    sendjson(server, [TrackerCode.UPDATE_INFO, {"key": "server:x", "addr": [None, 9090]}])
    assert recvjson(server) == TrackerCode.SUCCESS
    _put(server, "x", 9090, "x:0.5")
    _put(server, "x", 9090, "x:0.6")
    with _dial(tracker.port) as other:
        _put(other, "x", 9092, "x:0.7")
        assert _summary(tracker.port)["queue_info"]["x"]["free"] == 3
        server.close()
        wait_for(
            lambda: _summary(tracker.port)["queue_info"]["x"]["free"] == 1,
            "the closed server's resources to be dropped",
        )
        assert _summary(tracker.port)["server_info"] == []
        with _dial(tracker.port) as client:
            assert _call(client, [TrackerCode.REQUEST, "x", "", 1])[1][2] == "x:0.7"


def test_closing_requester_removes_its_pending_request(tracker: Tracker) -> None:
    with _dial(tracker.port) as server:
        _put(server, "x", 9090, "x:0.1")
        _call(_dial(tracker.port), [TrackerCode.REQUEST, "x", "", 1])  # the only server is busy
        requester = _dial(tracker.port)
        _request_pending(requester, "x")
        assert _summary(tracker.port)["queue_info"]["x"]["pending"] == 1
        requester.close()
        wait_for(
            lambda: _summary(tracker.port)["queue_info"]["x"]["pending"] == 0,
            "the closed requester's request to be removed",
        )


def test_key_only_requested_disappears_with_its_last_waiter(tracker: Tracker) -> None:
    requester = _dial(tracker.port)
    _request_pending(requester, "ghost")
    assert _summary(tracker.port)["queue_info"]["ghost"] == {"free": 0, "pending": 1}
    requester.close()
    wait_for(lambda: "ghost" not in _summary(tracker.port)["queue_info"], "'ghost' to be pruned")


def test_key_whose_servers_left_stays_listed_for_key_ttl_then_is_forgotten() -> None:
    with Tracker(port=0, silent=True, key_ttl=0.3) as tr:
        server = _dial(tr.port)
        _put(server, "x", 9090, "x:0.1")
        server.close()
        wait_for(lambda: _summary(tr.port)["queue_info"].get("x", {}).get("free") == 0, "drop")
        wait_for(lambda: "x" not in _summary(tr.port)["queue_info"], "'x' to be forgotten")


# ---------------------------------------------------------------------------- other codes


def test_summary_lists_queues_and_server_connections_only(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as client:
        info = {"key": "server:x", "addr": [None, 9090]}
        assert _call(server, [TrackerCode.UPDATE_INFO, info]) == TrackerCode.SUCCESS
        _put(server, "x", 9090, "x:0.1")
        info = {"key": "client:someone", "addr": [None, 1]}
        assert _call(client, [TrackerCode.UPDATE_INFO, info]) == TrackerCode.SUCCESS
        reply = _call(client, [TrackerCode.SUMMARY])
    assert reply == [
        TrackerCode.SUCCESS,
        {
            "queue_info": {"x": {"free": 1, "pending": 0}},
            "server_info": [{"key": "server:x", "addr": ["127.0.0.1", 9090]}],
        },
    ]


def test_get_pending_matchkeys_lists_this_connections_unclaimed_puts(tracker: Tracker) -> None:
    with _dial(tracker.port) as server, _dial(tracker.port) as other:
        assert _call(server, [TrackerCode.GET_PENDING_MATCHKEYS]) == []
        _put(server, "x", 9090, "x:0.1")
        _put(server, "x", 9090, "x:0.2")
        _put(other, "y", 9090, "y:0.3")
        assert _call(server, [TrackerCode.GET_PENDING_MATCHKEYS]) == ["x:0.1", "x:0.2"]
        with _dial(tracker.port) as client:
            assert _call(client, [TrackerCode.REQUEST, "x", "", 1])[1][2] == "x:0.1"
        assert _call(server, [TrackerCode.GET_PENDING_MATCHKEYS]) == ["x:0.2"]
        assert _call(other, [TrackerCode.GET_PENDING_MATCHKEYS]) == ["y:0.3"]


def test_stop_with_wrong_key_fails_and_tracker_keeps_serving(tracker: Tracker) -> None:
    with _dial(tracker.port) as sock:
        assert _call(sock, [TrackerCode.STOP, "tracker:wrong"]) == TrackerCode.FAIL
        assert _call(sock, [TrackerCode.PING]) == TrackerCode.SUCCESS


def test_stop_with_right_key_replies_and_shuts_down() -> None:
    tr = Tracker(port=0, silent=True)
    assert tr.stop_key.startswith("tracker:")
    returned = threading.Event()

    def serve() -> None:
        tr.serve_forever()
        returned.set()

    threading.Thread(target=serve, daemon=True).start()
    try:
        with _dial(tr.port) as bystander, _dial(tr.port) as sock:
            assert _call(sock, [TrackerCode.STOP, tr.stop_key]) == TrackerCode.SUCCESS
            assert is_closed_by_peer(sock)
            assert is_closed_by_peer(bystander)
        assert returned.wait(TIMEOUT)
        with pytest.raises(ConnectionRefusedError):
            socket.create_connection(("127.0.0.1", tr.port), timeout=TIMEOUT)
    finally:
        tr.terminate()


BAD_MESSAGES = {
    "zero length": struct.pack("<i", 0),
    "negative length": struct.pack("<i", -5),
    "length over 1 MiB": struct.pack("<i", (1 << 20) + 1),
    "malformed json": struct.pack("<i", 3) + b"[1,",
    "invalid utf-8": struct.pack("<i", 2) + b"\xff\xfe",
    "unknown code": struct.pack("<i", 4) + b"[99]",
    "not a list": struct.pack("<i", 1) + b"6",
}


@pytest.mark.parametrize("payload", BAD_MESSAGES.values(), ids=BAD_MESSAGES.keys())
def test_bad_message_closes_only_that_connection(tracker: Tracker, payload: bytes) -> None:
    with _dial(tracker.port) as bystander, _dial(tracker.port) as sock:
        _put(bystander, "x", 9090, "x:0.1")
        sock.sendall(payload)
        assert is_closed_by_peer(sock)
        assert _call(bystander, [TrackerCode.PING]) == TrackerCode.SUCCESS
        assert _summary(tracker.port)["queue_info"]["x"] == {"free": 1, "pending": 0}


BAD_VALUES = {
    "put without slot": ([3, "x"], "PUT must be"),
    "put port zero": ([3, "x", [0, "x:1"], None], "PUT port"),
    "put port too large": ([3, "x", [70000, "x:1"], None], "PUT port"),
    "put port as text": ([3, "x", ["9090", "x:1"], None], "PUT port"),
    "put empty key": ([3, "", [9090, "x:1"], None], "PUT key"),
    "put key too long": ([3, "k" * 300, [9090, "x:1"], None], "PUT key"),
    "put address too long": ([3, "x", [9090, "x:1"], "h" * 300], "PUT address"),
    "request nan priority": ([4, "x", "", float("nan")], "priority"),
    "request infinite priority": ([4, "x", "", float("inf")], "priority"),
    "request huge priority": ([4, "x", "", 1e300], "priority"),
    "request text priority": ([4, "x", "", "high"], "priority"),
    "request bool priority": ([4, "x", "", True], "priority"),
    "request bad options": ([4, "x", "", 1, {"if_unknown": "maybe"}], "options"),
    "update_info not a dict": ([5, 1], "UPDATE_INFO must be"),
    "update_info bad port": ([5, {"key": "server:x", "addr": [None, -1]}], "UPDATE_INFO port"),
    "update_info too big": ([5, {"key": "server:x", "pad": "p" * 5000}], "bytes as JSON"),
}


@pytest.mark.parametrize("message,expected", BAD_VALUES.values(), ids=BAD_VALUES.keys())
def test_bad_value_gets_an_error_reply_and_the_connection_stays(
    tracker: Tracker, message: list[Any], expected: str, caplog: pytest.LogCaptureFixture
) -> None:
    with _dial(tracker.port) as bystander, _dial(tracker.port) as sock:
        _put(bystander, "x", 9090, "x:0.1")
        reply = _call(sock, message)
        assert reply[0] == TrackerCode.FAIL and expected in reply[1]
        assert _call(sock, [TrackerCode.PING]) == TrackerCode.SUCCESS
        assert _summary(tracker.port)["queue_info"]["x"] == {"free": 1, "pending": 0}
    assert expected in caplog.text


def test_nan_priority_does_not_reorder_other_requests(tracker: Tracker) -> None:
    with (
        _dial(tracker.port) as server,
        _dial(tracker.port) as first,
        _dial(tracker.port) as second,
        _dial(tracker.port) as nan,
    ):
        _put(server, "x", 9090, "x:held")
        _call(_dial(tracker.port), [TrackerCode.REQUEST, "x", "", 1])
        _request_pending(first, "x", priority=5)
        assert _call(nan, [TrackerCode.REQUEST, "x", "", float("nan")])[0] == TrackerCode.FAIL
        _request_pending(second, "x", priority=1)
        _put(server, "x", 9091, "x:a")
        _put(server, "x", 9092, "x:b")
        assert recvjson(first)[1][2] == "x:a"
        assert recvjson(second)[1][2] == "x:b"


def test_bad_message_is_logged(tracker: Tracker, caplog: pytest.LogCaptureFixture) -> None:
    with _dial(tracker.port) as sock:
        sock.sendall(struct.pack("<i", 4) + b"[99]")
        assert is_closed_by_peer(sock)
    assert "unknown tracker code 99" in caplog.text


def test_messages_split_across_segments_and_pipelined_are_all_answered(tracker: Tracker) -> None:
    body = json.dumps([TrackerCode.PING]).encode()
    frame = struct.pack("<i", len(body)) + body
    with _dial(tracker.port) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for i in range(len(frame)):  # one byte per segment
            sock.sendall(frame[i : i + 1])
        assert recvjson(sock) == TrackerCode.SUCCESS
        sock.sendall(frame * 3)  # three requests in one segment
        assert [recvjson(sock) for _ in range(3)] == [0, 0, 0]


# ---------------------------------------------------------------------------- pytvm client


def test_tracker_session_summary_and_text_summary(tracker: Tracker) -> None:
    with _dial(tracker.port) as server:
        info = {"key": "server:board", "addr": [None, 9090]}
        assert _call(server, [TrackerCode.UPDATE_INFO, info]) == TrackerCode.SUCCESS
        _put(server, "board", 9090, "board:0.1")
        with connect_tracker("127.0.0.1", tracker.port) as session:
            assert session.summary()["queue_info"] == {"board": {"free": 1, "pending": 0}}
            text = session.text_summary()
    assert "127.0.0.1:9090           server:board" in text
    assert "board   1      1     0" in text
    assert text.startswith("Server List\n")
    assert "Queue Status" in text


def test_tracker_session_rejects_a_non_tracker() -> None:
    with socket.create_server(("127.0.0.1", 0)) as listener:

        def answer() -> None:
            conn, _ = listener.accept()
            with conn:
                conn.recv(4)
                conn.sendall(struct.pack("<i", 0xFF271))

        threading.Thread(target=answer, daemon=True).start()
        with pytest.raises(RPCError, match="not the tracker"):
            TrackerSession(("127.0.0.1", listener.getsockname()[1]))


@pytest.fixture
def fake_client_module(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Any, ...]]:
    """Stand in for ``pytvm.rpc.sessions.client``: ``connect`` fails for ports below 9000."""
    calls: list[tuple[Any, ...]] = []

    def connect(host: str, port: int, key: str = "", **kwargs: Any) -> Any:
        calls.append((host, port, key, kwargs))
        if port < 9000:
            raise RPCError(f"cannot reach {host}:{port}")
        return ("session", host, port, key)

    module = types.ModuleType("pytvm.rpc.sessions.client")
    module.connect = connect  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "pytvm.rpc.sessions.client", module)
    return calls


def test_request_connects_to_the_assigned_server(
    tracker: Tracker, fake_client_module: list[tuple[Any, ...]]
) -> None:
    with _dial(tracker.port) as server, connect_tracker("127.0.0.1", tracker.port) as session:
        _put(server, "x", 9090, "x:0.1")
        sess = session.request("x", session_timeout=7, auth_token="t")
    assert sess == ("session", "127.0.0.1", 9090, f"x:0.1 -tokenmac={session_mac('t', 'x:0.1')}")
    kwargs = fake_client_module[0][3]
    assert kwargs["session_timeout"] == 7 and kwargs.get("auth_token") is None


def test_request_retries_after_a_failed_connect(
    tracker: Tracker, fake_client_module: list[tuple[Any, ...]]
) -> None:
    with _dial(tracker.port) as server, connect_tracker("127.0.0.1", tracker.port) as session:
        _put(server, "x", 1, "x:dead")
        _put(server, "x", 9090, "x:alive")
        assert session.request("x")[3] == "x:alive"
    assert [call[2] for call in fake_client_module] == ["x:dead", "x:alive"]


def test_request_gives_up_after_max_retry_naming_key_and_error(
    tracker: Tracker, fake_client_module: list[tuple[Any, ...]]
) -> None:
    with _dial(tracker.port) as server, connect_tracker("127.0.0.1", tracker.port) as session:
        for i in range(2):
            _put(server, "x", 1, f"x:{i}")
        with pytest.raises(RPCError, match=r"'x'.*2 attempts.*cannot reach 127.0.0.1:1"):
            session.request("x", max_retry=2)


def test_request_reconnects_when_the_tracker_connection_broke(
    tracker: Tracker, fake_client_module: list[tuple[Any, ...]]
) -> None:
    with _dial(tracker.port) as server, connect_tracker("127.0.0.1", tracker.port) as session:
        _put(server, "x", 9090, "x:0.1")
        assert session._sock is not None
        session._sock.shutdown(socket.SHUT_RDWR)  # the tracker link dies under the session
        assert session.request("x")[3] == "x:0.1"


def test_request_and_run_retries_a_failing_function(
    tracker: Tracker, fake_client_module: list[tuple[Any, ...]]
) -> None:
    runs: list[Any] = []

    def work(sess: Any) -> str:
        runs.append(sess)
        if len(runs) == 1:
            raise RuntimeError("server dropped out")
        return "done"

    with _dial(tracker.port) as server, connect_tracker("127.0.0.1", tracker.port) as session:
        _put(server, "x", 9090, "x:0.1")
        _put(server, "x", 9091, "x:0.2")
        assert session.request_and_run("x", work) == "done"
    assert [sess[3] for sess in runs] == ["x:0.1", "x:0.2"]


# ---------------------------------------------------------------------------- TVM interop


def test_tvm_tracker_session_reads_pytvm_tracker(tracker: Tracker) -> None:
    import tvm.rpc as tvm_rpc

    with _dial(tracker.port) as server:
        info = {"key": "server:x", "addr": [None, 9090]}
        assert _call(server, [TrackerCode.UPDATE_INFO, info]) == TrackerCode.SUCCESS
        _put(server, "x", 9090, "x:0.1")
        tvm_session = tvm_rpc.connect_tracker("127.0.0.1", tracker.port)
        try:
            summary = tvm_session.summary()
            text = tvm_session.text_summary()
        finally:
            tvm_session.close()
        with connect_tracker("127.0.0.1", tracker.port) as session:
            assert session.text_summary() == text
    assert summary == {
        "queue_info": {"x": {"free": 1, "pending": 0}},
        "server_info": [{"key": "server:x", "addr": ["127.0.0.1", 9090]}],
    }


def test_tvm_server_registers_with_pytvm_tracker_and_tvm_client_calls_it() -> None:
    import cloudpickle  # noqa: F401 - TVM's server needs it
    import tvm.rpc as tvm_rpc

    with service_process("tracker", "--port", "0", "--silent") as (_, port):
        server = tvm_rpc.Server(
            host="127.0.0.1",
            port=9300,
            port_end=9400,
            tracker_addr=("127.0.0.1", port),
            key="x",
            silent=True,
        )
        try:
            wait_for(
                lambda: _summary(port)["queue_info"].get("x", {}).get("free") == 1,
                "the TVM server to register",
            )
            assert _summary(port)["server_info"] == [
                {"key": "server:x", "addr": ["127.0.0.1", server.port]}
            ]
            session = tvm_rpc.connect_tracker("127.0.0.1", port)
            remote = session.request("x", max_retry=2)
            assert remote.get_function("rpc.test.addone")(1) == 2
            del remote
            session.close()
        finally:
            server.terminate()


def test_pytvm_tracker_session_reads_tvm_tracker() -> None:
    import tvm.rpc.tracker as tvm_tracker

    tvm_tr = tvm_tracker.Tracker(host="127.0.0.1", port=9400, port_end=9500, silent=True)
    try:
        with connect_tracker("127.0.0.1", tvm_tr.port) as session:
            assert session.summary() == {"queue_info": {}, "server_info": []}
            with _dial(tvm_tr.port) as server:
                info = {"key": "server:y", "addr": [None, 9090]}
                assert _call(server, [TrackerCode.UPDATE_INFO, info]) == TrackerCode.SUCCESS
                _put(server, "y", 9090, "y:0.1")
                assert session.summary() == {
                    "queue_info": {"y": {"free": 1, "pending": 0}},
                    "server_info": [{"key": "server:y", "addr": ["127.0.0.1", 9090]}],
                }
                assert "127.0.0.1:9090           server:y" in session.text_summary()
    finally:
        tvm_tr.terminate()
