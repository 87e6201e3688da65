"""Transports of microTVM sessions (TVM v0.18's ``tvm.micro.transport``): how a
:class:`~pytvm.micro.Session` reaches the RPC server of a device.

A transport is opened by its project (``GeneratedProject.transport()``, a context manager) and
asked once for an RPC session; closing it ends the device (the process, the emulator).

``HostTransport``
    A device process (the ``host`` template's ``build/device``) started with two pipes, as
    ``rpc.PopenSession`` does; raw MinRPC on the pipes.
``SerialTransport``
    A byte link to a board's UART (e.g. QEMU's, from ``pytvm.crt.qemu.QemuBoard``), with the
    serial framing and handshake of ``rpc.connect_serial``.
"""

from __future__ import annotations

import abc
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..ffi.errors import TVMValueError
from ..rpc import RPCSession
from ..rpc.sessions.forwarding_session import popen_session

__all__ = ["HostTransport", "SerialTransport", "Transport", "TransportTimeouts"]


@dataclass(frozen=True, slots=True)
class TransportTimeouts:
    """TVM's timeouts of a transport, in seconds (``Session(timeout_override=...)``)."""

    session_start_retry_timeout_sec: float = 2.0
    session_start_timeout_sec: float = 30.0
    session_established_timeout_sec: float = 60.0


class Transport(abc.ABC):
    """How a session reaches a device's RPC server."""

    def timeouts(self) -> TransportTimeouts:
        """The transport's default timeouts."""
        return TransportTimeouts()

    @abc.abstractmethod
    def open_session(self, session_name: str, timeouts: TransportTimeouts) -> RPCSession:
        """Start the RPC session with the device (once per transport)."""

    @abc.abstractmethod
    def close(self) -> None:
        """End the device side (idempotent)."""


class HostTransport(Transport):
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


class SerialTransport(Transport):
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
