"""Transports of microTVM sessions (TVM v0.18's ``tvm.micro.transport``): how a
:class:`~pytvm.micro.Session` reaches the RPC server of a device.

A transport is opened by its project (``GeneratedProject.transport()``, a context manager) and
asked once for an RPC session; closing it ends the device (the process, the emulator).

``Transport``
    TVM's byte transport, for users' own links: ``open``, ``close``, ``read(n, timeout_sec)``,
    ``write(data, timeout_sec)``, ``timeouts()``; a context manager. ``Session(transport)``
    runs the serial framing and handshake of ``rpc.connect_serial`` over its bytes.
    :class:`TransportLogger` wraps one and logs every call (hex dumps of the bytes).
``HostTransport``
    A device process (the ``host`` template's ``build/device``) started with two pipes, as
    ``rpc.PopenSession`` does; raw MinRPC on the pipes.
``SerialTransport``
    A byte link to a board's UART (e.g. QEMU's, from ``pytvm.crt.qemu.QemuBoard``), with the
    serial framing and handshake of ``rpc.connect_serial``.
"""

from __future__ import annotations

import abc
import logging
import os
import string
from collections.abc import Callable
from types import TracebackType
from typing import Any

from ..ffi.errors import TVMValueError
from ..rpc import RPCSession
from ..rpc.sessions.forwarding_session import connect_channel, popen_session
from ..rpc.wire.channel import Channel
from ..rpc.wire.serial_channel import SerialChannel
from ..rpc.wire.serial_port import SerialTimeoutError
from .project_api.server import IoTimeoutError, TransportClosedError, TransportTimeouts

__all__ = [
    "HostTransport",
    "IoTimeoutError",
    "SerialTransport",
    "SessionTransport",
    "Transport",
    "TransportClosedError",
    "TransportLogger",
    "TransportTimeouts",
]

_LOG = logging.getLogger(__name__)


class SessionTransport(abc.ABC):
    """How a session reaches a device's RPC server: it opens the RPC session itself."""

    def timeouts(self) -> TransportTimeouts:
        """The transport's default timeouts."""
        return TransportTimeouts()

    @abc.abstractmethod
    def open_session(self, session_name: str, timeouts: TransportTimeouts) -> RPCSession:
        """Start the RPC session with the device (once per transport)."""

    @abc.abstractmethod
    def close(self) -> None:
        """End the device side (idempotent)."""


class Transport(SessionTransport):
    """TVM's byte transport to a device: subclasses implement ``timeouts``, ``open``,
    ``close``, ``read`` and ``write``; the session runs pytvm's serial framing over the bytes
    (the device runs a pytvm board image, e.g. ``make -C pytvm/src/crt board-image``).
    """

    def __enter__(self) -> Transport:
        self.open()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc_value: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @abc.abstractmethod
    def timeouts(self) -> TransportTimeouts:
        """The timeouts a session uses with this transport."""

    @abc.abstractmethod
    def open(self) -> None:
        """Open the link (after this, ``read``/``write`` work)."""

    @abc.abstractmethod
    def close(self) -> None:
        """Close the link; later ``read``/``write`` raise :class:`TransportClosedError`."""

    @abc.abstractmethod
    def read(self, n: int, timeout_sec: float | None) -> bytes:
        """Between 1 and ``n`` bytes; :class:`IoTimeoutError` when none came within
        ``timeout_sec`` (``None``: wait for ever), :class:`TransportClosedError` when closed.
        """

    @abc.abstractmethod
    def write(self, data: bytes, timeout_sec: float | None) -> int:
        """Write some of ``data`` (at least one byte); the number written. Raises as ``read``."""

    def open_session(self, session_name: str, timeouts: TransportTimeouts) -> RPCSession:
        """The RPC session over this open transport: serial framing, handshake, MinRPC."""
        link = _TransportChannel(self, session_name, timeouts.session_start_timeout_sec)
        channel = SerialChannel(link)
        try:
            session = connect_channel(channel, session_name)
        except BaseException:
            channel.close()
            raise
        link.timeout = timeouts.session_established_timeout_sec
        return RPCSession(session)


