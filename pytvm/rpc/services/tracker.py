"""The RPC tracker: a TCP service that hands registered RPC servers out to clients by key.

Wire protocol (TVM 0.27's, ``spec/rpc-protocol.md`` section 9), spoken by every connection:

* Handshake: the peer sends ``i32 RPC_TRACKER_MAGIC`` (0x2F271, little-endian); the tracker
  echoes it. Any other first word closes the connection.
* Then each message, in both directions, is ``i32 length`` + ``length`` bytes of UTF-8 JSON.
  A length ``<= 0`` or ``> 1 MiB``, malformed JSON, a malformed request or an unknown code
  closes that connection only (logged); the tracker keeps serving everyone else.
* Requests are JSON arrays whose first item is a :class:`~pytvm.rpc.wire.base.TrackerCode`:

  ======================  ==========================================  ========================
  code                    request                                     reply
  ======================  ==========================================  ========================
  PING (1)                ``[1]``                                     ``0``; HELLO
                                                                      ``[1, {"client": "pytvm"}]``
                                                                      gets ``[0, {"tracker":
                                                                      "pytvm", "features",
                                                                      "nonce"}]`` (``_auth``)
  STOP (2)                ``[2, stop_key]``                           ``0`` then shutdown, or
                                                                      ``-1`` for a wrong key
  PUT (3)                 ``[3, rpc_key, [port, match_key], addr]``   ``0``
  REQUEST (4)             ``[4, rpc_key, user, priority]``, pytvm     ``[0, [host, port,
                          may add ``{"if_unknown": "fail"}``          match_key]]``, once a
                                                                      resource is free
  UPDATE_INFO (5)         ``[5, {"key": ..., "addr": [host, port]}]`` ``0``
  SUMMARY (6)             ``[6]``                                     ``[0, {"queue_info": ...,
                                                                      "server_info": [...]}]``
  GET_PENDING_MATCHKEYS   ``[7]``                                     this connection's PUT
  (7)                                                                 match keys not yet
                                                                      handed out
  AUTH (100, pytvm)       ``[100, hmac]`` (see ``_auth``)             ``0``
  ======================  ==========================================  ========================

Bad values in a well-formed request of a known code (``_tracker_wire``: a NaN priority, a port
out of range, an over-long key ...) get ``[-1, message]`` and the connection stays open; a stock
TVM client raises that as an error instead of waiting. Refusals are logged.

Keys: a key is *known* once a server PUT under it. A REQUEST for an unknown key is logged; it
waits (TVM's behaviour) unless it carries ``{"if_unknown": "fail"}``, which gets
``[-1, "... known keys: [...]"]`` at once. A key with nothing free, nobody waiting and no open
server connection is forgotten ``key_ttl`` seconds later (at once if no server ever used it);
until then SUMMARY still lists it with ``free: 0``, as TVM does.

Limits: one connection may hold at most ``max_puts_per_connection`` free resources; with a
``token``, PUT and a ``server...`` UPDATE_INFO need the connection to have proved the token
(``_auth``); with a ``timeout``, a connection that leaves a handshake or a message half-sent
for that long is closed.

Scheduling (``_tracker_scheduler``): one priority queue per rpc key; a PUT resource's host is its
``addr`` if given, else the peer IP of the PUTting connection; the oldest free resource goes to
the highest-priority, earliest request. A requester that has gone away does not consume a
resource. When a connection closes, every resource it PUT and every request it left pending are
dropped. ``queue_info`` maps each rpc key to ``{"free": n, "pending": m}``; ``server_info`` lists
the UPDATE_INFO dicts of connections whose ``key`` starts with ``server`` (a ``null`` host in
``addr`` is replaced by the peer IP).

Every reply goes out in one ``send`` on a ``TCP_NODELAY`` socket (TVM writes two and suffers two
delayed-ACK stalls per round trip).
"""

from __future__ import annotations

import hmac
import json
import logging
import os
import socket
import struct
import time
from collections.abc import Callable
from typing import Any

