"""The RPC tracker: a TCP service that hands registered RPC servers out to clients by key.

Wire protocol (TVM 0.27's, ``spec/rpc-protocol.md`` section 9), spoken by every connection:

* Handshake: the peer sends ``i32 RPC_TRACKER_MAGIC`` (0x2F271, little-endian); the tracker
  echoes it. Any other first word closes the connection.
* Then each message, in both directions, is ``i32 length`` + ``length`` bytes of UTF-8 JSON.
  A length ``<= 0`` or ``> 1 MiB``, malformed JSON, a malformed request or an unknown code
  closes that connection only (logged); the tracker keeps serving everyone else.
* Requests are JSON arrays whose first item is a :class:`~pytvm.rpc.base.TrackerCode`:

  ======================  ==========================================  ========================
  code                    request                                     reply
  ======================  ==========================================  ========================
  PING (1)                ``[1]``                                     ``0``
  STOP (2)                ``[2, stop_key]``                           ``0`` then shutdown, or
                                                                      ``-1`` for a wrong key
  PUT (3)                 ``[3, rpc_key, [port, match_key], addr]``   ``0``
  REQUEST (4)             ``[4, rpc_key, user, priority]``            ``[0, [host, port,
                                                                      match_key]]``, once a
                                                                      resource is free
  UPDATE_INFO (5)         ``[5, {"key": ..., "addr": [host, port]}]`` ``0``
  SUMMARY (6)             ``[6]``                                     ``[0, {"queue_info": ...,
                                                                      "server_info": [...]}]``
  GET_PENDING_MATCHKEYS   ``[7]``                                     this connection's PUT
  (7)                                                                 match keys not yet
                                                                      handed out
  ======================  ==========================================  ========================

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

import json
import logging
import socket
import struct
from typing import Any

from ._selector_server import Channel, SelectorServer
from ._tracker_scheduler import PriorityScheduler, Request, Resource
from .base import MAX_JSON_BYTES, RPC_TRACKER_MAGIC, ProtocolError, TrackerCode, random_key

__all__ = ["Tracker"]

logger = logging.getLogger("pytvm.rpc.tracker")

_MAGIC = struct.pack("<i", RPC_TRACKER_MAGIC)


def _frame(value: Any) -> bytes:
    body = json.dumps(value).encode()
    return struct.pack("<i", len(body)) + body


class _TrackerConn(Channel):
    """One tracker connection: handshake state, framing, and what it registered."""

    server: Tracker

    def __init__(self, tracker: Tracker, sock: socket.socket, addr: tuple[str, int]) -> None:
        super().__init__(tracker, sock, addr)
        self.inbuf = bytearray()
        self.handshaken = False
        self.info: dict[str, Any] = {}
        # Match keys PUT by this connection and not handed out yet (insertion ordered).
        self.pending_matchkeys: dict[str, None] = {}

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
        if not self.handshaken:
            if len(self.inbuf) < 4:
                return
            (magic,) = struct.unpack_from("<i", self.inbuf)
            if magic != RPC_TRACKER_MAGIC:
                logger.warning("tracker: wrong magic %#x from %s; closing", magic, self.name())
                self.close()
                return
            del self.inbuf[:4]
            self.handshaken = True
            self.write(_MAGIC)
        while len(self.inbuf) >= 4 and not self.closed:
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
            if len(self.inbuf) < 4 + size:
                return
            body = bytes(self.inbuf[4 : 4 + size])
            del self.inbuf[: 4 + size]
            try:
                self.server._handle(self, json.loads(body.decode("utf-8")))
            except Exception as err:
                logger.warning("tracker: bad request from %s (%s); closing", self.name(), err)
                self.close()
                return

    def on_close(self) -> None:
        self.server._forget(self)


def _check(cond: bool, what: str, msg: Any) -> None:
    if not cond:
        raise ProtocolError(f"malformed tracker request {msg!r}: expected {what}")


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

    Examples
    --------
    >>> from pytvm.rpc.tracker import Tracker
    >>> from pytvm.rpc.tracker_client import connect_tracker
    >>> with Tracker(port=0, silent=True) as tracker:
    ...     with connect_tracker("127.0.0.1", tracker.port) as session:
    ...         session.summary()
    {'queue_info': {}, 'server_info': []}
    """

    def __init__(
        self, host: str = "127.0.0.1", port: int = 9190, port_end: int = 9199, silent: bool = False
    ) -> None:
        super().__init__(host, port, port_end, name="pytvm-rpc-tracker")
        self.silent = silent
        self.stop_key = random_key("tracker:")
        self._schedulers: dict[str, PriorityScheduler] = {}
        if not silent:
            logger.info("tracker: listening on %s:%d", host, self.port)
        self._start()

    # --------------------------------------------------------------- loop thread
    def _accepted(self, sock: socket.socket, addr: tuple[str, int]) -> Channel:
        if not self.silent:
            logger.info("tracker: connection from %s:%d", addr[0], addr[1])
        return _TrackerConn(self, sock, addr)

    def _scheduler(self, key: str) -> PriorityScheduler:
        sched = self._schedulers.get(key)
        if sched is None:
            sched = self._schedulers[key] = PriorityScheduler(key)
        return sched

    def _forget(self, conn: _TrackerConn) -> None:
        for sched in self._schedulers.values():
            sched.drop_owner(conn)
        conn.pending_matchkeys.clear()

    def _handed_out(self, resources: list[Resource]) -> None:
        for res in resources:
            owner = res.owner
            assert isinstance(owner, _TrackerConn)
            owner.pending_matchkeys.pop(res.match_key, None)

    def _handle(self, conn: _TrackerConn, msg: Any) -> None:
        _check(isinstance(msg, list) and len(msg) > 0 and isinstance(msg[0], int), "[code...]", msg)
        code = msg[0]
        if code == TrackerCode.PING:
            conn.reply(TrackerCode.SUCCESS)
        elif code == TrackerCode.PUT:
            self._put(conn, msg)
        elif code == TrackerCode.REQUEST:
            self._request(conn, msg)
        elif code == TrackerCode.UPDATE_INFO:
            _check(len(msg) >= 2 and isinstance(msg[1], dict), "[5, {info}]", msg)
            info = dict(msg[1])
            addr = info.get("addr")
            if isinstance(addr, list) and addr and addr[0] is None:
                info["addr"] = [conn.addr[0], *addr[1:]]
            conn.info.update(info)
            conn.reply(TrackerCode.SUCCESS)
        elif code == TrackerCode.SUMMARY:
            conn.reply([TrackerCode.SUCCESS, self._summary()])
        elif code == TrackerCode.GET_PENDING_MATCHKEYS:
            conn.reply(list(conn.pending_matchkeys))
        elif code == TrackerCode.STOP:
            if len(msg) >= 2 and msg[1] == self.stop_key:
                conn.reply(TrackerCode.SUCCESS)
                if not self.silent:
                    logger.info("tracker: stopped by %s", conn.name())
                self.stop_soon()
            else:
                conn.reply(TrackerCode.FAIL)
        else:
            raise ProtocolError(f"unknown tracker code {code!r}; expected one of 1..7")

    def _put(self, conn: _TrackerConn, msg: list[Any]) -> None:
        _check(len(msg) >= 3 and isinstance(msg[1], str), "[3, key, [port, match_key], addr]", msg)
        slot = msg[2]
        _check(
            isinstance(slot, list)
            and len(slot) == 2
            and isinstance(slot[0], int)
            and isinstance(slot[1], str),
            "[port, match_key] as the third item",
            msg,
        )
        custom = msg[3] if len(msg) >= 4 else None
        _check(custom is None or isinstance(custom, str), "a string or null address", msg)
        res = Resource(owner=conn, host=custom or conn.addr[0], port=slot[0], match_key=slot[1])
        conn.pending_matchkeys[res.match_key] = None
        conn.reply(TrackerCode.SUCCESS)
        self._handed_out(self._scheduler(msg[1]).put(res))

    def _request(self, conn: _TrackerConn, msg: list[Any]) -> None:
        _check(len(msg) >= 2 and isinstance(msg[1], str), "[4, key, user, priority]", msg)
        priority = msg[3] if len(msg) >= 4 else 1
        _check(
            isinstance(priority, int | float) and not isinstance(priority, bool),
            "a numeric priority",
            msg,
        )

        def deliver(res: Resource) -> bool:
            if not conn.peer_alive():
                self.close_later(conn)
                return False
            return conn.reply([TrackerCode.SUCCESS, [res.host, res.port, res.match_key]])

        req = Request(owner=conn, priority=priority, deliver=deliver)
        self._handed_out(self._scheduler(msg[1]).request(req))

    def _summary(self) -> dict[str, Any]:
        servers = [
            c.info
            for c in self._channels
            if isinstance(c, _TrackerConn) and str(c.info.get("key", "")).startswith("server")
        ]
        queues = {key: sched.summary() for key, sched in self._schedulers.items()}
        return {"queue_info": queues, "server_info": servers}
