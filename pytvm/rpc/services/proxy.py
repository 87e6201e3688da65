"""The RPC proxy: pairs servers and clients that both dial in, then relays their bytes.

Wire protocol (TVM 0.27's, ``spec/rpc-protocol.md`` section 10, without the websocket variant):

* Every connection opens with the client half of the RPC handshake: ``i32 RPC_MAGIC`` (0xFF271),
  ``i32 keylen``, ``keylen`` bytes of key. A wrong magic or a bad length closes it. The key starts
  with ``server:`` (an RPC server offering itself) or ``client:`` (a client looking for one); the
  *match key* is the text after those 7 characters up to the first whitespace, and any further
  tokens (``-timeout=10``) are options for the server.
* Plain mode: two pools, servers and clients, keyed by match key. A newcomer whose key waits in
  the other pool is paired at once. Otherwise it waits in its own pool for ``timeout_server`` /
  ``timeout_client`` seconds, then gets ``i32 0xFF273`` (mismatch) and is closed. A newcomer
  whose key already waits in its *own* pool gets ``i32 0xFF272`` (duplicate) and is closed.
  A client whose match key no server has ever offered here waits at most
  ``timeout_unknown_key`` seconds (logged when it arrives and when it is refused).
* Pairing: each side gets ``i32 RPC_MAGIC``, ``i32 len``, and the *other* side's full key (so the
  server sees the client's options). From then on bytes are relayed verbatim both ways until
  either side closes; then the other side is closed once what was queued for it is written.
* Tracker mode (``tracker_addr`` given): each server gets a fresh match key
  ``<key>:<random>``, registered with the tracker as ``[3, key, [proxy_port, match_key], null]``
  and advertised with ``UPDATE_INFO {"key": "server:proxy[<key1>,<key2>..]",
  "addr": [null, proxy_port]}``. A client (whose match key came from the tracker) must find it in
  the server pool, else it gets 0xFF273 at once. Every 2 s the proxy polls
  ``GET_PENDING_MATCHKEYS``; a key handed out by the tracker but unused for more than 5 s is
  replaced by a new one and PUT again. With a ``tracker_token`` the proxy proves it to the
  tracker first (``_auth``).

Relaying reads up to 256 KiB per system call and stops reading a side while more than 4 MiB
wait to be written to its peer (back-pressure).
"""

from __future__ import annotations

import logging
import socket
import struct
import time

from ..wire._auth import authenticate
from ..wire.base import (
    RPC_CODE_DUPLICATE,
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPC_TRACKER_MAGIC,
    ProtocolError,
    TrackerCode,
    random_key,
    recvall,
    recvjson,
    sendjson,
    set_nodelay,
    split_random_key,
)
from ._selector_server import Connection, SelectorServer

__all__ = ["Proxy"]

logger = logging.getLogger("pytvm.rpc.proxy")

#: Longest handshake key accepted.
MAX_KEY_BYTES = 4096
#: Bytes a side may send before pairing (kept and relayed once paired).
MAX_EARLY_BYTES = 1 << 16
#: Stop reading a side while this much waits to be written to its peer.
HIGH_WATER = 4 << 20
#: Server match keys remembered as "known" (oldest forgotten first).
MAX_KNOWN_KEYS = 4096

#: The handshake's head: ``i32 magic, i32 keylen`` (the key follows).
_MAGIC_AND_LEN = struct.Struct("<ii")


