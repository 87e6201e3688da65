"""A listening socket and its buffered connections on an
:class:`~pytvm.rpc.services._event_loop.EventLoop` (the tracker and the proxy), and the port
search every RPC service binds with.

A :class:`SelectorServer` owns one listening socket and the event loop that serves it. Every
accepted socket becomes a :class:`Connection`: a non-blocking, ``TCP_NODELAY`` stream with an
output buffer, so a reply is handed to the kernel in one ``send`` and whatever the kernel does
not take is written when the socket turns writable. All state is touched only by the loop
thread; the public surface (``port``, ``terminate``, ``serve_forever``) is thread-safe.
"""

from __future__ import annotations

import errno
import logging
import selectors
import socket
import sys
import threading
from collections.abc import Callable
from typing import TypeVar

from ...ffi.errors import TVMValueError
from ..wire.base import set_nodelay
from ._event_loop import EventLoop, Timer

__all__ = ["Connection", "SelectorServer", "bind_first_free_port", "default_port_end"]

logger = logging.getLogger("pytvm.rpc")

_ServerT = TypeVar("_ServerT", bound="SelectorServer")

#: Bytes asked of the kernel per ``recv``; large so bulk forwarding takes few system calls.
RECV_BYTES = 1 << 18


#: TVM's default ``port_end`` for servers, trackers and proxies.
TVM_PORT_END = 9199
#: Ports searched past ``port`` when no ``port_end`` is given and TVM's range would be empty.
PORT_SEARCH = 100


def default_port_end(port: int) -> int:
    """The end of the port range when none is given: TVM's 9199, or ``port + 100`` when that
    is further (so ``--port 9300`` alone searches ``[9300, 9400)``).
    """
    return max(TVM_PORT_END, port + PORT_SEARCH)


def bind_first_free_port(
    host: str, port: int, port_end: int | None = None, reuse_addr: bool = True
) -> socket.socket:
    """A listening TCP socket on the first free port of ``[port, port_end)`` at ``host``.

    ``port=0`` asks the kernel for any free port; ``port_end`` None: :func:`default_port_end`;
    ``reuse_addr`` sets ``SO_REUSEADDR`` (never on Windows). A port other than ``port`` is
    logged (servers register with a tracker by port). Raises ``OSError`` naming the range when
    every port is taken, ``TVMValueError`` for an empty range.
    """
    if port_end is None:
        port_end = default_port_end(port)
    if port and port_end <= port:
        raise TVMValueError(
            f"empty port range [{port}, {port_end}): port_end must be above port (or leave it "
            f"out for [{port}, {default_port_end(port)}))"
        )
    family = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0][0]
    candidates = [0] if port == 0 else range(port, port_end)
    for candidate in candidates:
        sock = socket.socket(family, socket.SOCK_STREAM)
        if reuse_addr and sys.platform != "win32":
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, candidate))
        except OSError as err:
            sock.close()
            if err.errno in (errno.EADDRINUSE, errno.EACCES):
                continue
            raise
        sock.listen(1024)  # a burst of clients waits in the backlog, not in SYN retries
        if port and candidate != port:
            logger.warning("port %d on %s is busy; listening on port %d", port, host, candidate)
        return sock
    raise OSError(
        errno.EADDRINUSE,
        f"cannot bind to any port in [{port}, {port_end}) on {host}; "
        "free one or pass a different port range",
    )


