"""``SerialChannel``: the RPC byte stream carried over serial framing and a session, on a raw link.

The raw link is any :class:`~pytvm.rpc.channel.Channel` standing in for a UART (a pipe to a
device process, a socket to a serial bridge, an in-memory pair in tests). Bytes given to
:meth:`SerialChannel.send` travel as ``NORMAL`` session messages (split to the peer's frame
limit); received messages of the current session are reassembled into the stream that
:meth:`SerialChannel.recv` returns, so an RPC endpoint runs on top unchanged.

The initiator (normally the host) sends ``START_INIT`` on first use and waits for the reply; a
responder (``initiator=False``, e.g. a server) answers whatever start arrives. A restart by the
peer after the first session discards the data still buffered and makes the next ``recv`` raise
``ConnectionResetError`` once; later calls carry the new session. ``LOG`` messages go to
``on_log`` (default: the ``pytvm.crt.serial`` logger). The C counterpart for a board is
``pytvm/src/crt/serial_stream.h``.

Examples
--------
>>> from pytvm.rpc.channel import memory_pair
>>> near, far = memory_pair()
>>> host, board = SerialChannel(near), SerialChannel(far, initiator=False)
>>> import threading; t = threading.Thread(target=lambda: board.send(board.recv(5))); t.start()
>>> host.send(b"hello"); host.recv(5)
b'hello'
>>> t.join(); host.close()
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from ..rpc.channel import Channel
from .framing import DEFAULT_MAX_PAYLOAD
from .serial_session import EventKind, SerialSession, SessionEvent, SessionState

__all__ = ["SerialChannel"]

log = logging.getLogger("pytvm.crt.serial")

_JOIN_LIMIT = 1 << 16


class SerialChannel(Channel):
    """A :class:`Channel` whose bytes cross ``transport`` as framed serial-session messages."""

    def __init__(
        self,
        transport: Channel,
        *,
        initiator: bool = True,
        max_payload: int = DEFAULT_MAX_PAYLOAD,
        tx_max_payload: int | None = None,
        nonce_source: Callable[[], int] | None = None,
        on_log: Callable[[bytes], None] | None = None,
        read_size: int = 1 << 16,
    ) -> None:
        self.transport = transport
        self.initiator = initiator
        self.peer = f"serial session over {transport.peer}"
        self._session = SerialSession(
            self._write,
            max_payload=max_payload,
            tx_max_payload=tx_max_payload,
            nonce_source=nonce_source,
        )
        self._on_log = on_log or self._log
        self._read_size = read_size
        self._tx_lock = threading.Lock()  # one frame at a time on the link
        self._rx_lock = threading.RLock()  # one reader of the link
        self._state_lock = threading.Lock()  # session state changes
        self._rx = bytearray()
        self._sessions = 0
        self._own_restart = False
        self._reset_pending = False
        self._eof = False

    @property
    def session(self) -> SerialSession:
        """The session state machine (state, id, dropped and framing error counters)."""
        return self._session

    def _log(self, text: bytes) -> None:
        log.info("%s: %s", self.peer, text.decode("utf-8", errors="replace"))

    def _write(self, frame: bytes) -> None:
        with self._tx_lock:
            self.transport.send(frame)

    def _start(self) -> None:
        with self._state_lock:
            self._rx.clear()
            self._own_restart = True
            self._session.start()

    def _handle(self, event: SessionEvent) -> None:
        if event.kind == EventKind.DATA:
            self._rx += event.body
        elif event.kind == EventKind.STARTED:
            if self._sessions and not self._own_restart:  # the peer restarted
                self._rx.clear()
                self._reset_pending = True
            self._sessions += 1
            self._own_restart = False
        else:
            self._on_log(event.body)

    def _pump(self) -> bool:
        """Read the link once and process what came; ``False`` at its end. Holds ``_rx_lock``."""
        if self.initiator and self._session.state == SessionState.IDLE:
            self._start()
        chunk = self.transport.recv(self._read_size)
        if not chunk:
            self._eof = True
            return False
        with self._state_lock:
            events = self._session.receive(chunk)
            for event in events:
                self._handle(event)
        return True

    def _ensure_session(self) -> None:
        if self._session.established:
            return
        with self._rx_lock:
            while not self._session.established:
                if self._eof or not self._pump():
                    raise ConnectionError(
                        f"serial link {self.transport.peer} closed before the session handshake "
                        "finished; check that the other end runs a serial session responder"
                    )

    def reset(self) -> None:
        """Start a new session from this side (dropping buffered data) and wait until it is up."""
        with self._rx_lock:
            self._start()
            self._ensure_session()

    def send(self, data: bytes | bytearray | memoryview) -> None:
        self._ensure_session()
        self._session.send(data)

    def send_parts(self, parts: Sequence[bytes | bytearray | memoryview]) -> None:
        if sum(memoryview(p).nbytes for p in parts) <= _JOIN_LIMIT:
            self.send(b"".join(parts))
            return
        for part in parts:
            if memoryview(part).nbytes:
                self.send(part)

    def recv(self, size: int) -> bytes:
        with self._rx_lock:
            while True:
                if self._reset_pending:
                    self._reset_pending = False
                    raise ConnectionResetError(
                        f"{self.peer}: the peer restarted the serial session; data of the old "
                        "session was dropped and the stream continues with the new one"
                    )
                if self._rx:
                    out = bytes(self._rx[:size])
                    del self._rx[:size]
                    return out
                if self._eof or not self._pump():
                    return b""

    def close(self) -> None:
        self.transport.close()
