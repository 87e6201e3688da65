"""Constants, error kinds and small socket helpers shared by every RPC component.

The magic numbers, codes and handshake are TVM 0.27's (``spec/rpc-protocol.md`` sections 1, 4,
9): a stock TVM client, server or tracker talks to the pytvm ones.
"""

from __future__ import annotations

import json
import random
import socket
import struct
import time
from enum import IntEnum
from typing import Any

from ...ffi.errors import RPCError, RPCSessionTimeoutError, TVMError, TVMValueError, register_error

__all__ = [
    "MAX_KEY_BYTES",
    "MAX_SESSION_TIMEOUT",
    "PROTOCOL_VERSION",
    "RPC_CODE_DUPLICATE",
    "RPC_CODE_MISMATCH",
    "RPC_CODE_SUCCESS",
    "RPC_MAGIC",
    "RPC_SESS_MASK",
    "RPC_TRACKER_MAGIC",
    "ProtocolError",
    "RPCError",
    "RPCSessionTimeoutError",
    "TrackerCode",
    "connect_with_retry",
    "parse_session_timeout",
    "random_key",
    "recv_key",
    "recvall",
    "recvjson",
    "refusal_causes",
    "remote_error_class",
    "send_key",
    "sendjson",
    "set_nodelay",
    "split_key_options",
    "split_random_key",
]

#: First i32 of a data-plane connection; also the "success" reply of a server or proxy.
RPC_MAGIC = 0xFF271
#: Reply of a proxy when the key is already waiting there.
RPC_CODE_DUPLICATE = RPC_MAGIC + 1
#: Reply when no server matches the client's key.
RPC_CODE_MISMATCH = RPC_MAGIC + 2
RPC_CODE_SUCCESS = RPC_MAGIC
#: First i32 of a tracker connection, echoed back by the tracker.
RPC_TRACKER_MAGIC = 0x2F271
#: The version string sent in kInitServer; anything else is refused.
PROTOCOL_VERSION = "0.8.0"
#: Device types of session ``i`` are ``(i + 1) * RPC_SESS_MASK + real_type``.
RPC_SESS_MASK = 128

#: Largest tracker JSON message accepted (TVM's limit).
MAX_JSON_BYTES = 1 << 20
#: Longest handshake key accepted (its i32 length field comes from the wire).
MAX_KEY_BYTES = 4096
#: Most space-separated ``-name=value`` options one handshake key may carry.
MAX_KEY_OPTIONS = 16
#: Longest session a client may ask for with ``-timeout`` (seconds): 7 days.
MAX_SESSION_TIMEOUT = 7 * 24 * 3600.0


class TrackerCode(IntEnum):
    """Request codes of the tracker's JSON protocol (spec section 9.2)."""

    FAIL = -1
    SUCCESS = 0
    PING = 1
    STOP = 2
    PUT = 3
    REQUEST = 4
    UPDATE_INFO = 5
    SUMMARY = 6
    GET_PENDING_MATCHKEYS = 7


@register_error("ProtocolError")
class ProtocolError(TVMValueError):
    """Bytes that do not follow the RPC wire format; the message names the field."""


_REMOTE_CLASSES: dict[type[TVMError], type[TVMError]] = {}


def remote_error_class(kind: type[TVMError]) -> type[TVMError]:
    """The class raised for a remote error of ``kind``: a subclass of both ``kind`` (so
    ``except ValueError`` works) and :class:`RPCError` (so ``except RPCError`` does too).
    """
    if issubclass(kind, RPCError):
        return kind
    if issubclass(RPCError, kind):  # the plain base kind
        return RPCError
    found = _REMOTE_CLASSES.get(kind)
    if found is None:
        name = "Remote" + (kind.__name__[3:] if kind.__name__.startswith("TVM") else kind.__name__)
        found = type(name, (kind, RPCError), {"__module__": __name__})
        _REMOTE_CLASSES[kind] = found
    return found


# ---------------------------------------------------------------------------- sockets


def set_nodelay(sock: socket.socket) -> None:
    """Disable Nagle's algorithm on a TCP socket (no-op for other socket kinds)."""
    if sock.family in (socket.AF_INET, socket.AF_INET6):
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


def recvall(sock: socket.socket, nbytes: int) -> bytes:
    """Exactly ``nbytes`` from ``sock``; ``ConnectionError`` if the peer closes first."""
    buf = bytearray(nbytes)
    view = memoryview(buf)
    got = 0
    while got < nbytes:
        n = sock.recv_into(view[got:])
        if n == 0:
            raise ConnectionError(f"peer closed after {got} of {nbytes} expected bytes")
        got += n
    return bytes(buf)


def sendjson(sock: socket.socket, data: Any) -> None:
    """Send ``i32 length`` + UTF-8 JSON in one write (the tracker's framing)."""
    body = json.dumps(data).encode()
    sock.sendall(struct.pack("<i", len(body)) + body)


def recvjson(sock: socket.socket) -> Any:
    """Receive one length-prefixed JSON message; ``ProtocolError`` on a bad length."""
    (size,) = struct.unpack("<i", recvall(sock, 4))
    if size <= 0 or size > MAX_JSON_BYTES:
        raise ProtocolError(f"tracker message length {size} outside 1..{MAX_JSON_BYTES}")
    return json.loads(recvall(sock, size).decode())


