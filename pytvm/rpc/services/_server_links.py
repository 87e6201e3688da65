"""How a :class:`~pytvm.rpc.services.server.Server` reaches the outside: registration with a tracker
(spec section 9.4) and dialing out to a proxy (section 10.2). Mixins of ``Server``; they use its
event loop (pings, reconnects and redials are timers) and state.

The first registration happens in the server's constructor (``_tracker_connect`` before the
loop starts), so once ``Server(...)`` returns the tracker lists it and servers made one after
another are handed out in that order. With a ``tracker_token`` the server proves it to the
tracker before registering (``_auth``); a session's ``-tokenmac=`` is checked against the
match key the client presented.
"""

from __future__ import annotations

import logging
import socket
import struct
import time
from collections.abc import Callable
from functools import partial
from typing import Any

from ..wire._auth import authenticate
from ..wire.base import (
    RPC_CODE_DUPLICATE,
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPC_TRACKER_MAGIC,
    ProtocolError,
    TrackerCode,
    random_key,
    recv_key,
    recvall,
    recvjson,
    send_key,
    sendjson,
    set_nodelay,
    split_key_options,
)
from ..wire.protocol import encode_exception
from ._event_loop import EventLoop, Timer
from .server_env import HANDSHAKE_TIMEOUT

__all__ = ["ProxyLink", "TrackerLink", "dial"]

logger = logging.getLogger("pytvm.rpc.server")

_IO_TIMEOUT = 10.0
_I32 = struct.Struct("<i")


class TrackerLink:
    """Keeps the server registered with its tracker under a fresh match key per session."""

    _loop: EventLoop
    _tracker: socket.socket | None
    tracker_addr: tuple[str, int] | None
    tracker_token: str | None
    key: str
    custom_addr: str | None
    port: int
    ping_period: float
    unmatch_timeout: float
    _tracker_busy: bool
    _match_key: str
    _old_keys: set[str]
    _unmatched: int
    _poll_timer: Timer | None

    def _info(self, msg: str, *args: Any) -> None:
        raise NotImplementedError

    def _tracker_call(self, msg: list[Any]) -> Any:
        assert self._tracker is not None
        sendjson(self._tracker, msg)
        return recvjson(self._tracker)

    def _tracker_connect(self) -> None:
        assert self.tracker_addr is not None
        if self._tracker is not None:
            return  # connected meanwhile
        sock = None
        try:
            sock = dial(self.tracker_addr)
            sock.sendall(_I32.pack(RPC_TRACKER_MAGIC))
            (magic,) = _I32.unpack(recvall(sock, 4))
            if magic != RPC_TRACKER_MAGIC:
                raise ProtocolError(f"{self.tracker_addr} answered magic {magic:#x}, not a tracker")
            self._tracker = sock
            if self.tracker_token:
                where = f"{self.tracker_addr[0]}:{self.tracker_addr[1]}"
                authenticate(self._tracker_call, self.tracker_token, where)
            info = {"key": "server:" + self.key, "addr": [self.custom_addr, self.port]}
            if self._tracker_call([TrackerCode.UPDATE_INFO, info]) != TrackerCode.SUCCESS:
                raise ProtocolError("tracker refused UPDATE_INFO")
        except (OSError, ProtocolError, ValueError) as err:
            self._tracker = None
            if sock is not None:
                sock.close()
            self._loop.call_later(self.ping_period, self._tracker_connect)
            logger.warning("cannot register with tracker %s: %s; retrying", self.tracker_addr, err)
            return
        self._loop.add_reader(sock, lambda: self._on_tracker_readable(sock))
        self._info("registered with tracker %s as %r", self.tracker_addr, self.key)
        if not self._tracker_busy:
            self._put_new_key()

    def _put_new_key(self) -> None:
        self._old_keys.add(self._match_key)
        self._match_key = random_key(self.key + ":", self._old_keys)
        self._unmatched = 0
        self._arm_poll()
        msg = [TrackerCode.PUT, self.key, [self.port, self._match_key], self.custom_addr]
        try:
            if self._tracker_call(msg) != TrackerCode.SUCCESS:
                raise ProtocolError("tracker refused PUT")
        except (OSError, ProtocolError, ValueError) as err:
            self._tracker_lost(err)

    def _arm_poll(self) -> None:
        """Poll the pending match keys ``ping_period`` from now (replacing an earlier poll)."""
        if self._poll_timer is not None:
            self._poll_timer.cancel()
        self._poll_timer = self._loop.call_later(self.ping_period, self._poll_pending)

    def _poll_pending(self) -> None:
        self._poll_timer = None
        if self._tracker is None or self._tracker_busy:
            return  # polled again once registered anew (_put_new_key)
        self._arm_poll()
        try:
            pending = self._tracker_call([TrackerCode.GET_PENDING_MATCHKEYS])
        except (OSError, ProtocolError, ValueError) as err:
            self._tracker_lost(err)
            return
        self._unmatched = 0 if self._match_key in pending else self._unmatched + 1
        if self._unmatched * self.ping_period > self.unmatch_timeout + self.ping_period:
            self._info("match key handed out but unused; registering a new one")
            self._put_new_key()

    def _on_tracker_readable(self, sock: socket.socket) -> None:
        # The tracker only ever answers; anything readable now is a close or a protocol error.
        try:
            sock.settimeout(0)
            data = sock.recv(1)
            sock.settimeout(_IO_TIMEOUT)
        except BlockingIOError:
            sock.settimeout(_IO_TIMEOUT)
            return
        except OSError as err:
            self._tracker_lost(err)
            return
        self._tracker_lost("connection closed" if not data else "unexpected data")

    def _tracker_lost(self, why: object) -> None:
        if self._tracker is not None:
            self._loop.unwatch(self._tracker)
            self._tracker.close()
        self._tracker = None
        self._loop.call_soon(self._tracker_connect)
        logger.warning("lost tracker %s (%s); reconnecting", self.tracker_addr, why)


