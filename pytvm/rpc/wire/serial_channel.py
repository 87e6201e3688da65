"""``SerialChannel``: the RPC byte stream carried over serial framing and a session, on a raw link.

The raw link is any :class:`~pytvm.rpc.wire.channel.Channel` standing in for a UART (a pipe to a
device process, a socket to a serial bridge, an in-memory pair in tests). Bytes given to
:meth:`SerialChannel.send` travel as ``NORMAL`` session messages (split to the peer's frame
limit); received messages of the current session are reassembled into the stream that
:meth:`SerialChannel.recv` returns, so an RPC endpoint runs on top unchanged.

The initiator (normally the host) sends ``START_INIT`` on first use and waits for the reply; a
responder (``initiator=False``, e.g. a server) answers whatever start arrives. A restart by the
peer after the first session discards the data still buffered and makes the next ``recv`` raise
``ConnectionResetError`` once; later calls carry the new session. ``LOG`` messages go to
``on_log`` (default: the ``pytvm.crt.serial`` logger). The C counterpart for a board is
``pytvm/src/crt/include/pytvm_crt/serial_stream.h``.

End marks: the outgoing bytes are followed as RPC packets (``u64`` length + body), and after
each ``send`` that ends a packet an empty ``NORMAL`` message is sent. A board reading through
``pytvm_crt/serial_rpc.h`` (the C runtime's include root) uses the marks to find packets torn
by a dropped frame and to answer them instead of waiting for bytes that will never come; plain
stream readers skip them (``packet_marks=False`` turns them off).

Threads: one thread may receive while another sends. Frames are queued under the state lock
and written under a separate send lock, so a sender never waits for a blocked read; whichever
thread needs bytes from the link reads it while the others wait on a condition for what it
delivers (the handshake, data, a restart, the end of the link).

Examples
--------
>>> from pytvm.rpc.wire.channel import memory_pair
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

from .channel import Channel
from .serial_framing import DEFAULT_MAX_PAYLOAD
from .serial_link import EventKind, LinkEvent, LinkState, SerialLink

__all__ = ["SerialChannel"]

log = logging.getLogger("pytvm.crt.serial")

_JOIN_LIMIT = 1 << 16
_LENGTH_SIZE = 8

Bytes = bytes | bytearray | memoryview


class _PacketEnds:
    """Follows the RPC packets (``u64`` length + body) of an outgoing byte stream."""

    def __init__(self) -> None:
        self._head = bytearray()
        self._left = 0

    def reset(self) -> None:
        self._head.clear()
        self._left = 0

    def feed(self, data: Bytes) -> bool:
        """Consume ``data``; whether the stream is at a packet boundary after it."""
        view = memoryview(data).cast("B")
        i, n = 0, len(view)
        while i < n:
            if self._left:
                take = min(self._left, n - i)
                self._left -= take
            else:
                take = min(_LENGTH_SIZE - len(self._head), n - i)
                self._head += view[i : i + take]
                if len(self._head) == _LENGTH_SIZE:
                    self._left = int.from_bytes(self._head, "little")
                    self._head.clear()
            i += take
        return n > 0 and self._left == 0 and not self._head


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
        packet_marks: bool = True,
    ) -> None:
        self.transport = transport
        self.initiator = initiator
        self.peer = f"serial session over {transport.peer}"
        self._session = SerialLink(
            self._queue,
            max_payload=max_payload,
            tx_max_payload=tx_max_payload,
            nonce_source=nonce_source,
        )
        self._on_log = on_log or self._log
        self._read_size = read_size
        self._marks = _PacketEnds() if packet_marks else None
        self._tx_lock = threading.Lock()  # frames reach the link one batch at a time, in order
        self._state = threading.Condition()  # session, buffers, outbox; notified after reads
        self._outbox: list[bytes] = []
        self._reading = False  # a thread is reading the link
        self._rx = bytearray()
        self._sessions = 0
        self._own_restart = False
        self._reset_pending = False
        self._eof = False

    @property
    def session(self) -> SerialLink:
        """The session state machine (state, id, dropped and framing error counters)."""
        return self._session

    def _log(self, text: bytes) -> None:
        log.info("%s: %s", self.peer, text.decode("utf-8", errors="replace"))

    def _queue(self, frame: bytes) -> None:
        """The session's write callback: runs under ``_state``, so it only queues."""
        self._outbox.append(frame)

    def _flush(self, wait: bool = True) -> None:
        """Write the queued frames, never holding ``_state`` while the link blocks.

        The writer drains the queue until it finds it empty and gives up the send lock inside
        ``_state``, so a frame queued meanwhile is written by it or finds the lock free. The
        reading thread passes ``wait=False``: it must keep reading while a sender is blocked on
        a full link (the peer may be blocked writing to us), and the sender writes its frames.
        """
        if not self._tx_lock.acquire(blocking=wait):
            return
        try:
            while True:
                with self._state:
                    frames, self._outbox = self._outbox, []
                    if not frames:
                        self._tx_lock.release()
                        return
                self.transport.send(frames[0] if len(frames) == 1 else b"".join(frames))
        except BaseException:
            self._tx_lock.release()
            raise

    def _start_locked(self) -> None:
        self._rx.clear()
        self._own_restart = True
        if self._marks is not None:
            self._marks.reset()
        self._session.start()

    def _handle(self, event: LinkEvent, logs: list[bytes]) -> None:
        if event.kind == EventKind.DATA:
            self._rx += event.body  # an end mark (empty body) adds nothing
        elif event.kind == EventKind.STARTED:
            if self._sessions and not self._own_restart:  # the peer restarted
                self._rx.clear()
                self._reset_pending = True
                if self._marks is not None:
                    self._marks.reset()
            self._sessions += 1
            self._own_restart = False
        else:
            logs.append(event.body)

    def _pump(self) -> None:
        """Read the link once and process what came. Only the thread that set ``_reading``."""
        with self._state:
            if self.initiator and self._session.state == LinkState.IDLE:
                self._start_locked()
        self._flush(wait=False)
        chunk = self.transport.recv(self._read_size)
        logs: list[bytes] = []
        with self._state:
            if not chunk:
                self._eof = True
            else:
                for event in self._session.receive(chunk):
                    self._handle(event, logs)
        self._flush(wait=False)  # handshake replies
        for text in logs:
            self._on_log(text)

    def _await(self, ready: Callable[[], bool]) -> None:
        """Return once ``ready()`` (checked under ``_state``) holds or the link ended; read the
        link while no other thread does, else wait for the reader's news.
        """
        while True:
            with self._state:
                while self._reading and not ready() and not self._eof:
                    self._state.wait()
                if ready() or self._eof:
                    return
                self._reading = True
            try:
                self._pump()
            finally:
                with self._state:
                    self._reading = False
                    self._state.notify_all()

    def _closed_before_handshake(self) -> ConnectionError:
        return ConnectionError(
            f"serial link {self.transport.peer} closed before the session handshake finished; "
            "check that the other end runs a serial session responder"
        )

    def reset(self) -> None:
        """Start a new session from this side (dropping buffered data) and wait until it is up."""
        with self._state:
            self._start_locked()
        self._flush()
        self._await(lambda: self._session.established)
        if not self._session.established:
            raise self._closed_before_handshake()

    def send(self, data: Bytes) -> None:
        """Send ``data`` in the established session, waiting for the handshake first."""
        while True:
            self._await(lambda: self._session.established)
            with self._state:
                if self._session.established:
                    self._session.send(data)
                    if self._marks is not None and self._marks.feed(data):
                        self._session.send_mark()
                    break
                if self._eof:
                    raise self._closed_before_handshake()
        self._flush()

    def send_parts(self, parts: Sequence[Bytes]) -> None:
        """Send ``parts`` in order: joined when small, one by one otherwise."""
        if sum(memoryview(p).nbytes for p in parts) <= _JOIN_LIMIT:
            self.send(b"".join(parts))
            return
        for part in parts:
            if memoryview(part).nbytes:
                self.send(part)

    def recv(self, size: int) -> bytes:
        """Up to ``size`` received bytes, waiting for some; raises if the peer restarted."""
        self._await(lambda: bool(self._rx) or self._reset_pending)
        with self._state:
            if self._reset_pending:
                self._reset_pending = False
                raise ConnectionResetError(
                    f"{self.peer}: the peer restarted the serial session; data of the old "
                    "session was dropped and the stream continues with the new one"
                )
            out = bytes(self._rx[:size])
            del self._rx[:size]
            return out

    def close(self) -> None:
        """Close the underlying transport."""
        self.transport.close()
