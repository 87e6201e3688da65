"""The RPC proxy over real loopback sockets: pairing, relaying, refusals, tracker mode, TVM."""

from __future__ import annotations

import hashlib
import os
import socket
import struct
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pytvm.rpc.services.proxy import Proxy
from pytvm.rpc.services.tracker import Tracker
from pytvm.rpc.wire.base import (
    RPC_CODE_DUPLICATE,
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPC_TRACKER_MAGIC,
    TrackerCode,
    recv_key,
    recvall,
    recvjson,
    send_key,
    sendjson,
)
from pytvm.testing.rpc import is_closed_by_peer, service_process, wait_for

TIMEOUT = 10.0
REPO_ROOT = Path(__file__).resolve().parents[3]


@pytest.fixture
def proxy() -> Iterator[Proxy]:
    with Proxy(port=0) as px:
        yield px


def _dial(port: int, key: str | None = None) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    if key is not None:
        send_key(sock, RPC_MAGIC, key)
    return sock


def _reply(sock: socket.socket) -> tuple[int, str | None]:
    """The proxy's answer: ``(RPC_MAGIC, peer key)`` on pairing, else ``(code, None)``."""
    (code,) = struct.unpack("<i", recvall(sock, 4))
    return code, (recv_key(sock) if code == RPC_MAGIC else None)


def _tracker_call(port: int, message: Any) -> Any:
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as sock:
        sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
        recvall(sock, 4)
        sendjson(sock, message)
        return recvjson(sock)


# ---------------------------------------------------------------------------- pairing


def test_proxy_pairs_server_and_client_and_swaps_their_keys(proxy: Proxy) -> None:
    with _dial(proxy.port, "server:k") as server, _dial(proxy.port, "client:k -timeout=10") as cli:
        assert _reply(cli) == (RPC_MAGIC, "server:k")
        assert _reply(server) == (RPC_MAGIC, "client:k -timeout=10")


def test_proxy_pairs_client_that_arrives_first(proxy: Proxy) -> None:
    with _dial(proxy.port, "client:k") as cli, _dial(proxy.port, "server:k") as server:
        assert _reply(server) == (RPC_MAGIC, "client:k")
        assert _reply(cli) == (RPC_MAGIC, "server:k")


def test_proxy_relays_bytes_both_ways_including_multi_mib_payloads(proxy: Proxy) -> None:
    with _dial(proxy.port, "server:k") as server, _dial(proxy.port, "client:k") as cli:
        _reply(server), _reply(cli)
        cli.sendall(b"ping")
        assert recvall(server, 4) == b"ping"
        server.sendall(b"pong!")
        assert recvall(cli, 5) == b"pong!"

        up = os.urandom(24 << 20)
        down = os.urandom(9 << 20)
        # Both directions at once, so the proxy's back-pressure has to juggle them.
        senders = [
            threading.Thread(target=cli.sendall, args=(up,)),
            threading.Thread(target=server.sendall, args=(down,)),
        ]
        for t in senders:
            t.start()
        received: dict[str, bytes] = {}
        reader = threading.Thread(target=lambda: received.update(up=recvall(server, len(up))))
        reader.start()
        received["down"] = recvall(cli, len(down))
        reader.join(TIMEOUT)
        for t in senders:
            t.join(TIMEOUT)
        assert hashlib.sha256(received["up"]).digest() == hashlib.sha256(up).digest()
        assert hashlib.sha256(received["down"]).digest() == hashlib.sha256(down).digest()


def test_proxy_delivers_last_bytes_then_closes_the_other_side(proxy: Proxy) -> None:
    server = _dial(proxy.port, "server:k")
    with _dial(proxy.port, "client:k") as cli:
        _reply(server), _reply(cli)
        server.sendall(b"bye")
        server.close()
        assert recvall(cli, 3) == b"bye"
        assert is_closed_by_peer(cli)


def test_proxy_keeps_bytes_sent_before_pairing(proxy: Proxy) -> None:
    with _dial(proxy.port, "server:k") as server:
        server.sendall(b"early")
        with _dial(proxy.port, "client:k") as cli:
            assert _reply(cli) == (RPC_MAGIC, "server:k")
            assert recvall(cli, 5) == b"early"