def random_key(prefix: str, exclude: Any = None) -> str:
    """``prefix`` + a random float, different from every key in ``exclude``."""
    while True:
        key = f"{prefix}{random.random()}"
        if not exclude or key not in exclude:
            return key


def split_random_key(key: str) -> str:
    """The rpc key a match key (``<key>:<random>``) was made from."""
    return key.rsplit(":", 1)[0]


def connect_with_retry(
    addr: tuple[str, int], timeout: float = 60.0, retry_period: float = 0.1
) -> socket.socket:
    """A TCP connection to ``addr``, retrying refused connections until ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            sock = socket.create_connection(addr)
            set_nodelay(sock)
            return sock
        except OSError as err:
            if time.monotonic() >= deadline:
                raise ConnectionError(
                    f"cannot connect to {addr[0]}:{addr[1]} (retried for {timeout:g} s): {err}"
                ) from err
            time.sleep(retry_period)


def send_key(sock: socket.socket, magic: int, key: str) -> None:
    """The data-plane handshake record: ``i32 magic, i32 keylen, key``, in one write."""
    raw = key.encode()
    sock.sendall(struct.pack("<ii", magic, len(raw)) + raw)


def recv_key(sock: socket.socket, limit: int = MAX_KEY_BYTES) -> str:
    """Read ``i32 keylen`` + key (after the magic); ``ProtocolError`` if the length is bad."""
    (size,) = struct.unpack("<i", recvall(sock, 4))
    if size < 0 or size > limit:
        raise ProtocolError(f"handshake key length {size} outside 0..{limit}")
    return recvall(sock, size).decode("utf-8", errors="replace")


def split_key_options(key: str) -> tuple[str, dict[str, str]]:
    """``"client:k -timeout=10 -token=t"`` -> ``("client:k", {"timeout": "10", "token": "t"})``.

    The key comes from the wire, so it is checked here: ``ProtocolError`` (naming the bad part)
    for control characters, more than ``MAX_KEY_OPTIONS`` options, an option given twice, or a
    ``-timeout`` that :func:`parse_session_timeout` refuses.

    Examples
    --------
    >>> split_key_options("client:k -timeout=10")
    ('client:k', {'timeout': '10'})
    >>> try:
    ...     split_key_options("client:k -timeout=inf")
    ... except ValueError as err:
    ...     print(err)
    key option -timeout='inf' is outside (0, 604800] seconds
    """
    if not key.isprintable():
        raise ProtocolError(f"handshake key {key[:80]!r} contains control characters")
    head, *rest = key.split(" ") if key else [""]
    if len(rest) > MAX_KEY_OPTIONS:
        raise ProtocolError(
            f"handshake key has {len(rest)} space-separated options; at most {MAX_KEY_OPTIONS}"
        )
    options: dict[str, str] = {}
    for item in rest:
        if item.startswith("-") and "=" in item:
            name, value = item[1:].split("=", 1)
            if name in options:
                raise ProtocolError(f"key option -{name} is given twice")
            options[name] = value
    if "timeout" in options:
        parse_session_timeout(options["timeout"])
    return head, options


def parse_session_timeout(text: str) -> float:
    """The seconds of a ``-timeout=<text>`` key option: a number in ``(0, 7 days]``, else
    ``ProtocolError`` (so ``inf``, ``nan``, ``1e308``, ``-5`` and ``abc`` never become a
    deadline).
    """
    try:
        value = float(text)
    except ValueError:
        raise ProtocolError(
            f"key option -timeout={text!r} is not a number; expected seconds in "
            f"(0, {MAX_SESSION_TIMEOUT:g}]"
        ) from None
    if not 0.0 < value <= MAX_SESSION_TIMEOUT:  # false for nan too
        raise ProtocolError(
            f"key option -timeout={text!r} is outside (0, {MAX_SESSION_TIMEOUT:g}] seconds"
        )
    return value


def refusal_causes(key: str) -> str:
    """The possible reasons a server answered ``RPC_CODE_MISMATCH`` to ``key`` (the wire carries
    none), narrowed by what ``key`` holds; the server's log names the actual one.
    """
    head = key.split(" ", 1)[0]
    options = {item[1:].split("=", 1)[0] for item in key.split(" ")[1:] if item.startswith("-")}
    name = head.removeprefix("client:")
    causes = [
        f"the server's rpc key is not {name!r} (a server started with --key K accepts key='K' only)"
    ]
    if "token" in options or "tokenmac" in options:
        causes.append("the auth token you sent is not the server's --auth-token")
    else:
        causes.append(
            "you sent no -token: if the server was started with --auth-token, pass "
            "auth_token=... to connect"
        )
    _, colon, suffix = name.rpartition(":")
    if colon and suffix.replace(".", "", 1).isdigit():
        causes.append(
            "the tracker's match key was already used or replaced (request a new session "
            "from the tracker)"
        )
    else:
        causes.append(
            "the server is registered with a tracker and only accepts sessions requested "
            "through it (connect_tracker(host, port).request(key))"
        )
    causes.append("the server is at its --max-sessions limit")
    if "timeout" in options:
        causes.append(f"-timeout is outside (0, {MAX_SESSION_TIMEOUT:g}] seconds")
    return "; ".join(causes) + ". The server's log names the reason."
