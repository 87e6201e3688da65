"""The serial link (the C runtime's serial session layer): message types, session ids and the
start/reset handshake.

The same protocol as ``pytvm_crt/serial_session.h`` (the C runtime's include root), byte for
byte. Every frame payload
(see :mod:`pytvm.rpc.wire.serial_framing`) is one message::

    type:u8 | session_id:u16le | body

======================  ========================================================================
``START_INIT`` (1)      body ``01 | max_payload:u32le`` (version, frame limit); id = the
                        initiator's nonce (1..255), high byte 0
``START_REPLY`` (2)     body ``01 | max_payload:u32le``; id = initiator nonce | responder
                        nonce << 8
``NORMAL`` (3)          application bytes (the RPC byte stream) of the established session;
                        an empty one is an end mark (see :meth:`SerialLink.send_mark`)
``LOG`` (4)             text from the sender, accepted whatever its id
======================  ========================================================================

Either side may (re)start at any time: it sends ``START_INIT`` with a fresh nonce and is
``STARTING``. A side that receives a valid ``START_INIT`` combines the initiator's nonce with one
of its own, answers ``START_REPLY`` and is ``ESTABLISHED`` (a ``STARTED`` event: whatever session
it had is over). The initiator is ``ESTABLISHED`` when the reply for its current nonce arrives.
``NORMAL`` messages are delivered only for the established id, so stale-session traffic is
dropped; so are unknown types, short messages and other versions (counted in ``dropped``).

Frame limits: ``max_payload`` in a ``START`` body is the largest frame payload its sender
accepts. Each side sends frames of at most the peer's announced limit (bounded by its own
``tx_max_payload`` cap, if given), so no frame over the receiver's buffer is ever sent. A body of
fewer than 5 bytes (the version byte alone, as older peers send it) means the default
:data:`DEFAULT_MAX_PAYLOAD`; older peers read only the version byte, so they accept the longer
body. A limit below :data:`MIN_MAX_PAYLOAD` makes the ``START`` malformed (dropped).

Ids change on every restart: an initiator avoids 0, its previous nonce and the current id's low
byte; a responder avoids 0 and the current id; a clashing nonce ``x`` becomes ``x % 255 + 1``.
A ``STARTING`` side drops a ``START_INIT`` whose nonce is not above its own (simultaneous starts:
the higher nonce initiates; equal nonces need one side to restart).

Examples
--------
>>> a_out, b_out = [], []
>>> a = SerialLink(a_out.append, nonce_source=lambda: 0x5A)
>>> b = SerialLink(b_out.append, nonce_source=lambda: 0xC3)
>>> a.start(); b.receive(a_out.pop())
[LinkEvent(kind=<EventKind.STARTED: 1>, body=b'', session_id=50010)]
>>> a.receive(b_out.pop())[0].session_id == b.session_id == 0xC35A
True
"""

from __future__ import annotations

import secrets
import struct
from collections.abc import Callable
from dataclasses import dataclass
from enum import IntEnum

from .serial_framing import DEFAULT_MAX_PAYLOAD, Framer, Unframer

__all__ = [
    "HEADER_SIZE",
    "MIN_MAX_PAYLOAD",
    "SESSION_VERSION",
    "START_BODY_SIZE",
    "EventKind",
    "LinkEvent",
    "LinkState",
    "MessageType",
    "SerialLink",
    "decode_message",
    "encode_message",
    "start_limit",
]

SESSION_VERSION = 1
HEADER_SIZE = 3
#: A START body with a frame limit: version + ``max_payload:u32le``.
START_BODY_SIZE = 5
#: The smallest frame payload limit: room for a START message with its limit.
MIN_MAX_PAYLOAD = HEADER_SIZE + START_BODY_SIZE
_HEADER = struct.Struct("<BH")
_START_BODY = struct.Struct("<BI")
_MAX_U32 = 0xFFFFFFFF

Bytes = bytes | bytearray | memoryview


class MessageType(IntEnum):
    """The first byte of a session message."""

    START_INIT = 1
    START_REPLY = 2
    NORMAL = 3
    LOG = 4


class LinkState(IntEnum):
    """Where a side is in the handshake."""

    IDLE = 0
    STARTING = 1
    ESTABLISHED = 2