class _ProxyConn(Connection):
    """One proxied connection: handshake parsing, then relaying to ``peer``."""

    server: Proxy

    def __init__(self, proxy: Proxy, sock: socket.socket, addr: tuple[str, int]) -> None:
        super().__init__(proxy, sock, addr)
        self.inbuf = bytearray()
        self.rpc_key: str | None = None
        self.match_key = ""
        self.is_server = False
        self.peer: _ProxyConn | None = None
        self.alloc_time: float | None = None

    def name(self) -> str:
        return f"{self.addr[0]}:{self.addr[1]} ({self.rpc_key})"

    def on_data(self, data: bytes) -> None:
        peer = self.peer
        if peer is not None:
            peer.write(data)
            if len(peer.out) > HIGH_WATER:
                self.pause_reading()
            return
        self.inbuf += data
        if self.rpc_key is None:
            self._parse_handshake()
        elif len(self.inbuf) > MAX_EARLY_BYTES:
            logger.warning(
                "proxy: %s sent %d bytes before pairing; closing", self.name(), len(self.inbuf)
            )
            self.close()

    def _parse_handshake(self) -> None:
        if len(self.inbuf) < _MAGIC_AND_LEN.size:
            return
        magic, size = _MAGIC_AND_LEN.unpack_from(self.inbuf)
        if magic != RPC_MAGIC:
            logger.warning("proxy: wrong magic %#x from %s:%d; closing", magic, *self.addr[:2])
            self.close()
            return
        if size < 0 or size > MAX_KEY_BYTES:
            logger.warning("proxy: key length %d from %s:%d; closing", size, *self.addr[:2])
            self.close()
            return
        end = _MAGIC_AND_LEN.size + size
        if len(self.inbuf) < end:
            return
        key = bytes(self.inbuf[_MAGIC_AND_LEN.size : end]).decode("utf-8", errors="replace")
        del self.inbuf[:end]
        if not key.startswith(("server:", "client:")):
            logger.warning(
                "proxy: key %r from %s:%d is neither server: nor client:", key, *self.addr[:2]
            )
            self.write(struct.pack("<i", RPC_CODE_MISMATCH))
            self.close_after_flush()
            return
        self.rpc_key = key
        self.is_server = key.startswith("server:")
        tokens = key[7:].split()
        self.match_key = tokens[0] if tokens else ""
        self.server._ready(self)

    def refuse(self, code: int) -> None:
        self.write(struct.pack("<i", code))
        self.close_after_flush()

    def on_drained(self) -> None:
        if self.peer is not None:
            self.peer.resume_reading()

    def on_close(self) -> None:
        self.server._forget(self)
        peer, self.peer = self.peer, None
        if peer is not None:
            peer.peer = None
            peer.close_after_flush()


