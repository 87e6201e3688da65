"""The client side of the tracker protocol: query a tracker and request RPC sessions from it.

A request names a key. By default it fails at once when the tracker has never seen a server
register that key (the error lists the keys it knows); ``wait_for_unknown_key=True`` waits for
such a server instead, as TVM's client does. A pytvm tracker decides this itself (the REQUEST
carries ``{"if_unknown": "fail"}``, so its log says so too); with a stock TVM tracker the client
reads SUMMARY first. ``timeout`` bounds the whole request; an auth token is sent to the assigned
server only as a MAC of its one-time match key (``_auth``).
"""

from __future__ import annotations

import logging
import math
import socket
import struct
import time
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from ...ffi.errors import TVMKeyError, TVMValueError, register_error
from ..wire._auth import HELLO, session_mac
from ..wire._tracker_wire import MAX_HOST_CHARS, MAX_PORT
from ..wire.base import (
    RPC_TRACKER_MAGIC,
    ProtocolError,
    RPCError,
    TrackerCode,
    recvall,
    recvjson,
    sendjson,
    set_nodelay,
)

__all__ = [
    "TrackerConnectionError",
    "TrackerKeyError",
    "TrackerSession",
    "TrackerTimeoutError",
    "connect_tracker",
]

logger = logging.getLogger("pytvm.rpc.tracker_client")

_T = TypeVar("_T")

#: Seconds a tracker may take to answer anything but a waiting REQUEST.
IO_TIMEOUT = 30.0
# What each tracker address answered to HELLO (None: a stock TVM tracker), for this process.
_HELLO_BY_ADDRESS: dict[tuple[str, int], dict[str, Any] | None] = {}
#: Seconds between "still retrying" log lines while connecting.
_RETRY_LOG_PERIOD = 10.0
#: A tracker reply carrying a value: ``[code, value]``.
_REPLY_LEN = 2
#: The value of a REQUEST's reply: ``[host, port, match_key]``.
_ADDRESS_LEN = 3


@register_error("TrackerConnectionError")
class TrackerConnectionError(RPCError, ConnectionError):
    """The tracker could not be reached within the retry budget."""


@register_error("TrackerKeyError")
class TrackerKeyError(RPCError, TVMKeyError):
    """No server has ever registered the requested key with the tracker."""


@register_error("TrackerTimeoutError")
class TrackerTimeoutError(RPCError, TimeoutError):
    """No session for the requested key could be had within the request's ``timeout``."""


def _dial(addr: tuple[str, int], budget: float, retry_period: float) -> socket.socket:
    """A TCP connection to ``addr``, retrying failures for ``budget`` seconds (logged)."""
    host, port = addr
    start = time.monotonic()
    next_log = start
    while True:
        try:
            sock = socket.create_connection(addr, timeout=IO_TIMEOUT)
            if sock.getsockname() == sock.getpeername():  # loopback self-connection
                sock.close()
                raise ConnectionRefusedError(f"nothing listens on {host}:{port}")
            set_nodelay(sock)
            return sock
        except OSError as err:
            now = time.monotonic()
            if now - start >= budget:
                raise TrackerConnectionError(
                    f"cannot connect to the tracker at {host}:{port}: tried for "
                    f"{now - start:.1f} s (connect_timeout={budget:g}); last error: {err}"
                ) from err
            if now >= next_log:
                logger.warning(
                    "tracker %s:%d: %s; retrying every %g s for up to %.1f s more",
                    host,
                    port,
                    err,
                    retry_period,
                    budget - (now - start),
                )
                next_log = now + _RETRY_LOG_PERIOD
            time.sleep(min(retry_period, max(0.0, budget - (now - start))))