from ...ffi.errors import TVMValueError
from ..wire._auth import AUTH_CODE, HELLO, tracker_mac
from ..wire._tracker_wire import parse_put, parse_request, parse_update_info
from ..wire.base import MAX_JSON_BYTES, RPC_TRACKER_MAGIC, ProtocolError, TrackerCode, random_key
from ._selector_server import Connection, SelectorServer
from ._tracker_scheduler import PriorityScheduler, Request, Resource

__all__ = ["Tracker"]

logger = logging.getLogger("pytvm.rpc.tracker")

_MAGIC = struct.pack("<i", RPC_TRACKER_MAGIC)
#: Bytes of the i32 magic and of the i32 length before each JSON message.
_WORD = 4
#: Longest AUTH proof (a hex HMAC-SHA256 is 64 characters).
_MAX_MAC_CHARS = 128
#: ``[100, mac]``.
_AUTH_LEN = 2
#: Failed AUTH attempts after which a connection is closed.
_MAX_AUTH_FAILURES = 3
#: What a HELLO advertises.
_FEATURES = ["if_unknown", "token"]


def _frame(value: Any) -> bytes:
    body = json.dumps(value).encode()
    return struct.pack("<i", len(body)) + body


class _TrackerConn(Connection):
    """One tracker connection: handshake state, framing, and what it registered."""

    server: Tracker

    def __init__(self, tracker: Tracker, sock: socket.socket, addr: tuple[str, int]) -> None:
        super().__init__(tracker, sock, addr)
        self.inbuf = bytearray()
        self.handshaken = False
        self.info: dict[str, Any] = {}
        # Match keys PUT by this connection and not handed out yet (insertion ordered).
        self.pending_matchkeys: dict[str, None] = {}
        self.authed = tracker.token is None
        self.nonce: str | None = None
        self.auth_failures = 0
        self.partial_since: float | None = time.monotonic()  # handshake not complete yet
        self._stall_check_armed = False
        self._arm_stall_check()

    def name(self) -> str:
        return f"{self.addr[0]}:{self.addr[1]}"

    def reply(self, value: Any) -> bool:
        return self.write(_frame(value))

    def peer_alive(self) -> bool:
        """False if the peer has closed (EOF is waiting) or the socket is broken."""
        if self.closed:
            return False
        try:
            return self.sock.recv(1, socket.MSG_PEEK) != b""
        except (BlockingIOError, InterruptedError):
            return True
        except OSError:
            return False

    def on_data(self, data: bytes) -> None:
        self.inbuf += data
        progress = False
        if not self.handshaken:
            if len(self.inbuf) < _WORD:
                return
            (magic,) = struct.unpack_from("<i", self.inbuf)
            if magic != RPC_TRACKER_MAGIC:
                logger.warning("tracker: wrong magic %#x from %s; closing", magic, self.name())
                self.close()
                return
            del self.inbuf[:_WORD]
            self.handshaken = progress = True
            self.write(_MAGIC)
        while len(self.inbuf) >= _WORD and not self.closed:
            (size,) = struct.unpack_from("<i", self.inbuf)
            if size <= 0 or size > MAX_JSON_BYTES:
                logger.warning(
                    "tracker: message length %d from %s outside 1..%d; closing",
                    size,
                    self.name(),
                    MAX_JSON_BYTES,
                )
                self.close()
                return
            if len(self.inbuf) < _WORD + size:
                break
            body = bytes(self.inbuf[_WORD : _WORD + size])
            del self.inbuf[: _WORD + size]
            progress = True
            try:
                self.server._handle(self, json.loads(body.decode("utf-8")))
            except Exception as err:
                logger.warning("tracker: bad request from %s (%s); closing", self.name(), err)
                self.close()
                return
        if not self.inbuf:
            self.partial_since = None
        elif progress or self.partial_since is None:
            self.partial_since = time.monotonic()
        self._arm_stall_check()

    def _arm_stall_check(self) -> None:
        timeout = self.server.timeout
        if timeout is None or self.partial_since is None or self._stall_check_armed:
            return
        self._stall_check_armed = True
        delay = max(0.0, self.partial_since + timeout - time.monotonic())
        self.server.call_later(delay, self._check_stall)

    def _check_stall(self) -> None:
        self._stall_check_armed = False
        timeout = self.server.timeout
        if self.closed or self.partial_since is None or timeout is None:
            return
        if time.monotonic() - self.partial_since >= timeout:
            what = "a message" if self.handshaken else "the handshake"
            logger.warning(
                "tracker: %s left %s half-sent for %g s; closing", self.name(), what, timeout
            )
            self.close()
            return
        self._arm_stall_check()

    def on_close(self) -> None:
        self.server._forget(self)