def test_proxy_matches_on_the_first_token_after_the_prefix(proxy: Proxy) -> None:
    with _dial(proxy.port, "server:a") as server_a, _dial(proxy.port, "server:b") as server_b:
        with _dial(proxy.port, "client:b -timeout=3") as cli:
            assert _reply(cli) == (RPC_MAGIC, "server:b")
            assert _reply(server_b) == (RPC_MAGIC, "client:b -timeout=3")
        with _dial(proxy.port, "client:a") as cli:
            assert _reply(cli) == (RPC_MAGIC, "server:a")
            assert _reply(server_a)[0] == RPC_MAGIC


# ---------------------------------------------------------------------------- refusals


def test_proxy_refuses_duplicate_key_and_keeps_the_first(proxy: Proxy) -> None:
    with _dial(proxy.port, "server:k") as first, _dial(proxy.port, "server:k") as second:
        assert _reply(second) == (RPC_CODE_DUPLICATE, None)
        assert is_closed_by_peer(second)
        with _dial(proxy.port, "client:k") as cli:
            assert _reply(cli) == (RPC_MAGIC, "server:k")
            assert _reply(first) == (RPC_MAGIC, "client:k")


def test_proxy_times_out_unmatched_client_and_server_with_mismatch() -> None:
    # A second for a server: the pairing at the end must not expire while the client dials.
    with Proxy(port=0, timeout_client=0.1, timeout_server=1.0) as px:
        with _dial(px.port, "client:nobody") as cli, _dial(px.port, "server:lonely") as server:
            assert _reply(cli) == (RPC_CODE_MISMATCH, None)
            assert is_closed_by_peer(cli)
            assert _reply(server) == (RPC_CODE_MISMATCH, None)
            assert is_closed_by_peer(server)
        # The expired key is free again.
        with _dial(px.port, "server:lonely") as server, _dial(px.port, "client:lonely") as cli:
            assert _reply(cli) == (RPC_MAGIC, "server:lonely")


def test_proxy_closes_connection_on_wrong_magic(proxy: Proxy) -> None:
    with _dial(proxy.port) as sock:
        send_key(sock, RPC_TRACKER_MAGIC, "client:k")
        assert is_closed_by_peer(sock)


def test_proxy_closes_connection_on_bad_key_length(proxy: Proxy) -> None:
    with _dial(proxy.port) as sock:
        sock.sendall(struct.pack("<ii", RPC_MAGIC, -1))
        assert is_closed_by_peer(sock)


def test_proxy_refuses_key_without_role_prefix(proxy: Proxy) -> None:
    with _dial(proxy.port, "k") as sock:
        assert _reply(sock) == (RPC_CODE_MISMATCH, None)
        assert is_closed_by_peer(sock)


def test_client_leaving_the_pool_frees_its_key() -> None:
    # A short server timeout bounds a probe that races the proxy noticing the first client left.
    with Proxy(port=0, timeout_server=1.0) as px:
        with _dial(px.port, "client:k"):
            pass

        def second_client_is_accepted() -> bool:
            with _dial(px.port, "client:k -probe") as again, _dial(px.port, "server:k") as server:
                _, peer_key = _reply(server)  # the dead first client, the probe, or a timeout
                return _reply(again)[0] == RPC_MAGIC and peer_key == "client:k -probe"

        wait_for(second_client_is_accepted, "the closed client's key to be released")


# ---------------------------------------------------------------------------- tracker mode


