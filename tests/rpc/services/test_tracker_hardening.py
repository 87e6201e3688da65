"""Tracker hardening: unknown keys, timeouts, registration order, tokens, limits, key secrecy."""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

from pytvm.rpc.services.proxy import Proxy
from pytvm.rpc.services.server import Server
from pytvm.rpc.services.tracker import Tracker
from pytvm.rpc.sessions.client import connect
from pytvm.rpc.sessions.tracker_client import (
    TrackerConnectionError,
    TrackerKeyError,
    TrackerTimeoutError,
    connect_tracker,
)
from pytvm.rpc.wire._auth import AUTH_CODE, HELLO, session_mac, tracker_mac
from pytvm.rpc.wire.base import (
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPC_TRACKER_MAGIC,
    RPCError,
    TrackerCode,
    recv_key,
    recvall,
    recvjson,
    send_key,
    sendjson,
)
from pytvm.testing.rpc import is_closed_by_peer, wait_for

TIMEOUT = 10.0


@pytest.fixture
def tracker() -> Iterator[Tracker]:
    with Tracker(port=0, silent=True) as tr:
        yield tr


def _dial(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
    assert struct.unpack("<i", recvall(sock, 4))[0] == RPC_TRACKER_MAGIC
    return sock


def _call(sock: socket.socket, message: Any) -> Any:
    sendjson(sock, message)
    return recvjson(sock)


def _queues(port: int) -> dict[str, Any]:
    with _dial(port) as sock:
        queues: dict[str, Any] = _call(sock, [TrackerCode.SUMMARY])[1]["queue_info"]
    return queues


# ---------------------------------------------------------------------------- unknown keys


def test_request_for_unknown_key_fails_at_once_listing_known_keys(
    tracker: Tracker, caplog: pytest.LogCaptureFixture
) -> None:
    with _dial(tracker.port) as server, connect_tracker("127.0.0.1", tracker.port) as session:
        assert _call(server, [TrackerCode.PUT, "board", [9090, "board:1"], None]) == 0
        start = time.monotonic()
        with pytest.raises(TrackerKeyError, match=r"'no-such-key'.*known keys: \['board'\]"):
            session.request("no-such-key")
        assert time.monotonic() - start < 2.0
    assert "requests key 'no-such-key', which no server has registered" in caplog.text
    assert "refused at once" in caplog.text


def test_request_can_wait_for_an_unknown_key(tracker: Tracker) -> None:
    got: list[Any] = []
    with connect_tracker("127.0.0.1", tracker.port) as session:

        def request() -> None:
            try:
                session.request("late", wait_for_unknown_key=True, max_retry=1, timeout=TIMEOUT)
            except RPCError as err:  # the registered port has no server: connect fails
                got.append(err)

        thread = threading.Thread(target=request)
        thread.start()
        wait_for(lambda: _queues(tracker.port).get("late", {}).get("pending") == 1, "waiting")
        with _dial(tracker.port) as server:
            assert _call(server, [TrackerCode.PUT, "late", [1, "late:1"], None]) == 0
            thread.join(TIMEOUT)
            assert _queues(tracker.port)["late"] == {"free": 0, "pending": 0}  # handed out
    assert not thread.is_alive() and got and "'late'" in str(got[0])


def test_request_timeout_withdraws_the_request_and_says_so(
    tracker: Tracker, caplog: pytest.LogCaptureFixture
) -> None:
    tracker.silent = False
    caplog.set_level("INFO", logger="pytvm.rpc.tracker")
    with _dial(tracker.port) as server, _dial(tracker.port) as holder:
        assert _call(server, [TrackerCode.PUT, "busy", [9090, "busy:1"], None]) == 0
        assert _call(holder, [TrackerCode.REQUEST, "busy", "", 1])[0] == 0  # now all are busy
        with connect_tracker("127.0.0.1", tracker.port) as session:
            start = time.monotonic()
            with pytest.raises(TrackerTimeoutError, match="no free server for key 'busy'"):
                session.request("busy", timeout=0.3)
            assert 0.3 <= time.monotonic() - start < 3.0
        wait_for(lambda: _queues(tracker.port)["busy"]["pending"] == 0, "withdrawal")
    assert "its request for key 'busy' is withdrawn" in caplog.text


def test_pytvm_client_fails_fast_on_unknown_key_with_a_tvm_tracker() -> None:
    import tvm.rpc.tracker as tvm_tracker

    tvm_tr = tvm_tracker.Tracker(host="127.0.0.1", port=9500, port_end=9600, silent=True)
    try:
        with connect_tracker("127.0.0.1", tvm_tr.port) as session:
            with pytest.raises(TrackerKeyError, match=r"'nope'.*known keys: \[\]"):
                session.request("nope")
            assert session.summary() == {"queue_info": {}, "server_info": []}
    finally:
        tvm_tr.terminate()


def test_connect_tracker_to_a_dead_port_logs_and_names_address_time_and_error(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as probe:
        port = probe.getsockname()[1]  # closed below: nothing listens there afterwards
    start = time.monotonic()
    with pytest.raises(TrackerConnectionError) as info:
        connect_tracker("127.0.0.1", port, connect_timeout=0.4, retry_period=0.05)
    assert 0.4 <= time.monotonic() - start < 3.0
    message = str(info.value)
    assert f"127.0.0.1:{port}" in message and "tried for 0.4" in message
    assert "refused" in message.lower()
    assert isinstance(info.value, ConnectionError)
    assert f"tracker 127.0.0.1:{port}" in caplog.text and "retrying" in caplog.text


# ---------------------------------------------------------------------------- registration


def test_servers_are_registered_in_start_order_before_the_constructor_returns() -> None:
    """TVM's test_rpc_tracker_register, 12 times: server2 has an unreachable custom_addr."""
    with Tracker(port=0, silent=True) as tr:
        for _ in range(12):
            server1 = Server(port=0, key="x", tracker_addr=("127.0.0.1", tr.port), silent=True)
            server2 = Server(
                port=0,
                key="x",
                tracker_addr=("127.0.0.1", tr.port),
                custom_addr="test_addr",
                silent=True,
            )
            try:
                with _dial(tr.port) as client:
                    summary = _call(client, [TrackerCode.SUMMARY])[1]
                    assert summary["queue_info"]["x"] == {"free": 2, "pending": 0}
                    addrs = sorted(tuple(s["addr"]) for s in summary["server_info"])
                    assert addrs == sorted(
                        [("127.0.0.1", server1.port), ("test_addr", server2.port)]
                    )
                    first = _call(client, [TrackerCode.REQUEST, "x", "", 1])[1]
                    assert first[:2] == ["127.0.0.1", server1.port]
            finally:
                server2.terminate()
                server1.terminate()
            wait_for(lambda: _queues(tr.port)["x"]["free"] == 0, "the servers to leave")


# ---------------------------------------------------------------------------- limits


def test_puts_beyond_the_per_connection_cap_are_refused_and_logged(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with Tracker(port=0, silent=True, max_puts_per_connection=2) as tr, _dial(tr.port) as sock:
        for i in range(2):
            assert _call(sock, [TrackerCode.PUT, "x", [9090, f"x:{i}"], None]) == 0
        reply = _call(sock, [TrackerCode.PUT, "x", [9090, "x:2"], None])
        assert reply[0] == TrackerCode.FAIL and "max_puts_per_connection=2" in reply[1]
        assert _queues(tr.port)["x"]["free"] == 2
    assert "refused PUT" in caplog.text


def test_reuse_addr_and_timeout_arguments() -> None:
    with Tracker(port=0, silent=True, reuse_addr=False, timeout=0.3) as tr:
        assert tr._listen.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) == 0
        with _dial(tr.port) as idle, _dial(tr.port) as stalled:
            stalled.sendall(struct.pack("<i", 20) + b"[6")  # half a message, then nothing
            assert is_closed_by_peer(stalled)
            assert _call(idle, [TrackerCode.PING]) == TrackerCode.SUCCESS  # idle is fine
    with Tracker(port=0, silent=True) as tr:
        assert tr._listen.getsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR) != 0


# ---------------------------------------------------------------------------- tracker token


def test_tracker_token_guards_registration(caplog: pytest.LogCaptureFixture) -> None:
    with Tracker(port=0, silent=True, token="s3cret") as tr, _dial(tr.port) as stranger:
        reply = _call(stranger, [TrackerCode.PUT, "victim", [9090, "victim:1"], None])
        assert reply[0] == TrackerCode.FAIL and "needs the tracker token" in reply[1]
        info = {"key": "server:victim", "addr": [None, 9090]}
        assert _call(stranger, [TrackerCode.UPDATE_INFO, info])[0] == TrackerCode.FAIL
        nonce = _call(stranger, [TrackerCode.PING, HELLO])[1]["nonce"]
        reply = _call(stranger, [AUTH_CODE, tracker_mac("guess", nonce)])
        assert reply == [TrackerCode.FAIL, "wrong tracker token"]
        assert "victim" not in _queues(tr.port)
        assert _call(stranger, [TrackerCode.PING]) == TrackerCode.SUCCESS  # stock PING: plain 0

        addr = ("127.0.0.1", tr.port)
        with Server(port=0, key="good", tracker_addr=addr, tracker_token="s3cret", silent=True):
            assert _queues(tr.port)["good"]["free"] == 1
        with Server(port=0, key="bad", tracker_addr=addr, tracker_token="nope", silent=True):
            assert "bad" not in _queues(tr.port)
    assert "needs the tracker token" in caplog.text
    assert "refused the tracker token: wrong tracker token" in caplog.text


def test_tracker_token_works_through_a_proxy() -> None:
    with (
        Tracker(port=0, silent=True, token="s3cret") as tr,
        Proxy(port=0, tracker_addr=("127.0.0.1", tr.port), tracker_token="s3cret") as px,
        Server(host="127.0.0.1", port=px.port, key="viaproxy", is_proxy=True, silent=True),
        connect_tracker("127.0.0.1", tr.port) as session,
    ):
        sess = session.request("viaproxy", wait_for_unknown_key=True, timeout=TIMEOUT)
        assert sess.get_function("rpc.test.addone")(1) == 2


# ---------------------------------------------------------------------------- key secrecy


def test_a_registered_server_never_sees_the_clients_auth_token(tracker: Tracker) -> None:
    received: list[str] = []
    with socket.create_server(("127.0.0.1", 0)) as fake, _dial(tracker.port) as reg:
        assert _call(reg, [TrackerCode.PUT, "k", [fake.getsockname()[1], "k:fake"], None]) == 0

        def accept() -> None:
            conn, _ = fake.accept()
            with conn:
                (_magic,) = struct.unpack("<i", recvall(conn, 4))
                received.append(recv_key(conn))
                conn.sendall(struct.pack("<i", RPC_CODE_MISMATCH))

        thread = threading.Thread(target=accept)
        thread.start()
        with connect_tracker("127.0.0.1", tracker.port) as session:
            with pytest.raises(RPCError):
                session.request("k", auth_token="TOPSECRET", max_retry=1)
        thread.join(TIMEOUT)
    assert received == [f"client:k:fake -tokenmac={session_mac('TOPSECRET', 'k:fake')}"]
    assert "TOPSECRET" not in received[0]


def test_pytvm_server_checks_the_token_mac_of_a_tracker_session(tracker: Tracker) -> None:
    addr = ("127.0.0.1", tracker.port)
    with (
        Server(
            port=0,
            key="k",
            tracker_addr=addr,
            auth_token="T",
            silent=True,
            ping_period=0.1,
            unmatch_timeout=0.2,
        ),
        connect_tracker(*addr) as session,
    ):
        with pytest.raises(RPCError, match="'k'"):
            session.request("k", auth_token="wrong", max_retry=1)
        wait_for(lambda: _queues(tracker.port)["k"]["free"] == 1, "a fresh match key")
        sess = session.request("k", auth_token="T", timeout=TIMEOUT)
        assert sess.get_function("rpc.test.addone")(41) == 42
        sess.close()


def test_proxy_server_checks_the_token_mac(tracker: Tracker) -> None:
    addr = ("127.0.0.1", tracker.port)
    with (
        Proxy(port=0, tracker_addr=addr) as px,
        Server(
            host="127.0.0.1", port=px.port, key="pk", is_proxy=True, auth_token="T", silent=True
        ),
        connect_tracker(*addr) as session,
    ):
        sess = session.request("pk", auth_token="T", wait_for_unknown_key=True, timeout=TIMEOUT)
        assert sess.get_function("rpc.test.addone")(1) == 2


# ---------------------------------------------------------------------------- proxy


def test_proxy_bounds_and_reports_the_wait_for_an_unknown_key(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with Proxy(port=0, timeout_unknown_key=0.3) as px:
        with socket.create_connection(("127.0.0.1", px.port), timeout=TIMEOUT) as client:
            start = time.monotonic()
            send_key(client, RPC_MAGIC, "client:never-offered")
            assert struct.unpack("<i", recvall(client, 4))[0] == RPC_CODE_MISMATCH
            assert time.monotonic() - start < 3.0
        with pytest.raises(RPCError, match="cannot find a server"):
            connect("127.0.0.1", px.port, key="never-offered")
    assert "which no server has offered here" in caplog.text
    assert "no server for" in caplog.text and "within 0.3 s" in caplog.text