def _check(cond: bool, what: str, msg: Any) -> None:
    if not cond:
        raise ProtocolError(f"malformed tracker request {msg!r:.120}: expected {what}")


class Tracker(SelectorServer):
    """An RPC tracker serving TVM's tracker protocol from a background thread.

    The listening socket is bound in the constructor, so ``port`` is valid as soon as it returns.

    Parameters
    ----------
    host : str
        Address to listen on.
    port : int
        First port to try; ``0`` lets the kernel choose.
    port_end : int
        One past the last port to try.
    silent : bool
        Log only warnings.
    reuse_addr : bool
        Bind with ``SO_REUSEADDR`` (TVM's default), so a restart may reuse a port in TIME_WAIT.
    timeout : float, optional
        Close a connection that leaves its handshake or a message half-sent this long.
    token : str, optional
        Servers must prove this token before they register (see ``pytvm.rpc.wire._auth``); clients
        need none. ``pytvm rpc tracker`` reads it from ``--token-file`` or
        ``$PYTVM_TRACKER_TOKEN`` too.
    max_puts_per_connection : int
        Free resources one connection may hold; further PUTs are refused and logged.
    key_ttl : float
        Seconds a key whose servers all left stays listed (and known) before it is forgotten.

    Examples
    --------
    >>> from pytvm.rpc.services.tracker import Tracker
    >>> from pytvm.rpc.sessions.tracker_client import connect_tracker
    >>> with Tracker(port=0, silent=True) as tracker:
    ...     with connect_tracker("127.0.0.1", tracker.port) as session:
    ...         session.summary()
    {'queue_info': {}, 'server_info': []}
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9190,
        port_end: int = 9199,
        silent: bool = False,
        reuse_addr: bool = True,
        timeout: float | None = None,
        *,
        token: str | None = None,
        max_puts_per_connection: int = 256,
        key_ttl: float = 60.0,
    ) -> None:
        if timeout is not None and not timeout > 0:
            raise TVMValueError(
                f"Tracker timeout must be positive seconds or None, got {timeout!r}"
            )
        super().__init__(host, port, port_end, name="pytvm-rpc-tracker", reuse_addr=reuse_addr)
        self.silent = silent
        self.timeout = timeout
        self.token = token or None
        self.max_puts_per_connection = max_puts_per_connection
        self.key_ttl = key_ttl
        self.stop_key = random_key("tracker:")
        self._schedulers: dict[str, PriorityScheduler] = {}
        self._empty_since: dict[str, float] = {}
        self._handlers: dict[int, Callable[[_TrackerConn, list[Any]], None]] = {
            TrackerCode.PING: self._ping,
            TrackerCode.STOP: self._stop,
            TrackerCode.PUT: self._put,
            TrackerCode.REQUEST: self._request,
            TrackerCode.UPDATE_INFO: self._update_info,
            TrackerCode.SUMMARY: self._summary_reply,
            TrackerCode.GET_PENDING_MATCHKEYS: self._pending_reply,
            AUTH_CODE: self._auth,
        }
        if not silent:
            logger.info(
                "tracker: listening on %s:%d%s",
                host,
                self.port,
                " (servers need the tracker token)" if self.token else "",
            )
        self._start()

    # --------------------------------------------------------------- loop thread
    def _accepted(self, sock: socket.socket, addr: tuple[str, int]) -> Connection:
        if not self.silent:
            logger.info("tracker: connection from %s:%d", addr[0], addr[1])
        return _TrackerConn(self, sock, addr)

    def _scheduler(self, key: str) -> PriorityScheduler:
        self._empty_since.pop(key, None)
        sched = self._schedulers.get(key)
        if sched is None:
            sched = self._schedulers[key] = PriorityScheduler(key)
        return sched

    def known_keys(self) -> list[str]:
        """The keys some server has registered (and that have not been forgotten since)."""
        return sorted(key for key, sched in self._schedulers.items() if sched.had_servers)

    def _forget(self, conn: _TrackerConn) -> None:
        for key, sched in list(self._schedulers.items()):
            withdrawn = sched.drop_owner(conn)
            if withdrawn and not self.silent:
                logger.info(
                    "tracker: %s left; its request for key %r is withdrawn", conn.name(), key
                )
            if sched.empty:
                self._key_emptied(key, sched)
        conn.pending_matchkeys.clear()

    def _key_emptied(self, key: str, sched: PriorityScheduler) -> None:
        if not sched.had_servers or self.key_ttl <= 0:
            del self._schedulers[key]
            self._empty_since.pop(key, None)
        elif key not in self._empty_since:
            self._empty_since[key] = time.monotonic()
            self.call_later(self.key_ttl, lambda: self._prune(key))

    def _prune(self, key: str) -> None:
        since = self._empty_since.get(key)
        sched = self._schedulers.get(key)
        if since is None or sched is None or not sched.empty:
            return  # used again meanwhile
        left = since + self.key_ttl - time.monotonic()
        if left > 0:
            self.call_later(left, lambda: self._prune(key))
            return
        del self._schedulers[key]
        del self._empty_since[key]
        if not self.silent:
            logger.info("tracker: forgot key %r (no server for %g s)", key, self.key_ttl)

    def _handed_out(self, resources: list[Resource]) -> None:
        for res in resources:
            owner = res.owner
            assert isinstance(owner, _TrackerConn)
            owner.pending_matchkeys.pop(res.match_key, None)

    def _handle(self, conn: _TrackerConn, msg: Any) -> None:
        _check(
            isinstance(msg, list)
            and len(msg) > 0
            and isinstance(msg[0], int)
            and not isinstance(msg[0], bool),
            "[code, ...]",
            msg,
        )
        handler = self._handlers.get(msg[0])
        if handler is None:
            raise ProtocolError(f"unknown tracker code {msg[0]!r}; expected one of 1..7")
        try:
            handler(conn, msg)
        except ProtocolError as err:
            name = TrackerCode(msg[0]).name if msg[0] in TrackerCode._value2member_map_ else "AUTH"
            logger.warning("tracker: refused %s from %s: %s", name, conn.name(), err)
            conn.reply([TrackerCode.FAIL, str(err)])

    def _ping(self, conn: _TrackerConn, msg: list[Any]) -> None:
        if msg[1:2] == [HELLO]:
            conn.nonce = os.urandom(16).hex()
            hello = {"tracker": "pytvm", "features": _FEATURES, "nonce": conn.nonce}
            conn.reply([TrackerCode.SUCCESS, hello])
        else:
            conn.reply(TrackerCode.SUCCESS)

    def _auth(self, conn: _TrackerConn, msg: list[Any]) -> None:
        if self.token is None:
            conn.authed = True
            conn.reply(TrackerCode.SUCCESS)
            return
        _check(
            len(msg) == _AUTH_LEN and isinstance(msg[1], str) and len(msg[1]) <= _MAX_MAC_CHARS,
            "[100, mac]",
            msg,
        )
        nonce, conn.nonce = conn.nonce, None  # one attempt per nonce
        if nonce is None:
            raise ProtocolError("AUTH without a nonce; send HELLO [1, {...}] first")
        if hmac.compare_digest(msg[1].encode(), tracker_mac(self.token, nonce).encode()):
            conn.authed = True
            conn.reply(TrackerCode.SUCCESS)
            return
        conn.auth_failures += 1
        if conn.auth_failures >= _MAX_AUTH_FAILURES:
            logger.warning(
                "tracker: %s gave a wrong tracker token %d times; closing",
                conn.name(),
                conn.auth_failures,
            )
            self.close_later(conn)
        raise ProtocolError("wrong tracker token")

    def _require_token(self, conn: _TrackerConn, what: str) -> None:
        if not conn.authed:
            raise ProtocolError(
                f"{what} needs the tracker token and this connection has not proved it; start "
                "the server with tracker_token=... (or $PYTVM_TRACKER_TOKEN)"
            )

    def _stop(self, conn: _TrackerConn, msg: list[Any]) -> None:
        if msg[1:2] == [self.stop_key]:
            conn.reply(TrackerCode.SUCCESS)
            if not self.silent:
                logger.info("tracker: stopped by %s", conn.name())
            self.stop_soon()
        else:
            conn.reply(TrackerCode.FAIL)

    def _update_info(self, conn: _TrackerConn, msg: list[Any]) -> None:
        info = parse_update_info(msg)
        if str(info.get("key", "")).startswith("server"):
            self._require_token(conn, f"UPDATE_INFO as {info['key']!r}")
        addr = info.get("addr")
        if isinstance(addr, list) and addr[0] is None:
            info["addr"] = [conn.addr[0], addr[1]]
        conn.info.update(info)
        conn.reply(TrackerCode.SUCCESS)

    def _put(self, conn: _TrackerConn, msg: list[Any]) -> None:
        put = parse_put(msg)
        self._require_token(conn, f"PUT of key {put.key!r}")
        if len(conn.pending_matchkeys) >= self.max_puts_per_connection:
            raise ProtocolError(
                f"PUT of key {put.key!r}: this connection already holds "
                f"{len(conn.pending_matchkeys)} free resources, the most allowed "
                f"(max_puts_per_connection={self.max_puts_per_connection})"
            )
        res = Resource(
            owner=conn, host=put.addr or conn.addr[0], port=put.port, match_key=put.match_key
        )
        conn.pending_matchkeys[res.match_key] = None
        conn.reply(TrackerCode.SUCCESS)
        self._handed_out(self._scheduler(put.key).put(res))

    def _request(self, conn: _TrackerConn, msg: list[Any]) -> None:
        req = parse_request(msg)
        sched = self._schedulers.get(req.key)
        if sched is None or not sched.had_servers:
            known = self.known_keys()
            if req.fail_if_unknown:
                logger.warning(
                    "tracker: %s requests key %r, which no server has registered (known keys: "
                    "%s); refused at once as it asked",
                    conn.name(),
                    req.key,
                    known,
                )
                why = f"no server has registered key {req.key!r}; known keys: {known}"
                conn.reply(
                    [TrackerCode.FAIL, {"unknown_key": req.key, "known_keys": known, "error": why}]
                )
                return
            logger.warning(
                "tracker: %s requests key %r, which no server has registered (known keys: %s); "
                "it waits until one does",
                conn.name(),
                req.key,
                known,
            )

        def deliver(res: Resource) -> bool:
            if not conn.peer_alive():
                self.close_later(conn)
                return False
            return conn.reply([TrackerCode.SUCCESS, [res.host, res.port, res.match_key]])

        request = Request(owner=conn, priority=req.priority, deliver=deliver)
        self._handed_out(self._scheduler(req.key).request(request))

    def _summary_reply(self, conn: _TrackerConn, msg: list[Any]) -> None:
        conn.reply([TrackerCode.SUCCESS, self._summary()])

    def _pending_reply(self, conn: _TrackerConn, msg: list[Any]) -> None:
        conn.reply(list(conn.pending_matchkeys))

    def _summary(self) -> dict[str, Any]:
        servers = [
            c.info
            for c in self._connections
            if isinstance(c, _TrackerConn) and str(c.info.get("key", "")).startswith("server")
        ]
        queues = {key: sched.summary() for key, sched in self._schedulers.items()}
        return {"queue_info": queues, "server_info": servers}
