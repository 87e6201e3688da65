"""The server loop's intake of connections: accepting them and reading each client's handshake
record (``i32 magic, i32 keylen, key``, ``spec/rpc-protocol.md`` section 1) from a non-blocking
socket, so a client that is slow to send it holds a socket and a few bytes of the loop, never a
process.
"""

from __future__ import annotations

import logging
import socket
import struct
from functools import partial

from ..wire.base import MAX_KEY_BYTES, RPC_CODE_MISMATCH, RPC_MAGIC, ProtocolError, set_nodelay
from ._event_loop import EventLoop, Timer

__all__ = ["BadMagic", "HandshakeClosed", "HandshakeIntake", "PendingHandshake", "refuse"]

logger = logging.getLogger("pytvm.rpc.server")

_HEADER = struct.Struct("<ii")
_I32 = struct.Struct("<i")


class HandshakeClosed(ConnectionError):
    """The client closed (or reset) the connection before its handshake record was complete."""


class BadMagic(ProtocolError):
    """The first i32 is not ``RPC_MAGIC``: not a TVM RPC client; the connection is dropped
    without an answer, as TVM's server does.
    """


class PendingHandshake:
    """One accepted connection whose handshake record is still arriving.

    Parameters
    ----------
    conn : socket.socket
        The accepted connection, non-blocking.
    peer : str
        ``host:port`` of the client, for log lines.
    """

    def __init__(self, conn: socket.socket, peer: str) -> None:
        self.conn, self.peer = conn, peer
        self.deadline: Timer | None = None  # closes the connection when the time is up
        self._buf = bytearray()
        self._need = _HEADER.size  # bytes of the current part still missing
        self._key_len: int | None = None

    def feed(self) -> str | None:
        """Read what the socket holds (never past the record); the key once it is complete.

        Raises
        ------
        HandshakeClosed
            The client went away first.
        BadMagic
            The first i32 is not ``RPC_MAGIC``.
        ProtocolError
            The key length is negative or over ``MAX_KEY_BYTES``.
        """
        while True:
            try:
                chunk = self.conn.recv(self._need - len(self._buf))
            except (BlockingIOError, InterruptedError):
                return None
            except OSError as err:
                raise HandshakeClosed(f"{self.peer}: {err}") from err
            if not chunk:
                raise HandshakeClosed(f"{self.peer} closed the connection during the handshake")
            self._buf += chunk
            if len(self._buf) < self._need:
                continue  # the next recv says whether more has arrived
            if self._key_len is not None:
                return self._buf.decode("utf-8", errors="replace")
            magic, size = _HEADER.unpack(self._buf)
            if magic != RPC_MAGIC:
                raise BadMagic(f"handshake magic {magic:#x} is not RPC_MAGIC {RPC_MAGIC:#x}")
            if not 0 <= size <= MAX_KEY_BYTES:
                raise ProtocolError(f"handshake key length {size} outside 0..{MAX_KEY_BYTES}")
            self._key_len, self._need = size, size
            self._buf.clear()
            if not size:
                return ""


def refuse(conn: socket.socket) -> None:
    """Answer ``RPC_CODE_MISMATCH`` (best effort: the client may be gone) and close."""
    try:
        conn.send(_I32.pack(RPC_CODE_MISMATCH))
    except OSError:
        pass
    conn.close()


class HandshakeIntake:
    """Server mixin: accepts connections and reads their handshake records in the loop.

    At most ``max_pending_handshakes`` records are read at once (beyond that the listening
    socket rests and the kernel's backlog holds new connections); each must be complete within
    ``handshake_timeout`` seconds of its accept (a timer). A complete key goes to ``_admit``.
    """

    _loop: EventLoop
    _listen: socket.socket | None
    _pending: dict[int, PendingHandshake]
    _accepting: bool
    max_pending_handshakes: int
    handshake_timeout: float

    def _admit(self, conn: socket.socket, peer: str, client_key: str) -> None:
        raise NotImplementedError

    def _on_accept(self) -> None:
        assert self._listen is not None
        while len(self._pending) < self.max_pending_handshakes:
            try:
                conn, addr = self._listen.accept()
            except (BlockingIOError, InterruptedError):
                return
            except OSError as err:  # e.g. out of descriptors: the next readable event retries
                logger.warning("rpc server: accept failed: %s", err)
                return
            conn.setblocking(False)
            set_nodelay(conn)
            pending = PendingHandshake(conn, f"{addr[0]}:{addr[1]}")
            self._pending[conn.fileno()] = pending
            self._on_key(pending)  # the record usually came with the connection
            if self._pending.get(conn.fileno()) is pending:
                pending.deadline = self._loop.call_later(
                    self.handshake_timeout, partial(self._expire_handshake, pending)
                )
                self._loop.add_reader(conn, partial(self._on_key, pending))
        if self._accepting and self._listen is not None:
            self._accepting = False
            self._loop.unwatch(self._listen)
            logger.warning(
                "rpc server: %d handshakes pending (max_pending_handshakes); accepting again "
                "when one completes or times out",
                len(self._pending),
            )

    def _on_key(self, pending: PendingHandshake) -> None:
        if self._pending.get(pending.conn.fileno()) is not pending:
            return  # already finished
        try:
            key = pending.feed()
        except BadMagic as err:
            logger.info("rpc client %s: %s; closed", pending.peer, err)
            self._drop(pending)
            return
        except HandshakeClosed as err:
            logger.info("rpc client %s left during the handshake: %s", pending.peer, err)
            self._drop(pending)
            return
        except ProtocolError as err:
            logger.warning("refused rpc client %s: %s", pending.peer, err)
            self._drop(pending, answer=True)
            return
        if key is not None:
            self._forget(pending)
            self._admit(pending.conn, pending.peer, key)

    def _expire_handshake(self, pending: PendingHandshake) -> None:
        if self._pending.get(pending.conn.fileno()) is not pending:
            return  # already finished
        logger.warning(
            "rpc client %s did not complete its handshake within %g s; closed",
            pending.peer,
            self.handshake_timeout,
        )
        self._drop(pending)

    def _drop(self, pending: PendingHandshake, answer: bool = False) -> None:
        self._forget(pending)
        if answer:
            refuse(pending.conn)
        else:
            pending.conn.close()

    def _forget(self, pending: PendingHandshake) -> None:
        """Stop watching ``pending`` (its socket stays open); accept again if that was paused."""
        self._pending.pop(pending.conn.fileno(), None)
        self._loop.unwatch(pending.conn)
        if pending.deadline is not None:
            pending.deadline.cancel()
        if not self._accepting and self._listen is not None:
            self._accepting = True
            self._loop.add_reader(self._listen, self._on_accept)

    def _close_handshakes(self) -> None:
        for pending in list(self._pending.values()):
            self._drop(pending)