class Connection:
    """One accepted, non-blocking connection of a :class:`SelectorServer`.

    Subclasses override :meth:`on_data` (bytes received), :meth:`on_close` (after the socket is
    closed) and optionally :meth:`on_drained` (the output buffer became empty).
    """

    def __init__(self, server: SelectorServer, sock: socket.socket, addr: tuple[str, int]) -> None:
        sock.setblocking(False)
        set_nodelay(sock)
        self.server = server
        self.sock = sock
        self.addr = addr
        self.out = bytearray()
        self.closed = False
        self._reading = True
        self._close_when_drained = False
        self._mask = selectors.EVENT_READ
        server.loop.watch(sock, selectors.EVENT_READ, self.handle_event)

    # --------------------------------------------------------------- hooks
    def on_data(self, data: bytes) -> None:
        """Called with every chunk received."""

    def on_close(self) -> None:
        """Called once, after the socket is closed."""

    def on_drained(self) -> None:
        """Called when the output buffer has been fully written."""

    # --------------------------------------------------------------- output
    def write(self, data: bytes) -> bool:
        """Queue ``data``, trying one ``send`` first; False if the connection is closed or
        broken.
        """
        if self.closed:
            return False
        if not self.out:
            try:
                sent = self.sock.send(data)
            except (BlockingIOError, InterruptedError):
                sent = 0
            except OSError as err:
                logger.info("send to %s failed: %s", self.addr, err)
                self.server.close_later(self)
                return False
            if sent == len(data):
                return True
            self.out += memoryview(data)[sent:]
            self._update_interest()
        else:
            self.out += data
        return True

    def close_after_flush(self) -> None:
        """Stop reading and close once everything queued has been written."""
        if self.closed:
            return
        if not self.out:
            self.close()
            return
        self._close_when_drained = True
        self._reading = False
        self._update_interest()

    def pause_reading(self) -> None:
        """Stop reading (back-pressure) until :meth:`resume_reading`."""
        if self._reading and not self.closed:
            self._reading = False
            self._update_interest()

    def resume_reading(self) -> None:
        """Read again after :meth:`pause_reading`."""
        if not self._reading and not self.closed and not self._close_when_drained:
            self._reading = True
            self._update_interest()

    def close(self) -> None:
        """Close the socket now (idempotent) and call :meth:`on_close`."""
        if self.closed:
            return
        self.closed = True
        if self._mask:
            self.server.loop.unwatch(self.sock)
        self._mask = 0
        self.sock.close()
        self.server._connections.discard(self)
        self.out.clear()
        self.on_close()

    # --------------------------------------------------------------- loop side
    def _update_interest(self) -> None:
        if self.closed:
            return
        mask = (selectors.EVENT_READ if self._reading else 0) | (
            selectors.EVENT_WRITE if self.out else 0
        )
        if mask == self._mask:
            return
        if mask:
            self.server.loop.watch(self.sock, mask, self.handle_event)
        else:
            self.server.loop.unwatch(self.sock)  # paused with nothing to write: wait for resume
        self._mask = mask

    def flush_now(self, timeout: float) -> None:
        """Write what is queued with a blocking send bounded by ``timeout`` (shutdown only)."""
        if self.closed or not self.out:
            return
        try:
            self.sock.settimeout(timeout)
            self.sock.sendall(self.out)
        except OSError:
            pass
        self.out.clear()

    def handle_event(self, mask: int) -> None:
        """Dispatch a selector event (loop thread only)."""
        if mask & selectors.EVENT_WRITE:
            self._flush()
        if mask & selectors.EVENT_READ and self._reading and not self.closed:
            self._read()

    def _read(self) -> None:
        try:
            data = self.sock.recv(RECV_BYTES)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as err:
            logger.info("recv from %s failed: %s", self.addr, err)
            self.close()
            return
        if not data:
            self.close()
            return
        self.on_data(data)

    def _flush(self) -> None:
        if self.closed:
            return
        try:
            sent = self.sock.send(self.out)
        except (BlockingIOError, InterruptedError):
            return
        except OSError as err:
            logger.info("send to %s failed: %s", self.addr, err)
            self.close()
            return
        del self.out[:sent]
        if self.out:
            return
        if self._close_when_drained:
            self.close()
            return
        self._update_interest()
        self.on_drained()


class SelectorServer:
    """A listening socket served by an :class:`~pytvm.rpc.services._event_loop.EventLoop`.

    Subclasses build their state, then call :meth:`_start`; they override :meth:`_accepted` to
    wrap a new socket into a :class:`Connection`, and may override :meth:`_shutdown_hook`.
    """

    def __init__(
        self, host: str, port: int, port_end: int | None, name: str, reuse_addr: bool = True
    ) -> None:
        self._listen = bind_first_free_port(host, port, port_end, reuse_addr)
        self._listen.setblocking(False)
        self.host = host
        self.port: int = self._listen.getsockname()[1]
        self._name = name
        self.loop = EventLoop(name, on_stop=self._on_loop_stop)
        self.loop.add_reader(self._listen, self._accept_all)
        self._connections: set[Connection] = set()
        self._close_lock = threading.Lock()
        self._closed = False

    def _start(self) -> None:
        self.loop.start()

    # --------------------------------------------------------------- public
    def terminate(self) -> None:
        """Stop the loop, join its thread and close every socket (idempotent)."""
        self.loop.stop()
        if self.loop.in_loop_thread():
            return  # the loop closes everything itself when it returns
        self.loop.join()
        self._close_all()

    def serve_forever(self) -> None:
        """Block until the server is terminated (by :meth:`terminate` or by the protocol)."""
        self.loop.join()
        self.terminate()

    def __enter__(self: _ServerT) -> _ServerT:
        return self

    def __exit__(self, *exc: object) -> None:
        self.terminate()

    # --------------------------------------------------------------- loop helpers
    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` on the loop thread after ``delay`` seconds."""
        return self.loop.call_later(delay, callback)

    def close_later(self, connection: Connection) -> None:
        """Close ``connection`` once the current callback has returned (safe inside callbacks)."""
        self.loop.call_soon(connection.close)

    def stop_soon(self) -> None:
        """Ask the loop to exit after the current callback (loop thread or any other)."""
        self.loop.stop()

    def _accepted(self, sock: socket.socket, addr: tuple[str, int]) -> Connection:
        raise NotImplementedError

    def _shutdown_hook(self) -> None:
        """Called on the loop thread right before every socket is closed."""

    # --------------------------------------------------------------- loop
    def _on_loop_stop(self) -> None:
        try:
            self._shutdown_hook()
        except Exception:
            logger.exception("%s: shutdown failed", self._name)
        self._close_all()

    def _accept_all(self) -> None:
        while True:
            try:
                sock, addr = self._listen.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:
                logger.warning("%s: accept failed: %s", self._name, err)
                return
            connection = self._accepted(sock, addr)
            self._connections.add(connection)

    def _close_all(self) -> None:
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        for connection in list(self._connections):
            connection.flush_now(timeout=1.0)
            connection.close()
        self._connections.clear()
        self.loop.unwatch(self._listen)
        self._listen.close()