class TrackerSession:
    """A connection to an RPC tracker (TVM's ``TrackerSession``, same wire protocol).

    Parameters
    ----------
    addr : tuple of (str, int)
        The tracker's host and port.
    connect_timeout : float
        Seconds to keep retrying a failed connection (each retry is logged).
    retry_period : float
        Seconds between connection attempts.

    Examples
    --------
    >>> from pytvm.rpc.services.tracker import Tracker
    >>> with Tracker(port=0, silent=True) as tracker:
    ...     with TrackerSession(("127.0.0.1", tracker.port)) as session:
    ...         "Queue Status" in session.text_summary()
    True
    """

    def __init__(
        self, addr: tuple[str, int], connect_timeout: float = 60.0, retry_period: float = 0.1
    ) -> None:
        self._addr = addr
        self._connect_timeout = connect_timeout
        self._retry_period = retry_period
        self._sock: socket.socket | None = None
        self._hello: dict[str, Any] | None = None  # a pytvm tracker's HELLO reply
        self._asked_hello = False
        self._connect()

    def _where(self) -> str:
        return f"{self._addr[0]}:{self._addr[1]}"

    def _connect(self) -> socket.socket:
        sock = _dial(self._addr, self._connect_timeout, self._retry_period)
        try:
            sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
            (magic,) = struct.unpack("<i", recvall(sock, 4))
        except BaseException:
            sock.close()
            raise
        if magic != RPC_TRACKER_MAGIC:
            sock.close()
            raise RPCError(
                f"{self._where()} answered magic {magic:#x}, not the tracker's "
                f"{RPC_TRACKER_MAGIC:#x}; check that the address is an RPC tracker"
            )
        self._sock = sock
        self._hello, self._asked_hello = None, False
        return sock

    def _call(self, message: list[Any], timeout: float | None = IO_TIMEOUT) -> Any:
        sock = self._sock if self._sock is not None else self._connect()
        sock.settimeout(timeout)
        sendjson(sock, message)
        return recvjson(sock)

    def _is_pytvm_tracker(self) -> bool:
        """Ask once per connection (HELLO; a stock TVM tracker answers a plain ``0``).

        The answer is remembered per address for the process, so repeated requests to one
        tracker cost one round trip each, not two. Should a stock tracker later take over the
        address, a request for an unknown key waits, as TVM's protocol says, instead of failing.
        """
        if not self._asked_hello:
            if self._addr in _HELLO_BY_ADDRESS:
                self._hello = _HELLO_BY_ADDRESS[self._addr]
            else:
                reply = self._call([TrackerCode.PING, HELLO])
                ok = isinstance(reply, list) and len(reply) == _REPLY_LEN
                self._hello = reply[1] if ok and isinstance(reply[1], dict) else None
                _HELLO_BY_ADDRESS[self._addr] = self._hello
            self._asked_hello = True
        return self._hello is not None and "if_unknown" in self._hello.get("features", [])

    def close(self) -> None:
        """Close the tracker connection (idempotent)."""
        if self._sock is not None:
            self._sock.close()
            self._sock = None

    def __enter__(self) -> TrackerSession:
        return self

    def __exit__(self, *exc: object) -> None:
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
        if not (
            isinstance(value, list) and len(value) == _REPLY_LEN and value[0] == TrackerCode.SUCCESS
        ):
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
        *,
        timeout: float | None = None,
        wait_for_unknown_key: bool = False,
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
            Token the server expects. It is not sent: the server gets ``-tokenmac=<HMAC of its
            one-time match key>``, which a pytvm server checks (stock TVM servers have no token).
        timeout : float, optional
            Seconds the whole request may take (waiting for a free server included); None
            waits as long as it takes.
        wait_for_unknown_key : bool
            Wait even when no server has ever registered ``key`` (else fail at once).

        Returns
        -------
        RPCSession
            The session made by :func:`pytvm.rpc.sessions.client.connect`.

        Raises
        ------
        TrackerKeyError
            No server has registered ``key``; the message lists the keys the tracker knows.
        TrackerTimeoutError
            ``timeout`` ran out; the message says what was being waited for.
        RPCError
            After ``max_retry`` failed attempts; the message names the key and the last error.
        """
        from .client import connect

        if timeout is not None and not (timeout >= 0 and math.isfinite(timeout)):
            raise TVMValueError(f"request timeout must be seconds >= 0 or None, not {timeout!r}")
        deadline = None if timeout is None else time.monotonic() + timeout
        last_err: BaseException | None = None
        for _ in range(max_retry):
            try:
                host, port, match_key = self._request_slot(
                    key, priority, deadline, wait_for_unknown_key
                )
                mac_key = match_key
                if auth_token:
                    if " " in auth_token:
                        raise ProtocolError("auth_token must not contain spaces")
                    mac_key = f"{match_key} -tokenmac={session_mac(auth_token, match_key)}"
                left = None if deadline is None else max(0.1, deadline - time.monotonic())
                return connect(
                    host,
                    port,
                    mac_key,
                    session_timeout=session_timeout,
                    session_constructor_args=session_constructor_args,
                    connect_timeout=left if left is not None else 60.0,
                )
            except (TrackerKeyError, TrackerTimeoutError):
                raise
            except (OSError, ProtocolError) as err:
                self.close()  # reconnect on the next attempt
                last_err = err
            except RuntimeError as err:
                last_err = err
            if deadline is not None and time.monotonic() >= deadline:
                raise TrackerTimeoutError(
                    f"no session for key {key!r} from tracker {self._where()} within "
                    f"{timeout:g} s; last error: {last_err}"
                ) from last_err
        raise RPCError(
            f"cannot get an RPC session for key {key!r} from tracker "
            f"{self._where()} after {max_retry} attempts; last error: {last_err}"
        )

    def _request_slot(
        self, key: str, priority: int, deadline: float | None, wait_for_unknown_key: bool
    ) -> tuple[str, int, str]:
        """Ask the tracker for a free server of ``key``: ``(host, port, match_key)``."""
        message: list[Any] = [TrackerCode.REQUEST, key, "", priority]
        if not wait_for_unknown_key:
            if self._is_pytvm_tracker():
                message.append({"if_unknown": "fail"})
            else:
                known = sorted(self.summary()["queue_info"])
                if key not in known:
                    raise TrackerKeyError(
                        f"tracker {self._where()} has no server registered under key {key!r}; "
                        f"known keys: {known}. Pass wait_for_unknown_key=True to wait for one"
                    )
        left = None if deadline is None else deadline - time.monotonic()
        try:
            if left is not None and left <= 0:
                raise TimeoutError("no time left")
            value = self._call(message, timeout=left)
        except TimeoutError as err:
            self.close()  # the tracker drops the request with the connection
            raise TrackerTimeoutError(
                f"no free server for key {key!r} from tracker {self._where()} within the "
                "request timeout (all busy, or none registered); raise timeout=, or look at "
                "`pytvm rpc query`"
            ) from err
        if isinstance(value, list) and len(value) == _REPLY_LEN and value[0] == TrackerCode.FAIL:
            why = value[1]
            if isinstance(why, dict) and "unknown_key" in why:
                raise TrackerKeyError(
                    f"tracker {self._where()} has no server registered under key {key!r}; "
                    f"known keys: {why.get('known_keys')}. Pass wait_for_unknown_key=True to "
                    "wait for one"
                )
            raise RPCError(f"tracker {self._where()} refused REQUEST for key {key!r}: {why}")
        if not (
            isinstance(value, list)
            and len(value) == _REPLY_LEN
            and value[0] == TrackerCode.SUCCESS
            and isinstance(value[1], list)
            and len(value[1]) == _ADDRESS_LEN
            and isinstance(value[1][0], str)
            and 0 < len(value[1][0]) <= MAX_HOST_CHARS
            and type(value[1][1]) is int
            and 0 < value[1][1] <= MAX_PORT
            and isinstance(value[1][2], str)
        ):
            raise ProtocolError(
                f"tracker REQUEST returned {value!r:.200}; expected [0, [host, port, match_key]]"
            )
        host, port, match_key = value[1]
        return host, port, match_key

    def request_and_run(
        self,
        key: str,
        func: Callable[[Any], _T],
        priority: int = 1,
        session_timeout: float = 0,
        max_retry: int = 2,
        *,
        timeout: float | None = None,
        wait_for_unknown_key: bool = False,
    ) -> _T:
        """Request a session for ``key`` and return ``func(session)``, retrying on failure.

        A ``RuntimeError`` from ``func`` (for instance a server that dropped out) gets a fresh
        session and another run, up to ``max_retry`` runs; a run that lasted about as long as
        ``session_timeout`` is reported as a timeout instead of being retried. ``timeout`` and
        ``wait_for_unknown_key`` apply to each request, as in :meth:`request`.

        Raises
        ------
        TrackerKeyError, TrackerTimeoutError
            As :meth:`request` (not retried).
        RPCError
            When every attempt failed, or the session timed out.
        """
        last_err: BaseException | None = None
        for _ in range(max_retry):
            start = time.monotonic()
            try:
                sess = self.request(
                    key,
                    priority=priority,
                    session_timeout=session_timeout,
                    timeout=timeout,
                    wait_for_unknown_key=wait_for_unknown_key,
                )
                start = time.monotonic()
                return func(sess)
            except (TrackerKeyError, TrackerTimeoutError):
                raise
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


def connect_tracker(
    host: str, port: int, connect_timeout: float = 60.0, retry_period: float = 0.1
) -> TrackerSession:
    """Open a :class:`TrackerSession` to the tracker at ``host:port``, retrying a failed
    connection for ``connect_timeout`` seconds (each retry logged, the final error names the
    address, how long it tried and the last OS error).

    Examples
    --------
    >>> from pytvm.rpc.services.tracker import Tracker
    >>> with Tracker(port=0, silent=True) as tracker:
    ...     with connect_tracker("127.0.0.1", tracker.port) as session:
    ...         session.summary()["queue_info"]
    {}
    """
    return TrackerSession((host, port), connect_timeout=connect_timeout, retry_period=retry_period)