class Proxy(SelectorServer):
    """An RPC proxy serving TVM's proxy protocol from a background thread.

    Parameters
    ----------
    host : str
        Address to listen on.
    port : int
        First port to try; ``0`` lets the kernel choose.
    port_end : int
        One past the last port to try.
    timeout_client : float
        Seconds an unmatched client waits before it gets 0xFF273 (plain mode).
    timeout_server : float
        Seconds an unmatched server waits before it gets 0xFF273 (plain mode).
    tracker_addr : tuple of (str, int), optional
        Register waiting servers with this tracker (tracker mode).
    timeout_unknown_key : float
        Seconds a client waits for a key no server has offered here yet (plain mode); at most
        ``timeout_client``.
    tracker_token : str, optional
        The tracker's token (``Tracker(token=...)``), proved before registering servers.

    Examples
    --------
    >>> import socket, struct
    >>> from pytvm.rpc.wire.base import RPC_MAGIC, send_key, recv_key
    >>> with Proxy(port=0) as proxy:
    ...     srv = socket.create_connection(("127.0.0.1", proxy.port))
    ...     cli = socket.create_connection(("127.0.0.1", proxy.port))
    ...     send_key(srv, RPC_MAGIC, "server:k")
    ...     send_key(cli, RPC_MAGIC, "client:k")
    ...     replies = [(struct.unpack("<i", s.recv(4))[0], recv_key(s)) for s in (cli, srv)]
    ...     srv.close(); cli.close()
    >>> replies == [(RPC_MAGIC, "server:k"), (RPC_MAGIC, "client:k")]
    True
    """

    #: Seconds between tracker polls (tracker mode).
    update_tracker_period = 2.0
    #: Seconds a handed-out match key may stay unused before it is regenerated.
    timeout_alloc = 5.0

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9091,
        port_end: int = 9199,
        timeout_client: float = 600,
        timeout_server: float = 600,
        tracker_addr: tuple[str, int] | None = None,
        *,
        timeout_unknown_key: float = 30.0,
        tracker_token: str | None = None,
    ) -> None:
        super().__init__(host, port, port_end, name="pytvm-rpc-proxy")
        self.timeout_unknown_key = timeout_unknown_key
        self.tracker_token = tracker_token
        self._known_keys: dict[str, None] = {}
        self.timeout_client = timeout_client
        self.timeout_server = timeout_server
        self.tracker_addr = tracker_addr
        self._server_pool: dict[str, _ProxyConn] = {}
        self._client_pool: dict[str, _ProxyConn] = {}
        self._tracker: socket.socket | None = None
        self._pending_puts: list[str] = []
        self._advertised: set[str] = set()
        logger.info("proxy: listening on %s:%d", host, self.port)
        if tracker_addr is not None:
            self.call_later(self.update_tracker_period, self._poll_tracker)
        self._start()

    # --------------------------------------------------------------- matching
    def _accepted(self, sock: socket.socket, addr: tuple[str, int]) -> Connection:
        return _ProxyConn(self, sock, addr)

    def _ready(self, conn: _ProxyConn) -> None:
        logger.info("proxy: %s is ready", conn.name())
        if self.tracker_addr is not None:
            self._ready_tracker_mode(conn)
            return
        own, other = (
            (self._server_pool, self._client_pool)
            if conn.is_server
            else (self._client_pool, self._server_pool)
        )
        key = conn.match_key
        if conn.is_server:
            self._known_keys.pop(key, None)
            self._known_keys[key] = None
            while len(self._known_keys) > MAX_KNOWN_KEYS:
                del self._known_keys[next(iter(self._known_keys))]
        if key in other:
            self._pair(other.pop(key), conn)
        elif key in own:
            logger.info("proxy: duplicate key %r from %s", key, conn.name())
            conn.refuse(RPC_CODE_DUPLICATE)
        else:
            own[key] = conn
            timeout = self.timeout_server if conn.is_server else self.timeout_client
            if not conn.is_server and key not in self._known_keys:
                timeout = min(timeout, self.timeout_unknown_key)
                logger.warning(
                    "proxy: %s asks for key %r, which no server has offered here (known keys: "
                    "%s); it waits at most %g s",
                    conn.name(),
                    key,
                    sorted(self._known_keys)[:20],
                    timeout,
                )
            self.call_later(timeout, lambda: self._expire(conn, own, timeout))

    def _ready_tracker_mode(self, conn: _ProxyConn) -> None:
        if conn.is_server:
            conn.match_key = random_key(conn.match_key + ":", self._server_pool)
            self._server_pool[conn.match_key] = conn
            self._pending_puts.append(conn.match_key)
            self._update_tracker(poll=False)
        elif conn.match_key in self._server_pool:
            self._pair(self._server_pool.pop(conn.match_key), conn)
        else:
            logger.warning(
                "proxy: no server waits under match key %r for %s (the tracker handed out a "
                "stale key, or the server left); refused",
                conn.match_key,
                conn.name(),
            )
            conn.refuse(RPC_CODE_MISMATCH)

    def _expire(self, conn: _ProxyConn, pool: dict[str, _ProxyConn], timeout: float) -> None:
        if pool.get(conn.match_key) is conn:
            del pool[conn.match_key]
            other = "client" if conn.is_server else "server"
            logger.warning(
                "proxy: no %s for %s within %g s; answered mismatch", other, conn.name(), timeout
            )
            conn.refuse(RPC_CODE_MISMATCH)

    def _pair(self, first: _ProxyConn, second: _ProxyConn) -> None:
        assert first.rpc_key is not None and second.rpc_key is not None
        first.peer, second.peer = second, first
        for me, other in ((first, second), (second, first)):
            key = other.rpc_key.encode()  # type: ignore[union-attr]
            me.write(struct.pack("<ii", RPC_MAGIC, len(key)) + key)
        for me, other in ((first, second), (second, first)):
            if me.inbuf:
                early = bytes(me.inbuf)
                me.inbuf.clear()
                other.write(early)
        logger.info("proxy: paired %s and %s", first.name(), second.name())

    def _forget(self, conn: _ProxyConn) -> None:
        for pool in (self._server_pool, self._client_pool):
            if pool.get(conn.match_key) is conn:
                del pool[conn.match_key]

    # --------------------------------------------------------------- tracker mode
    def _poll_tracker(self) -> None:
        self._update_tracker(poll=True)
        self.call_later(self.update_tracker_period, self._poll_tracker)

    def _tracker_call(self, message: list[object]) -> object:
        assert self._tracker is not None
        sendjson(self._tracker, message)
        return recvjson(self._tracker)

    def _connect_tracker(self) -> socket.socket:
        assert self.tracker_addr is not None
        sock = socket.create_connection(self.tracker_addr, timeout=10.0)
        set_nodelay(sock)
        sock.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
        (magic,) = struct.unpack("<i", recvall(sock, 4))
        if magic != RPC_TRACKER_MAGIC:
            sock.close()
            raise ProtocolError(f"{self.tracker_addr} answered magic {magic:#x}; not a tracker")
        if self.tracker_token:

            def call(message: list[object]) -> object:
                sendjson(sock, message)
                return recvjson(sock)

            try:
                where = f"{self.tracker_addr[0]}:{self.tracker_addr[1]}"
                authenticate(call, self.tracker_token, where)
            except BaseException:
                sock.close()
                raise
        self._pending_puts = list(self._server_pool)
        self._advertised = set()
        return sock

    def _update_tracker(self, poll: bool) -> None:
        try:
            if self._tracker is None:
                self._tracker = self._connect_tracker()
            if poll:
                self._regenerate_stale_keys()
            new_keys = False
            for match_key in self._pending_puts:
                rpc_key = split_random_key(match_key)
                reply = self._tracker_call([TrackerCode.PUT, rpc_key, [self.port, match_key], None])
                if reply != TrackerCode.SUCCESS:
                    raise ProtocolError(f"tracker answered PUT with {reply!r}; expected 0")
                if rpc_key not in self._advertised:
                    self._advertised.add(rpc_key)
                    new_keys = True
            self._pending_puts = []
            if new_keys:
                keys = "server:proxy[" + ",".join(sorted(self._advertised)) + "]"
                info = {"key": keys, "addr": [None, self.port]}
                reply = self._tracker_call([TrackerCode.UPDATE_INFO, info])
                if reply != TrackerCode.SUCCESS:
                    raise ProtocolError(f"tracker answered UPDATE_INFO with {reply!r}")
        except (OSError, ProtocolError) as err:
            logger.warning(
                "proxy: lost tracker %s (%s); retrying in %g s",
                self.tracker_addr,
                err,
                self.update_tracker_period,
            )
            if self._tracker is not None:
                self._tracker.close()
                self._tracker = None
            self._regenerate_keys(list(self._server_pool))

    def _regenerate_stale_keys(self) -> None:
        pending = self._tracker_call([TrackerCode.GET_PENDING_MATCHKEYS])
        if not isinstance(pending, list):
            raise ProtocolError(f"tracker answered GET_PENDING_MATCHKEYS with {pending!r}")
        now = time.monotonic()
        stale = []
        for key, conn in self._server_pool.items():
            if key in pending or key in self._pending_puts:
                conn.alloc_time = None
            elif conn.alloc_time is None:
                conn.alloc_time = now
            elif now - conn.alloc_time > self.timeout_alloc:
                stale.append(key)
        if stale:
            logger.info("proxy: keys %s handed out but unused; regenerating", stale)
            self._pending_puts += self._regenerate_keys(stale)

    def _regenerate_keys(self, keys: list[str]) -> list[str]:
        fresh = []
        for key in keys:
            conn = self._server_pool.pop(key)
            conn.alloc_time = None
            conn.match_key = random_key(split_random_key(key) + ":", self._server_pool)
            self._server_pool[conn.match_key] = conn
            fresh.append(conn.match_key)
        return fresh

    def _shutdown_hook(self) -> None:
        if self._tracker is not None:
            self._tracker.close()
            self._tracker = None
