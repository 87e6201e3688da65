"""A request cut off halfway (Ctrl-C during a copy or a call) breaks the session at once
instead of leaving the next request hanging on a stream that is out of step.
"""

from __future__ import annotations

import gc
import re
import signal
import socket
import struct
from collections.abc import Iterator, Sequence

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.ffi.errors import RPCSessionBrokenError
from pytvm.rpc.sessions.forwarding_session import connect_channel
from pytvm.rpc.wire.base import RPC_MAGIC, recv_key, recvall, send_key
from pytvm.rpc.wire.channel import Channel, SocketChannel
from pytvm.testing.rpc import thread_server

PACKET = 4096  # the server's packet size here: copies are split, and pipelined when sent
TIMEOUT = 20.0  # a hang shows as a TimeoutError, never as a stuck test


class Tripwire(Channel):
    """A socket channel that interrupts the caller once an armed byte budget runs out: after
    sending ``send_budget`` more bytes (the cut falls inside a packet), or when a receive would
    go past ``recv_budget`` more bytes. ``with_signal`` delivers a real SIGINT to this process
    instead of raising ``KeyboardInterrupt`` directly.
    """

    def __init__(self, inner: SocketChannel) -> None:
        self.inner, self.peer = inner, inner.peer
        self.send_budget: int | None = None
        self.recv_budget: int | None = None
        self.with_signal = False

    def _trip(self) -> None:
        self.send_budget = self.recv_budget = None
        if self.with_signal:
            signal.raise_signal(signal.SIGINT)  # the default handler raises KeyboardInterrupt
        raise KeyboardInterrupt

    def send(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        if self.send_budget is not None:
            if len(view) > self.send_budget:
                self.inner.send(view[: self.send_budget])
                self._trip()
            self.send_budget -= len(view)
        self.inner.send(view)

    def send_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        for part in parts:
            self.send(part)

    def _allow(self, size: int) -> int:
        if self.recv_budget is None:
            return size
        if self.recv_budget == 0:
            self._trip()
        return min(size, self.recv_budget)

    def _spent(self, n: int) -> None:
        if self.recv_budget is not None:
            self.recv_budget -= n

    def recv(self, size: int) -> bytes:
        data = self.inner.recv(self._allow(size))
        self._spent(len(data))
        return data

    def recv_into(self, view: memoryview) -> int:
        n = self.inner.recv_into(view[: self._allow(len(view))])
        self._spent(n)
        return n

    def close(self) -> None:
        self.inner.close()


def _dial(port: int) -> SocketChannel:
    """A handshaken loopback channel whose every wait is bounded by TIMEOUT."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    send_key(sock, RPC_MAGIC, "client:")
    assert struct.unpack("<i", recvall(sock, 4))[0] == RPC_MAGIC
    recv_key(sock)
    return SocketChannel(sock)


@pytest.fixture(scope="module", autouse=True)
def _functions() -> Iterator[None]:
    pytvm.register_func("tvm.rpc.server.GetCRTMaxPacketSize", lambda: PACKET, override=True)
    pytvm.register_func("test.interrupt.add", lambda a, b: a + b, override=True)
    pytvm.register_func("test.interrupt.size", len, override=True)
    yield
    for name in ("tvm.rpc.server.GetCRTMaxPacketSize", "test.interrupt.add", "test.interrupt.size"):
        pytvm.remove_global_func(name)


@pytest.fixture()
def server() -> Iterator[int]:
    """A server for two sessions, one after the other: the second one proves the server let
    go of the first (broken) one.
    """
    with thread_server(sessions=2) as port:
        yield port


def _session(port: int) -> tuple[rpc.RPCSession, Tripwire]:
    """A session whose packet size is known and whose queued frees are flushed, so an armed
    budget is spent by the request under test alone.
    """
    wire = Tripwire(_dial(port))
    sess = rpc.RPCSession(connect_channel(wire, f"127.0.0.1:{port}"))
    add = sess.get_function("test.interrupt.add")
    assert pytvm.nd.array(np.ones(4, "uint8"), sess.cpu()).numpy().sum() == 4
    gc.collect()
    assert add(1, 2) == 3  # sends the queued frees first
    return sess, wire


def _assert_broken(sess: rpc.RPCSession, port: int, what: str) -> None:
    """Every later request fails at once naming what was cut off; close() returns; the server
    serves a new session.
    """
    message = (
        rf"^RPC session to 127\.0\.0\.1:{port} is broken: {re.escape(what)} was interrupted by "
        r"KeyboardInterrupt; open a new session$"
    )
    with pytest.raises(RPCSessionBrokenError, match=message):
        sess.get_function("test.interrupt.add")
    with pytest.raises(RPCSessionBrokenError, match=message):
        pytvm.nd.array(np.ones(8, "float32"), sess.cpu())
    sess.close()
    fresh = rpc.RPCSession(connect_channel(_dial(port), "fresh"))
    assert fresh.get_function("test.interrupt.add")(2, 3) == 5
    fresh.close()


def test_copy_to_remote_cut_inside_a_packet_breaks_the_session(server: int) -> None:
    sess, wire = _session(server)
    a = pytvm.nd.empty((64 << 10,), "uint8", sess.cpu())
    wire.send_budget = 2 * PACKET + 100  # inside the third packet, two sent before it
    with pytest.raises(KeyboardInterrupt):
        a.copyfrom(np.ones(64 << 10, "uint8"))
    _assert_broken(sess, server, f"a copy of {64 << 10} bytes to the remote")


def test_copy_to_remote_cut_with_packets_in_flight_breaks_the_session(server: int) -> None:
    sess, wire = _session(server)
    a = pytvm.nd.empty((64 << 10,), "uint8", sess.cpu())
    wire.recv_budget = 0  # two packets sent, the first reply awaited
    with pytest.raises(KeyboardInterrupt):
        a.copyfrom(np.ones(64 << 10, "uint8"))
    _assert_broken(sess, server, f"a copy of {64 << 10} bytes to the remote")


def test_copy_from_remote_cut_inside_the_data_breaks_the_session(server: int) -> None:
    sess, wire = _session(server)
    a = pytvm.nd.array(np.ones(64 << 10, "uint8"), sess.cpu())
    wire.recv_budget = PACKET + 1000  # inside the second reply's data
    with pytest.raises(KeyboardInterrupt):
        a.numpy()
    _assert_broken(sess, server, f"a copy of {64 << 10} bytes from the remote")


def test_call_cut_while_sending_its_arguments_breaks_the_session(server: int) -> None:
    sess, wire = _session(server)
    size = sess.get_function("test.interrupt.size")
    wire.send_budget = 1000
    wire.with_signal = True  # a real Ctrl-C
    with pytest.raises(KeyboardInterrupt):
        size(bytes(100_000))
    _assert_broken(sess, server, f"a kCallFunc request (function {hex(size.remote_handle)})")


def test_call_cut_while_awaiting_its_reply_breaks_the_session(server: int) -> None:
    sess, wire = _session(server)
    add = sess.get_function("test.interrupt.add")
    wire.recv_budget = 0
    with pytest.raises(KeyboardInterrupt):
        add(1, 2)
    _assert_broken(sess, server, f"a kCallFunc request (function {hex(add.remote_handle)})")


def test_error_reply_leaves_the_session_usable(server: int) -> None:
    sess, _ = _session(server)
    with pytest.raises(TypeError):
        sess.get_function("test.interrupt.add")(1, "x")
    assert sess.get_function("test.interrupt.add")(1, 2) == 3
    sess.close()