class EventKind(IntEnum):
    """What :meth:`SerialLink.receive` reports."""

    STARTED = 1  # a new session is established: reset whatever rides on it
    DATA = 2  # the body of a NORMAL message of the current session
    LOG = 3  # the body of a LOG message


@dataclass(frozen=True, slots=True)
class LinkEvent:
    """One event from received bytes; ``session_id`` is the session current at the time."""

    kind: EventKind
    body: bytes = b""
    session_id: int = 0


def encode_message(msg_type: int, session_id: int, body: Bytes = b"") -> bytes:
    """The frame payload of one session message (header and body, not yet framed)."""
    return _HEADER.pack(msg_type, session_id) + bytes(body)


def decode_message(payload: Bytes) -> tuple[int, int, bytes] | None:
    """``(type, session_id, body)`` of a frame payload; ``None`` if it is too short."""
    if len(payload) < HEADER_SIZE:
        return None
    msg_type, session_id = _HEADER.unpack_from(payload)
    return msg_type, session_id, bytes(payload[HEADER_SIZE:])


def start_limit(body: bytes) -> int | None:
    """The frame limit a START body announces; ``None`` when the body is malformed."""
    if body[:1] != bytes([SESSION_VERSION]):
        return None
    if len(body) < START_BODY_SIZE:
        return DEFAULT_MAX_PAYLOAD  # the version byte alone: an older peer
    limit: int = _START_BODY.unpack_from(body)[1]
    return limit if limit >= MIN_MAX_PAYLOAD else None


def _next_nonce(value: int) -> int:
    return value % 255 + 1


def _random_nonce() -> int:
    return secrets.randbits(8)


