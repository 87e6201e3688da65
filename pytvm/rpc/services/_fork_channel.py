"""The control channel between an RPC server and its fork server: framed messages with descriptors.

One ``AF_UNIX`` stream socket carries messages both ways. A message is a ``(kind, body)`` pair
pickled and prefixed with its length (4 bytes, little-endian); ``body`` holds plain data (str,
int, float, bool, None, bytes, lists and dicts of them). Descriptors (``SCM_RIGHTS``) travel with
the first byte of their message, so a reader that keeps them in arrival order and lets each
message take its own count pairs them up correctly however the byte stream is cut.

Messages, server -> fork server: ``configure`` (once, first), ``registry`` (global function
changes), ``spawn`` (fork a session worker). Fork server -> server: ``hello`` (ready, with its
global functions), ``fatal`` (it could not start), ``spawned`` (+ 2 descriptors: the server's end
of the worker's control socket and the worker's pidfd), ``spawn_failed``, ``exit`` (a reaped
worker's exit code, negative for a signal), ``unshipped`` (a global function it could not load),
``warning``. Closing the socket shuts the fork server down. :mod:`.fork_server` documents the
bodies.
"""

from __future__ import annotations

import array
import os
import pickle
import socket
import struct
from collections import deque
from typing import Any

__all__ = ["FrameReader", "Outbox", "encode", "send"]

_LEN = struct.Struct("<I")
#: Descriptors one read may bring at most (a message carries 2).
_MAX_FDS = 16
_FD_BYTES = array.array("i").itemsize


def encode(kind: str, body: Any = None) -> bytes:
    """One framed message."""
    data = pickle.dumps((kind, body), protocol=pickle.HIGHEST_PROTOCOL)
    return _LEN.pack(len(data)) + data


def _rights(fds: list[int]) -> list[tuple[int, int, bytes]]:
    if not fds:
        return []
    return [(socket.SOL_SOCKET, socket.SCM_RIGHTS, array.array("i", fds).tobytes())]


def send(sock: socket.socket, kind: str, body: Any = None) -> None:
    """Send one message on a blocking socket (no descriptors)."""
    sock.sendall(encode(kind, body))


class FrameReader:
    """Reassembles messages, and the descriptors that came with them, from a stream socket."""

    def __init__(self) -> None:
        self._buf = bytearray()
        self._fds: deque[int] = deque()

    def fill(self, sock: socket.socket, flags: int = 0) -> bool:
        """Read once (``flags``: e.g. ``MSG_DONTWAIT``); False at end of stream.
        ``BlockingIOError`` passes through.
        """
        data, ancdata, _, _ = sock.recvmsg(1 << 16, socket.CMSG_SPACE(_MAX_FDS * _FD_BYTES), flags)
        for level, kind, raw in ancdata:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds = array.array("i")
                fds.frombytes(raw[: len(raw) - len(raw) % _FD_BYTES])
                self._fds.extend(fds)
        self._buf += data
        return bool(data)

    def messages(self) -> list[tuple[str, Any]]:
        """The complete messages read so far, in order."""
        out = []
        while len(self._buf) >= _LEN.size:
            (size,) = _LEN.unpack_from(self._buf)
            if len(self._buf) < _LEN.size + size:
                break
            kind, body = pickle.loads(bytes(self._buf[_LEN.size : _LEN.size + size]))
            del self._buf[: _LEN.size + size]
            out.append((str(kind), body))
        return out

    def take_fds(self, count: int) -> list[int]:
        """The next ``count`` descriptors received (they belong to the message just read)."""
        if len(self._fds) < count:
            raise OSError(f"a control message lost its descriptors ({len(self._fds)} of {count})")
        return [self._fds.popleft() for _ in range(count)]

    def close(self) -> None:
        """Close descriptors nobody took."""
        while self._fds:
            os.close(self._fds.popleft())


class Outbox:
    """Messages waiting for a non-blocking socket to take them, so the sender never blocks.

    A message may carry descriptors, and objects to close once they have been sent.
    """

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self._queue: deque[tuple[bytes, list[int], list[Any]]] = deque()

    def put(
        self, kind: str, body: Any = None, fds: tuple[int, ...] = (), close: tuple[Any, ...] = ()
    ) -> None:
        """Queue one message (``close``: objects with ``close()`` to call once it is sent)."""
        self._queue.append((encode(kind, body), list(fds), list(close)))

    def __bool__(self) -> bool:
        return bool(self._queue)

    def flush(self) -> None:
        """Send what the socket takes now. ``OSError`` (but ``BlockingIOError``) passes through."""
        while self._queue:
            data, fds, close = self._queue[0]
            try:
                sent = self.sock.sendmsg([data], _rights(fds), socket.MSG_DONTWAIT)
            except BlockingIOError:
                return
            for obj in close:  # the descriptors went with the first bytes
                obj.close()
            if sent < len(data):
                self._queue[0] = (data[sent:], [], [])
            else:
                self._queue.popleft()

    def pending(self) -> list[Any]:
        """The objects still waiting to be closed (a forked child closes them)."""
        return [obj for _, _, close in self._queue for obj in close]
