"""Raw links to a board's UART: a serial device (termios raw mode) or a TCP socket standing in
for one (an emulator's serial port, a serial-to-network bridge), as :class:`Channel` objects
whose every read waits at most ``timeout`` seconds.

:func:`open_serial_port` takes what ``pytvm.rpc.connect_serial`` takes:

- a serial device path (``/dev/ttyACM0``), opened without pyserial: raw mode (no echo, no line
  editing, no flow control, 8N1) at ``baudrate``;
- a connected :class:`socket.socket`;
- ``"socket://host:port"`` or ``"tcp:host:port"`` (dialled with ``timeout``).

A read that sees nothing for ``timeout`` seconds raises :class:`SerialTimeoutError` naming the
port, so a dead or hung board ends in an error instead of a wait without end.

Examples
--------
>>> import socket
>>> a, b = socket.socketpair()
>>> link = open_serial_port(a, timeout=0.05)
>>> b.sendall(b"ok"); link.recv(2)
b'ok'
>>> try:
...     link.recv(1)
... except SerialTimeoutError as err:
...     print("timed out" in str(err))
True
>>> link.close(); b.close()
"""

from __future__ import annotations

import errno
import os
import re
import select
import socket
import sys

from ...ffi.errors import RPCError
from .channel import Channel

__all__ = ["SerialLinkChannel", "SerialTimeoutError", "open_serial_port", "parse_socket_url"]

_MAX_PORT = 65535
_URL = re.compile(r"^(?:socket://|tcp:)(?P<host>\[[^\]]+\]|[^:/]+):(?P<port>\d+)/?$")


class SerialTimeoutError(RPCError, TimeoutError):
    """A board's link gave no byte within the timeout (the board is dead, hung or too slow)."""


def parse_socket_url(url: str) -> tuple[str, int] | None:
    """``(host, port)`` of ``socket://host:port`` or ``tcp:host:port``; ``None`` for other text."""
    match = _URL.match(url)
    if match is None:
        return None
    host = match.group("host").strip("[]")
    port = int(match.group("port"))
    if not 0 < port <= _MAX_PORT:
        raise ValueError(f"serial link {url!r}: port {port} is outside 1..65535")
    return host, port


class SerialLinkChannel(Channel):
    """A raw link over a file descriptor (a tty or a socket) with a per-read timeout."""

    def __init__(self, fd: int, name: str, timeout: float | None, owner: object = None) -> None:
        if timeout is not None and timeout <= 0:
            raise ValueError(f"serial link {name}: timeout must be positive seconds or None")
        self._fd = fd
        self._owner = owner  # the socket object owning fd, kept alive (and closed) with us
        self.peer = name
        self.timeout = timeout
        self._closed = False

    def _wait(self, readable: bool) -> None:
        if self.timeout is None:
            return
        if readable:
            ready = select.select([self._fd], [], [], self.timeout)[0]
        else:
            ready = select.select([], [self._fd], [], self.timeout)[1]
        if not ready:
            what = "no data from" if readable else "could not write to"
            raise SerialTimeoutError(
                f"serial link {self.peer}: {what} the board for {self.timeout:g} s (timed out); "
                "check that the board runs a pytvm image and is connected to this port, or "
                "raise timeout="
            )

    def send(self, data: bytes | bytearray | memoryview) -> None:
        """Write all of ``data``, each write waiting at most ``timeout`` seconds."""
        view = memoryview(data).cast("B")
        while view:
            self._wait(readable=False)
            try:
                written = os.write(self._fd, view)
            except BlockingIOError:
                continue
            except OSError as err:
                raise ConnectionError(f"serial link {self.peer}: write failed: {err}") from err
            view = view[written:]

    def recv(self, size: int) -> bytes:
        """Up to ``size`` bytes (at least one); ``b""`` once the link is closed."""
        while True:
            self._wait(readable=True)
            try:
                return os.read(self._fd, size)
            except BlockingIOError:
                continue
            except OSError as err:
                if err.errno in (errno.ECONNRESET, errno.EIO):  # peer gone / tty hung up
                    return b""
                raise ConnectionError(f"serial link {self.peer}: read failed: {err}") from err

    def close(self) -> None:
        """Close the link (the socket or the device)."""
        if self._closed:
            return
        self._closed = True
        if isinstance(self._owner, socket.socket):
            try:
                self._owner.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            self._owner.close()
        else:
            os.close(self._fd)


def _open_tty(path: str, baudrate: int, timeout: float | None) -> SerialLinkChannel:
    if sys.platform == "win32":  # pragma: no cover - POSIX only
        raise OSError("serial devices need termios (POSIX); use a socket:// bridge on Windows")
    import termios
    import tty

    speed = getattr(termios, f"B{baudrate}", None)
    if not isinstance(speed, int):
        raise ValueError(f"serial port {path}: baud rate {baudrate} is not one termios offers")
    try:
        fd = os.open(path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
    except OSError as err:
        raise ConnectionError(f"cannot open serial port {path}: {err.strerror}") from err
    try:
        if not os.isatty(fd):
            raise ValueError(f"serial port {path} is not a terminal device")
        tty.setraw(fd)
        attrs = termios.tcgetattr(fd)
        attrs[2] = (attrs[2] | termios.CLOCAL | termios.CREAD) & ~getattr(termios, "CRTSCTS", 0)
        attrs[4] = attrs[5] = speed
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
        termios.tcflush(fd, termios.TCIOFLUSH)
    except BaseException:
        os.close(fd)
        raise
    return SerialLinkChannel(fd, path, timeout)


def _wrap_socket(sock: socket.socket, name: str, timeout: float | None) -> SerialLinkChannel:
    sock.setblocking(False)
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError:
        pass  # not TCP (a Unix socket pair)
    return SerialLinkChannel(sock.fileno(), name, timeout, owner=sock)


def open_serial_port(
    port: str | os.PathLike[str] | socket.socket,
    *,
    baudrate: int = 115200,
    timeout: float | None = 10.0,
) -> SerialLinkChannel:
    """A raw link to a board: a serial device path, a connected socket, or a socket URL."""
    if isinstance(port, socket.socket):
        try:
            host, number = port.getpeername()[:2]
            name = f"socket {host}:{number}"
        except (OSError, ValueError, TypeError):
            name = "socket"
        return _wrap_socket(port, name, timeout)
    if not isinstance(port, (str, os.PathLike)):
        raise TypeError(
            f"serial port {port!r}: expected a device path, a connected socket or "
            "'socket://host:port' / 'tcp:host:port'"
        )
    text = os.fspath(port)
    address = parse_socket_url(text)
    if address is not None:
        try:
            sock = socket.create_connection(address, timeout=timeout)
        except OSError as err:
            raise ConnectionError(f"cannot connect to serial link {text}: {err}") from err
        return _wrap_socket(sock, text, timeout)
    if text.startswith(("socket:", "tcp:")):
        raise ValueError(f"serial link {text!r}: expected socket://host:port or tcp:host:port")
    return _open_tty(text, baudrate, timeout)