class ProxyLink:
    """Dials the proxy as ``server:<key>`` and serves one session per pairing."""

    _loop: EventLoop
    _proxy: socket.socket | None
    host: str
    port: int
    key: str
    retry_period: float
    max_retry: int
    _proxy_retries: int
    _dialed_at: float
    _dial_timer: Timer | None

    def _info(self, msg: str, *args: Any) -> None:
        raise NotImplementedError

    def _token_refusal(self, options: dict[str, str], head: str = "") -> str | None:
        raise NotImplementedError

    def _start_worker(
        self, conn: socket.socket, peer: str, client_key: str, then: Callable[[Any], None]
    ) -> None:
        raise NotImplementedError

    def _start_session(self, worker: Any, options: dict[str, str]) -> None:
        raise NotImplementedError

    def _dial_later(self, delay: float) -> None:
        """Dial the proxy ``delay`` seconds from now (replacing an earlier plan)."""
        if self._dial_timer is not None:
            self._dial_timer.cancel()
        self._dial_timer = self._loop.call_later(delay, self._proxy_dial)

    def _proxy_dial(self) -> None:
        self._dial_timer = None
        if self._proxy is not None:
            return
        self._dialed_at = time.monotonic()
        sock = None
        try:
            sock = dial((self.host, self.port))
            send_key(sock, RPC_MAGIC, "server:" + self.key)
        except OSError as err:
            if sock is not None:
                sock.close()
            self._proxy_failed(err)
            return
        self._proxy = sock
        self._loop.add_reader(sock, lambda: self._on_proxy_reply(sock))

    def _on_proxy_reply(self, sock: socket.socket) -> None:
        self._loop.unwatch(sock)
        self._proxy = None
        try:
            sock.settimeout(HANDSHAKE_TIMEOUT)
            (magic,) = _I32.unpack(recvall(sock, 4))
            if magic == RPC_CODE_DUPLICATE:
                logger.error(
                    "proxy %s:%d already has a server with key %r; stopping",
                    self.host,
                    self.port,
                    self.key,
                )
                sock.close()
                self._loop.stop()
                return
            if magic == RPC_CODE_MISMATCH:
                self._info("proxy found no client for key %r in time; dialing again", self.key)
                sock.close()
                quick = time.monotonic() - self._dialed_at < 1.0
                self._dial_later(self.retry_period if quick else 0.0)
                return
            if magic != RPC_MAGIC:
                raise ProtocolError(f"{self.host}:{self.port} answered {magic:#x}, not a proxy")
            client_key = recv_key(sock)
        except (OSError, ProtocolError) as err:
            sock.close()
            self._proxy_failed(err)
            return
        self._proxy_retries = 0
        sock.settimeout(None)
        peer = f"proxy {self.host}:{self.port}"
        try:
            head, options = split_key_options(client_key)
        except ProtocolError as err:  # e.g. -timeout=inf: refused, the server keeps serving
            options = {}
            reason: str | None = f"bad handshake key: {err}"
        else:
            reason = self._token_refusal(options, head)  # the proxy already matched the key
        if reason is not None:
            logger.warning("refused rpc client via %s: %s", peer, reason)
            try:  # the client already got the proxy's success reply: answer its kInitServer
                sock.sendall(encode_exception(f"RPCError: server refused client: {reason}"))
            except OSError:
                pass
            sock.close()
            self._dial_later(0.0)
            return
        self._start_worker(sock, peer, client_key, partial(self._proxy_session, sock, options))

    def _proxy_session(self, sock: socket.socket, options: dict[str, str], worker: Any) -> None:
        """A worker has the proxied connection (None: none came, dial again)."""
        if worker is None:
            sock.close()
            self._dial_later(0.0)
            return
        worker.proxy_session = True
        self._start_session(worker, options)
        self._info("rpc session via %s started (worker %d)", worker.peer, worker.pid)

    def _proxy_failed(self, err: BaseException) -> None:
        self._proxy_retries += 1
        if self._proxy_retries > self.max_retry:
            logger.error(
                "cannot reach proxy %s:%d after %d retries: %s; stopping",
                self.host,
                self.port,
                self.max_retry,
                err,
            )
            self._loop.stop()
            return
        logger.warning(
            "proxy %s:%d: %s; retry %d/%d in %g s",
            self.host,
            self.port,
            err,
            self._proxy_retries,
            self.max_retry,
            self.retry_period,
        )
        self._dial_later(self.retry_period)


def dial(addr: tuple[str, int]) -> socket.socket:
    """A TCP connection to ``addr``; refuses a loopback self-connection (while nothing listens
    on a port of the ephemeral range, a connect may pick that very port as its source).
    """
    sock = socket.create_connection(addr, timeout=_IO_TIMEOUT)
    if sock.getsockname() == sock.getpeername():
        sock.close()
        raise ConnectionRefusedError(f"nothing listens on {addr[0]}:{addr[1]}")
    set_nodelay(sock)
    return sock
