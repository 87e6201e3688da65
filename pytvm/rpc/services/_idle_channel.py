"""A served connection with an idle limit: a client must send each complete request within
``idle_timeout`` seconds of the session's start or of the server's previous reply, so one that
drips a byte now and then cannot hold a session (and its process) forever.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Sequence

from ..wire.channel import SocketChannel
from ..wire.protocol import encode_exception

__all__ = ["IdleLimitChannel", "IdleTimeout", "session_channel"]

logger = logging.getLogger("pytvm.rpc.server")


class IdleTimeout(ConnectionAbortedError):
    """The client sent no complete request within the server's ``idle_timeout``."""


class IdleLimitChannel(SocketChannel):
    """A :class:`SocketChannel` whose reads stop at a deadline that each send moves forward.

    The server sends exactly one reply per request, so "``idle_timeout`` after the last send"
    is "the next request must be complete by then". A long computation is not idle time: the
    deadline only bounds the waits for the client's bytes.
    """

    def __init__(self, sock: socket.socket, idle_timeout: float) -> None:
        super().__init__(sock)
        self.idle_timeout = idle_timeout
        self._deadline = time.monotonic() + idle_timeout

    def send(self, data: bytes | bytearray | memoryview) -> None:
        self.sock.settimeout(None)
        super().send(data)
        self._deadline = time.monotonic() + self.idle_timeout

    def send_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        self.sock.settimeout(None)
        super().send_parts(parts)
        self._deadline = time.monotonic() + self.idle_timeout

    def recv(self, size: int) -> bytes:
        self._arm()
        try:
            return self.sock.recv(size)
        except TimeoutError:
            raise self._expired() from None

    def recv_into(self, view: memoryview) -> int:
        self._arm()
        try:
            return self.sock.recv_into(view)
        except TimeoutError:
            raise self._expired() from None

    def _arm(self) -> None:
        left = self._deadline - time.monotonic()
        if left <= 0:
            raise self._expired()
        self.sock.settimeout(left)

    def _expired(self) -> IdleTimeout:
        """Tell the client why (best effort), log it, and return the error that ends serving."""
        text = (
            f"RPCSessionTimeoutError: no complete request for {self.idle_timeout:g} s "
            "(the server's idle_timeout); session closed"
        )
        logger.warning("rpc session for %s: %s", self.peer, text.split(": ", 1)[1])
        try:
            self.sock.settimeout(1.0)
            self.sock.sendall(encode_exception(text))
        except OSError:
            pass
        return IdleTimeout(text)


def session_channel(sock: socket.socket, idle_timeout: float | None) -> SocketChannel:
    """The channel a worker serves ``sock`` on: idle-limited when ``idle_timeout`` is set."""
    if idle_timeout:
        return IdleLimitChannel(sock, idle_timeout)
    return SocketChannel(sock)
