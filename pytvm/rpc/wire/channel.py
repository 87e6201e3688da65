"""Channels: the byte pipes an RPC endpoint talks through (socket, pipe pair, in-memory, custom).

A transport plugs into the RPC stack by implementing :class:`Channel` -- ``send`` all bytes,
``recv`` up to ``n`` bytes (``b""`` at end of stream), ``close``. That is the whole contract, the
same as TVM's ``RPCChannel``; an accelerator transport (seed 000's ``HexagonTransportChannel``
over ``open/send/receive/close``) is a subclass of it.

Examples
--------
>>> a, b = memory_pair()
>>> a.send(b"ping"); b.recv(16)
b'ping'
"""

from __future__ import annotations

import os
import select
import socket
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

__all__ = [
    "Channel",
    "MemoryChannel",
    "PipeChannel",
    "SocketChannel",
    "memory_pair",
    "popen_pipe",
    "reap",
]


class Channel:
    """A reliable, ordered byte stream. Subclasses implement ``send``, ``recv`` and ``close``."""

    #: What the channel connects to, for error messages (e.g. ``"127.0.0.1:9090"``).
    peer: str = "?"

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Send all of ``data`` (block until it is handed to the transport)."""
        raise NotImplementedError

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes, at least one; ``b""`` when the peer closed the stream."""
        raise NotImplementedError

    def recv_into(self, view: memoryview) -> int:
        """Receive into ``view``; the number of bytes written, 0 at end of stream.

        Transports that can write straight into memory override this (copies of large tensors
        then land in place without an intermediate buffer).
        """
        data = self.recv(len(view))
        view[: len(data)] = data
        return len(data)

    def send_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """Send several buffers as one message (a gathered write where the transport has one)."""
        for part in parts:
            if len(part):
                self.send(part)

    def close(self) -> None:
        """Release the transport; later calls fail."""

    def __enter__(self) -> Channel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SocketChannel(Channel):
    """A connected stream socket (TCP or Unix)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        try:
            host, port = sock.getpeername()[:2]
            self.peer = f"{host}:{port}"
        except (OSError, ValueError, TypeError):
            self.peer = "socket"

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Send all of ``data`` on the socket."""
        self.sock.sendall(data)

    def send_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        """Send ``parts``: joined into one write when small, else one write each."""
        if sum(len(p) for p in parts) < (1 << 16):
            self.sock.sendall(b"".join(parts))
            return
        for part in parts:
            self.sock.sendall(part)

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes from the socket; ``b""`` when the peer closed it."""
        return self.sock.recv(size)

    def recv_into(self, view: memoryview) -> int:
        """Receive into ``view``; the number of bytes written, 0 at end of stream."""
        return self.sock.recv_into(view)

    def close(self) -> None:
        """Shut the socket down both ways and close it."""
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


class PipeChannel(Channel):
    """Two file descriptors: one read, one written (``rpc.PopenSession``'s convention).

    ``timeout`` (seconds; None: wait forever, TVM's behaviour) bounds each read: a peer that
    sends nothing for that long raises ``TimeoutError`` naming it.
    """

    def __init__(
        self, read_fd: int, write_fd: int, peer: str = "pipe", timeout: float | None = None
    ) -> None:
        self.read_fd, self.write_fd, self.peer = read_fd, write_fd, peer
        self.timeout = timeout

    def _wait_readable(self) -> None:
        if self.timeout is None:
            return
        ready, _, _ = select.select([self.read_fd], [], [], self.timeout)
        if not ready:
            raise TimeoutError(f"{self.peer}: no reply within {self.timeout:g} s")

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Write all of ``data`` to the write descriptor."""
        view = memoryview(data).cast("B")
        while len(view):
            view = view[os.write(self.write_fd, view) :]

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes from the read descriptor; ``b""`` at end of file."""
        self._wait_readable()
        return os.read(self.read_fd, size)

    def recv_into(self, view: memoryview) -> int:
        """Read into ``view``; the number of bytes written, 0 at end of file."""
        self._wait_readable()
        return os.readv(self.read_fd, [view])

    def close(self) -> None:
        """Close both descriptors (once each when they are the same)."""
        for fd in {self.read_fd, self.write_fd}:
            try:
                os.close(fd)
            except OSError:
                pass


class MemoryChannel(Channel):
    """One end of an in-process byte pipe (see :func:`memory_pair`); thread-safe."""

    def __init__(self, inbox: _Buffer, outbox: _Buffer, peer: str) -> None:
        self._inbox, self._outbox, self.peer = inbox, outbox, peer

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Queue a copy of ``data`` for the other end."""
        self._outbox.put(bytes(data))

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes from the other end; ``b""`` once it closed."""
        return self._inbox.get(size)

    def close(self) -> None:
        """Mark both directions closed, waking blocked readers."""
        self._outbox.close()
        self._inbox.close()


class _Buffer:
    """A byte FIFO with blocking reads and an end-of-stream mark."""

    def __init__(self) -> None:
        self._data = bytearray()
        self._closed = False
        self._cond = threading.Condition()

    def put(self, data: bytes) -> None:
        with self._cond:
            if self._closed:
                raise BrokenPipeError("in-memory channel is closed")
            self._data += data
            self._cond.notify_all()

    def get(self, size: int) -> bytes:
        with self._cond:
            while not self._data and not self._closed:
                self._cond.wait()
            out = bytes(self._data[:size])
            del self._data[:size]
            return out

    def close(self) -> None:
        with self._cond:
            self._closed = True
            self._cond.notify_all()


def memory_pair() -> tuple[MemoryChannel, MemoryChannel]:
    """Two connected in-memory channels (what one sends, the other receives)."""
    a_to_b, b_to_a = _Buffer(), _Buffer()
    return MemoryChannel(b_to_a, a_to_b, "memory:b"), MemoryChannel(a_to_b, b_to_a, "memory:a")


def popen_pipe(
    argv: Sequence[str], pass_fds: Sequence[int] = (), timeout: float | None = None
) -> tuple[PipeChannel, subprocess.Popen[bytes]]:
    """Start ``argv + [read_fd, write_fd]`` with two pipes, the ``PopenSession`` convention.

    The child reads requests from its ``read_fd`` and writes replies to its ``write_fd``;
    ``pass_fds`` are further descriptors it inherits under the same numbers; ``timeout``
    bounds each read of the channel (:class:`PipeChannel`).
    Returns the parent's channel and the process.
    """
    child_read, parent_write = os.pipe()
    parent_read, child_write = os.pipe()
    try:
        proc = subprocess.Popen(
            [*argv, str(child_read), str(child_write)],
            pass_fds=(child_read, child_write, *pass_fds),
        )
    except OSError:
        for fd in (child_read, parent_write, parent_read, child_write):
            os.close(fd)
        raise
    os.close(child_read)
    os.close(child_write)
    peer = f"process {proc.pid} ({argv[0]})"
    return PipeChannel(parent_read, parent_write, peer=peer, timeout=timeout), proc


def reap(proc: subprocess.Popen[Any], timeout: float = 5.0, terminate: bool = False) -> None:
    """Wait for ``proc`` (after SIGTERM if ``terminate``); SIGKILL it if ``timeout`` runs out.
    Its stdout pipe, if any, is closed.
    """
    if terminate:
        proc.terminate()
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    if proc.stdout is not None:
        proc.stdout.close()
