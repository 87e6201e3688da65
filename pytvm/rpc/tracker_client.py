"""The client side of the tracker protocol: query a tracker and request RPC sessions from it."""

from __future__ import annotations

import socket
import struct
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any, TypeVar

from .base import (
    RPC_TRACKER_MAGIC,
    ProtocolError,
    RPCError,
    TrackerCode,
    connect_with_retry,
    recvall,
    recvjson,
    sendjson,
)

__all__ = ["TrackerSession", "connect_tracker"]

_T = TypeVar("_T")


class TrackerSession:
    """A connection to an RPC tracker (TVM's ``TrackerSession``, same wire protocol).

    Parameters
    ----------
    addr : tuple of (str, int)
        The tracker's host and port.
    connect_timeout : float
        Seconds to keep retrying a refused connection.

    Examples
    --------
    >>> from pytvm.rpc.tracker import Tracker
    >>> with Tracker(port=0, silent=True) as tracker:
    ...     with TrackerSession(("127.0.0.1", tracker.port)) as session:
    ...         "Queue Status" in session.text_summary()
    True
    """

    def __init__(self, addr: tuple[str, int], connect_timeout: float = 60.0) -> None:
        self._addr = addr
        self._connect_timeout = connect_timeout
        self._sock: socket.socket | None = None
        self._connect()

    def _connect(self) -> socket.socket:
        sock = connect_with_retry(self._addr, timeout=self._connect_timeout)
        try:
            sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
            (magic,) = struct.unpack("<i", recvall(sock, 4))
        except BaseException:
            sock.close()
            raise
        if magic != RPC_TRACKER_MAGIC:
            sock.close()
            host, port = self._addr
            raise RPCError(
                f"{host}:{port} answered magic {magic:#x}, not the tracker's "
                f"{RPC_TRACKER_MAGIC:#x}; check that the address is an RPC tracker"
            )
        self._sock = sock
        return sock

    def _call(self, message: list[Any]) -> Any:
        sock = self._sock if self._sock is not None else self._connect()
        sendjson(sock, message)
        return recvjson(sock)

    def close(self) -> None:
        """Close the tracker connection (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> TrackerSession:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __del__(self) -> None:
        sock = getattr(self, "_sock", None)
        if sock is not None:
            sock.close()

    def summary(self) -> dict[str, Any]:
        """The tracker's status: ``{"queue_info": {key: {"free", "pending"}}, "server_info"}``.

        Raises
        ------
        RPCError
            If the tracker replies with anything but ``[0, {...}]``.
        """
        value = self._call([TrackerCode.SUMMARY])
        if not (isinstance(value, list) and len(value) == 2 and value[0] == TrackerCode.SUCCESS):
            raise RPCError(f"tracker SUMMARY returned {value!r}; expected [0, {{...}}]")
        result: dict[str, Any] = value[1]
        return result

    def text_summary(self) -> str:
        """The summary as the two tables TVM prints: the server list and the queue status."""
        data = self.summary()
        lines = [
            "Server List",
            "------------------------------",
            "server-address           key",
            "------------------------------",
        ]
        total: dict[str, int] = {}
        for item in sorted(data["server_info"], key=lambda x: str(x.get("key", ""))):
            addr = ":".join(str(part) for part in item.get("addr", []))
            key = str(item.get("key", ""))
            lines.append(f"{addr:21s}    {key}")
            short = key.split(":")[1] if ":" in key else key  # 'server:rasp3b' -> 'rasp3b'
            total[short] = total.get(short, 0) + 1
        lines += ["------------------------------", ""]

        queue_info = data["queue_info"]
        keys = sorted(queue_info)
        width = max((len(k) for k in keys), default=0)
        title = f"{'key':<{width}s}   total  free  pending"
        rule = "-" * (len(title) + 1)
        lines += ["Queue Status", rule, title, rule]
        for key in keys:
            count = total.get(key, 0)
            free, pending = queue_info[key]["free"], queue_info[key]["pending"]
            if count or pending:
                lines.append(f"{key:<{width}}   {count:<5d}  {free:<4d}  {pending:<7d}")
        lines.append(rule)
        return "\n".join(lines) + "\n"

    def request(
        self,
        key: str,
        priority: int = 1,
        session_timeout: float = 0,
        max_retry: int = 5,
        session_constructor_args: Sequence[Any] | None = None,
        auth_token: str | None = None,
    ) -> Any:
        """Wait for a free server registered under ``key`` and open an RPC session to it.

        Parameters
        ----------
        key : str
            The rpc key of the device kind.
        priority : int
            Higher is served first; equal priorities are served in request order.
        session_timeout : float
            Seconds after which the server may end the session; 0 means never.
        max_retry : int
            Attempts before giving up. A broken tracker connection is reopened; a failed RPC
            connection asks the tracker again.
        session_constructor_args : sequence, optional
            Remote session constructor name followed by its arguments.
        auth_token : str, optional
            Token the server expects, passed to the RPC handshake.

        Returns
        -------
        RPCSession
            The session made by :func:`pytvm.rpc.client.connect`.

        Raises
        ------
        RPCError
            After ``max_retry`` failed attempts; the message names the key and the last error.
        """
        from .client import connect

        last_err: BaseException | None = None
        for _ in range(max_retry):
            try:
                value = self._call([TrackerCode.REQUEST, key, "", priority])
                if not (
                    isinstance(value, list)
                    and len(value) == 2
                    and value[0] == TrackerCode.SUCCESS
                    and isinstance(value[1], list)
                    and len(value[1]) == 3
                ):
                    raise RPCError(f"tracker REQUEST returned {value!r}; expected [0, [h, p, k]]")
                host, port, match_key = value[1]
                return connect(
                    host,
                    port,
                    match_key,
                    session_timeout=session_timeout,
                    session_constructor_args=session_constructor_args,
                    auth_token=auth_token,
                )
            except (OSError, ProtocolError) as err:
                self.close()  # reconnect on the next attempt
                last_err = err
            except RuntimeError as err:
                last_err = err
        raise RPCError(
            f"cannot get an RPC session for key {key!r} from tracker "
            f"{self._addr[0]}:{self._addr[1]} after {max_retry} attempts; last error: {last_err}"
        )

    def request_and_run(
        self,
        key: str,
        func: Callable[[Any], _T],
        priority: int = 1,
        session_timeout: float = 0,
        max_retry: int = 2,
    ) -> _T:
        """Request a session for ``key`` and return ``func(session)``, retrying on failure.

        A ``RuntimeError`` from ``func`` (for instance a server that dropped out) gets a fresh
        session and another run, up to ``max_retry`` runs; a run that lasted about as long as
        ``session_timeout`` is reported as a timeout instead of being retried.

        Raises
        ------
        RPCError
            When every attempt failed, or the session timed out.
        """
        last_err: BaseException | None = None
        for _ in range(max_retry):
            start = time.monotonic()
            try:
                sess = self.request(key, priority=priority, session_timeout=session_timeout)
                start = time.monotonic()
                return func(sess)
            except RuntimeError as err:
                duration = time.monotonic() - start
                if session_timeout and duration >= session_timeout * 0.95:
                    name = getattr(func, "__name__", repr(func))
                    raise RPCError(
                        f"session for key {key!r} timed out after {duration:.1f} s while running "
                        f"{name}; raise session_timeout"
                    ) from err
                last_err = err
        raise RPCError(
            f"failed to run on key {key!r} after {max_retry} attempts; last error: {last_err}"
        )


def connect_tracker(host: str, port: int, connect_timeout: float = 60.0) -> TrackerSession:
    """Open a :class:`TrackerSession` to the tracker at ``host:port``.

    Examples
    --------
    >>> from pytvm.rpc.tracker import Tracker
    >>> with Tracker(port=0, silent=True) as tracker:
    ...     with connect_tracker("127.0.0.1", tracker.port) as session:
    ...         session.summary()["queue_info"]
    {}
    """
    return TrackerSession((host, port), connect_timeout=connect_timeout)