class _TransportChannel(Channel):
    """A :class:`Transport`'s bytes as a channel (the raw link under the serial framing)."""

    def __init__(self, transport: Transport, name: str, timeout: float) -> None:
        self.transport, self.peer, self.timeout = transport, f"transport {name}", timeout

    def send(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(bytes(data))
        while view:
            try:
                sent = self.transport.write(bytes(view), self.timeout)
            except IoTimeoutError as err:
                raise SerialTimeoutError(
                    f"{self.peer}: writing to the device for {self.timeout:g} s (timed out)"
                ) from err
            except TransportClosedError as err:
                raise ConnectionError(f"{self.peer}: closed") from err
            if sent <= 0:
                raise ConnectionError(f"{self.peer}: write returned {sent}")
            view = view[sent:]

    def recv(self, size: int) -> bytes:
        try:
            return bytes(self.transport.read(size, self.timeout))
        except IoTimeoutError as err:
            raise SerialTimeoutError(
                f"{self.peer}: no byte from the device for {self.timeout:g} s (timed out)"
            ) from err
        except TransportClosedError:
            return b""

    def close(self) -> None:
        """Nothing: the transport is closed by its owner (the session's context manager)."""


_PRINTABLE = frozenset(string.ascii_letters + string.digits + string.punctuation + " ")


def _hex_rows(data: bytes) -> list[tuple[str, str]]:
    rows = []
    for start in range(0, len(data), 16):
        chunk = data[start : start + 16]
        text = "".join(chr(b) if chr(b) in _PRINTABLE else "." for b in chunk)
        rows.append((" ".join(f"{b:02x}" for b in chunk).ljust(47), text))
    return rows


def _dump(data: bytes) -> str:
    """One line for up to 16 bytes, else a line per 16 bytes with its offset."""
    rows = _hex_rows(data)
    if len(rows) <= 1:
        hex_text, text = rows[0] if rows else ("".ljust(47), "")
        return f" {hex_text}  {text}"
    return "\n" + "\n".join(f"{16 * i:04x}  {h}  {t}" for i, (h, t) in enumerate(rows))


def _timeout_text(timeout_sec: float | None) -> str:
    return "{ None }" if timeout_sec is None else f"{{{timeout_sec:5.2f}s}}"


class TransportLogger(Transport):
    """A :class:`Transport` that logs each call of ``child`` (TVM's log format: the timeout,
    the sizes and a hex dump), then returns its result or re-raises its error.
    """

    def __init__(
        self,
        name: str,
        child: Transport,
        logger: logging.Logger | None = None,
        level: int = logging.INFO,
    ) -> None:
        self.name, self.child = name, child
        self.logger = logger or _LOG
        self.level = level

    def _log(self, text: str) -> None:
        self.logger.log(self.level, "%s", text)

    def timeouts(self) -> TransportTimeouts:
        """The child's timeouts."""
        return self.child.timeouts()

    def open(self) -> None:
        """Log, then open the child."""
        self._log(f"{self.name}: opening transport")
        self.child.open()

    def close(self) -> None:
        """Log, then close the child."""
        self._log(f"{self.name}: closing transport")
        self.child.close()

    def read(self, n: int, timeout_sec: float | None) -> bytes:
        """The child's ``read``, logged with what came back (or the error)."""
        head = f"{self.name}: read {_timeout_text(timeout_sec)} {n:4d} B -> "
        try:
            data = self.child.read(n, timeout_sec)
        except IoTimeoutError:
            self._log(f"{head}[IoTimeoutError {timeout_sec:5.2f}s]")
            raise
        except Exception as err:
            self._log(f"{head}[err: {type(err).__name__}]")
            raise
        self._log(f"{head}[{len(data):3d} B]:{_dump(bytes(data))}")
        return data

    def write(self, data: bytes, timeout_sec: float | None) -> int:
        """The child's ``write``, logged with the bytes (or the error)."""
        timeout = _timeout_text(timeout_sec)
        try:
            written = self.child.write(data, timeout_sec)
        except IoTimeoutError:
            head = f"{self.name}: write {timeout}       <- [{len(data):3d} B]: "
            self._log(f"{head}[IoTimeoutError {timeout_sec:5.2f}s]")
            raise
        except Exception as err:
            head = f"{self.name}: write {timeout}       <- [{len(data):3d} B]: "
            self._log(f"{head}[err: {type(err).__name__}]")
            raise
        self._log(f"{self.name}: write {timeout}        <- [{len(data):3d} B]:{_dump(data)}")
        return written


class HostTransport(SessionTransport):
    """A device process on this machine over two pipes (``binary <read_fd> <write_fd>``)."""

    def __init__(self, binary: str | os.PathLike[str]) -> None:
        self.binary = os.fspath(binary)
        self._session: RPCSession | None = None

    def open_session(self, session_name: str, timeouts: TransportTimeouts) -> RPCSession:
        """Start the process; the session ends it when closed. A reply that does not come within
        ``timeouts.session_established_timeout_sec`` raises ``TimeoutError``.
        """
        if self._session is not None:
            raise TVMValueError(f"transport to {self.binary} is already open")
        self._session = RPCSession(
            popen_session(
                self.binary,
                label=session_name,
                timeout=timeouts.session_established_timeout_sec,
            )
        )
        return self._session

    def close(self) -> None:
        """Close the session, which stops the process (it exits on kShutdown or end of input)."""
        if self._session is not None:
            self._session.close()
            self._session = None


class SerialTransport(SessionTransport):
    """A board's serial link: ``connect(timeouts)`` returns the RPC session over the framing
    handshake (``rpc.connect_serial``), ``stop()`` ends the board.
    """

    def __init__(
        self,
        connect: Callable[[TransportTimeouts], RPCSession],
        stop: Callable[[], Any],
        description: str,
    ) -> None:
        self._connect, self._stop, self.description = connect, stop, description
        self._session: RPCSession | None = None

    def open_session(self, session_name: str, timeouts: TransportTimeouts) -> RPCSession:
        """Handshake with the board; later waits are bounded by
        ``session_established_timeout_sec``.
        """
        if self._session is not None:
            raise TVMValueError(f"transport to {self.description} is already open")
        self._session = self._connect(timeouts)
        return self._session

    def close(self) -> None:
        """Close the session, then stop the board."""
        try:
            if self._session is not None:
                self._session.close()
        finally:
            self._session = None
            self._stop()