def test_proxy_registers_waiting_servers_with_the_tracker() -> None:
    with (
        Tracker(port=0, silent=True) as tracker,
        Proxy(port=0, tracker_addr=("127.0.0.1", tracker.port)) as px,
    ):

        def queue() -> dict[str, Any]:
            summary = _tracker_call(tracker.port, [TrackerCode.SUMMARY])[1]
            return summary  # type: ignore[no-any-return]

        with _dial(px.port, "server:x") as server:
            wait_for(lambda: queue()["queue_info"].get("x", {}).get("free") == 1, "the PUT")
            assert queue()["server_info"] == [
                {"key": "server:proxy[x]", "addr": ["127.0.0.1", px.port]}
            ]
            reply = _tracker_call(tracker.port, [TrackerCode.REQUEST, "x", "", 1])
            assert reply[0] == TrackerCode.SUCCESS
            host, port, match_key = reply[1]
            assert (host, port) == ("127.0.0.1", px.port)
            assert match_key.startswith("x:")

            with _dial(px.port, "client:x") as stranger:  # a key the tracker never gave out
                assert _reply(stranger) == (RPC_CODE_MISMATCH, None)
            with _dial(px.port, f"client:{match_key} -timeout=5") as cli:
                assert _reply(cli) == (RPC_MAGIC, "server:x")
                assert _reply(server) == (RPC_MAGIC, f"client:{match_key} -timeout=5")
                cli.sendall(b"hello")
                assert recvall(server, 5) == b"hello"


class _EagerProxy(Proxy):
    update_tracker_period = 0.02
    timeout_alloc = 0.0


def test_proxy_replaces_a_handed_out_match_key_that_nobody_used() -> None:
    with (
        Tracker(port=0, silent=True) as tracker,
        _EagerProxy(port=0, tracker_addr=("127.0.0.1", tracker.port)) as px,
    ):

        def free() -> int:
            queue = _tracker_call(tracker.port, [TrackerCode.SUMMARY])[1]["queue_info"]
            return int(queue.get("x", {}).get("free", 0))

        with _dial(px.port, "server:x") as server:
            wait_for(lambda: free() == 1, "the first PUT")
            stale = _tracker_call(tracker.port, [TrackerCode.REQUEST, "x", "", 1])[1][2]
            wait_for(lambda: free() == 1, "a fresh match key to be PUT")
            px.timeout_alloc = 3600.0  # keep the next key long enough to use it
            fresh = _tracker_call(tracker.port, [TrackerCode.REQUEST, "x", "", 1])[1][2]
            assert fresh != stale and fresh.startswith("x:")
            with _dial(px.port, f"client:{stale}") as late:
                assert _reply(late) == (RPC_CODE_MISMATCH, None)
            with _dial(px.port, f"client:{fresh}") as cli:
                assert _reply(cli) == (RPC_MAGIC, "server:x")
                assert _reply(server)[0] == RPC_MAGIC


# ---------------------------------------------------------------------------- TVM interop
# TVM's C++ client keeps the GIL while it waits on its socket, so a proxy or tracker thread in
# the same process would starve: these tests run them as ``pytvm rpc`` subprocesses.


def test_tvm_client_and_tvm_server_talk_through_pytvm_proxy() -> None:
    import cloudpickle  # noqa: F401 - TVM's server needs it
    import tvm.rpc as tvm_rpc

    with service_process("proxy", "--port", "0") as (_, port):
        server = tvm_rpc.Server(host="127.0.0.1", port=port, is_proxy=True, key="x", silent=True)
        try:
            remote = tvm_rpc.connect("127.0.0.1", port, key="x")
            assert remote.get_function("rpc.test.addone")(41) == 42
            assert remote.get_function("rpc.test.strcat")("proxy", 1) == "proxy:1"
            del remote
        finally:
            server.terminate()


def test_tvm_server_behind_pytvm_proxy_is_found_through_pytvm_tracker() -> None:
    import cloudpickle  # noqa: F401 - TVM's server needs it
    import tvm.rpc as tvm_rpc

    with (
        service_process("tracker", "--port", "0", "--silent") as (_, tracker_port),
        service_process("proxy", "--port", "0", "--tracker", f"127.0.0.1:{tracker_port}") as (
            _,
            port,
        ),
    ):
        server = tvm_rpc.Server(host="127.0.0.1", port=port, is_proxy=True, key="y", silent=True)
        try:
            session = tvm_rpc.connect_tracker("127.0.0.1", tracker_port)
            remote = session.request("y", max_retry=2)
            assert remote.get_function("rpc.test.addone")(1) == 2
            del remote
            session.close()
        finally:
            server.terminate()