class SerialLink:
    """One side of a serial session: feed it received bytes, it writes frames through ``write``.

    ``max_payload`` bounds received frames and is announced to the peer in the handshake; what
    :meth:`send` writes is bounded by the peer's announced limit (:attr:`peer_max_payload`,
    :data:`DEFAULT_MAX_PAYLOAD` until a handshake) and by ``tx_max_payload`` when given.
    ``nonce_source`` returns a byte per handshake (default: :mod:`secrets`). Not thread-safe:
    the caller serialises calls.
    """

    def __init__(
        self,
        write: Callable[[bytes], object],
        *,
        max_payload: int = DEFAULT_MAX_PAYLOAD,
        tx_max_payload: int | None = None,
        nonce_source: Callable[[], int] | None = None,
    ) -> None:
        for name, value in (("max_payload", max_payload), ("tx_max_payload", tx_max_payload)):
            if value is not None and value < MIN_MAX_PAYLOAD:
                raise ValueError(
                    f"{name} {value} leaves no room for a START message ({HEADER_SIZE}-byte "
                    f"header, {START_BODY_SIZE}-byte body); pass a frame payload limit of at "
                    f"least {MIN_MAX_PAYLOAD}"
                )
        self.max_payload = max_payload
        self.tx_cap = tx_max_payload
        self.peer_max_payload = DEFAULT_MAX_PAYLOAD
        self._start_body = _START_BODY.pack(SESSION_VERSION, min(max_payload, _MAX_U32))
        self.unframer = Unframer(max_payload)
        self._framer = Framer(write)
        self._nonce = nonce_source or _random_nonce
        self.state = LinkState.IDLE
        self.session_id = 0
        self.local_nonce = 0
        self.dropped = 0

    @property
    def tx_max_payload(self) -> int:
        """The largest frame payload this side sends now (the peer's limit, capped)."""
        if self.tx_cap is None:
            return self.peer_max_payload
        return min(self.tx_cap, self.peer_max_payload)

    @property
    def established(self) -> bool:
        """Whether data can be sent."""
        return self.state == LinkState.ESTABLISHED

    def _write_message(self, msg_type: int, session_id: int, body: Bytes) -> None:
        self._framer.write_frame([_HEADER.pack(msg_type, session_id), body])

    def start(self) -> None:
        """Send ``START_INIT`` with a fresh nonce (start, or restart a running session)."""
        nonce = self._nonce() & 0xFF
        for _ in range(3):
            if nonce not in (0, self.local_nonce, self.session_id & 0xFF):
                break
            nonce = _next_nonce(nonce)
        self.local_nonce = nonce
        self.state = LinkState.STARTING
        self._write_message(MessageType.START_INIT, nonce, self._start_body)

    def send(self, data: Bytes) -> None:
        """Send ``data`` as ``NORMAL`` messages, split to fit ``tx_max_payload``."""
        if self.state != LinkState.ESTABLISHED:
            raise ConnectionError(
                f"serial session is {self.state.name}, not ESTABLISHED; call start() and wait "
                "for the STARTED event before sending data"
            )
        view = memoryview(data).cast("B")
        chunk = self.tx_max_payload - HEADER_SIZE
        for offset in range(0, len(view), chunk):
            self._write_message(MessageType.NORMAL, self.session_id, view[offset : offset + chunk])

    def send_mark(self) -> None:
        """Send an end mark: an empty ``NORMAL`` message (the sender is at a packet boundary;
        see ``pytvm_crt/serial_rpc.h``). Receivers of the byte stream skip it.
        """
        if self.state != LinkState.ESTABLISHED:
            raise ConnectionError(
                f"serial session is {self.state.name}, not ESTABLISHED; an end mark belongs to "
                "an established session"
            )
        self._write_message(MessageType.NORMAL, self.session_id, b"")

    def send_log(self, text: Bytes | str) -> None:
        """Send one ``LOG`` message with the current id, in any state."""
        body = text.encode() if isinstance(text, str) else bytes(text)
        if len(body) > self.tx_max_payload - HEADER_SIZE:
            raise ValueError(
                f"log message of {len(body)} bytes does not fit one frame (at most "
                f"{self.tx_max_payload - HEADER_SIZE}); shorten it"
            )
        self._write_message(MessageType.LOG, self.session_id, body)

    def receive(self, data: Bytes) -> list[LinkEvent]:
        """Consume bytes from the link; the events they produce, in order."""
        events: list[LinkEvent] = []
        for payload in self.unframer.feed(data):
            event = self._on_message(payload)
            if event is not None:
                events.append(event)
        return events

    def _on_message(self, payload: bytes) -> LinkEvent | None:
        message = decode_message(payload)
        if message is None:
            self.dropped += 1
            return None
        msg_type, session_id, body = message
        event: LinkEvent | None = None
        if msg_type == MessageType.START_INIT:
            event = self._on_start_init(session_id, body)
        elif msg_type == MessageType.START_REPLY:
            event = self._on_start_reply(session_id, body)
        elif msg_type == MessageType.NORMAL:
            if self.state == LinkState.ESTABLISHED and session_id == self.session_id:
                event = LinkEvent(EventKind.DATA, body, session_id)
        elif msg_type == MessageType.LOG:
            event = LinkEvent(EventKind.LOG, body, self.session_id)
        if event is None:
            self.dropped += 1
        return event

    def _on_start_init(self, session_id: int, body: bytes) -> LinkEvent | None:
        """Answer a peer's ``START_INIT``; ``None`` when it is to be dropped."""
        low, high = session_id & 0xFF, session_id >> 8
        limit = start_limit(body)
        if (
            limit is None
            or high != 0
            or low == 0
            or (self.state == LinkState.STARTING and self.local_nonce >= low)
        ):
            return None
        self.peer_max_payload = limit
        return self._answer_start(low)

    def _on_start_reply(self, session_id: int, body: bytes) -> LinkEvent | None:
        """Take the reply to our ``START_INIT``; ``None`` when it is to be dropped."""
        low, high = session_id & 0xFF, session_id >> 8
        limit = start_limit(body)
        if (
            limit is None
            or high == 0
            or self.state != LinkState.STARTING
            or low != self.local_nonce
        ):
            return None
        self.peer_max_payload = limit
        self.session_id = session_id
        self.state = LinkState.ESTABLISHED
        return LinkEvent(EventKind.STARTED, b"", session_id)

    def _answer_start(self, initiator_nonce: int) -> LinkEvent:
        mine = self._nonce() & 0xFF
        while True:
            if mine == 0:
                mine = _next_nonce(mine)
            session_id = initiator_nonce | mine << 8
            if session_id != self.session_id:
                break
            mine = _next_nonce(mine)
        self.session_id = session_id
        self.state = LinkState.ESTABLISHED
        self._write_message(MessageType.START_REPLY, session_id, self._start_body)
        return LinkEvent(EventKind.STARTED, b"", session_id)
