"""Packets on a channel: the read buffer an endpoint parses packets from, and the ``wire``
layer of a trace (every channel ``send``, and every ``recv`` while a reply is awaited).

A server's wait for its next request is idle time, not wire time, so that ``recv`` is not
traced (``idle=True``); the ``server`` span of the packet starts when it arrives.

A request cut off halfway (Ctrl-C, a timeout, a failing channel) leaves the stream out of step:
part of a packet sent, or part of a reply unread. :meth:`PacketIO.break_stream` then closes the
channel (so the peer sees the end and frees its side) and every later send raises
``RPCSessionBrokenError`` saying what was cut off.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import Any

from ...ffi import trace as _trace
from ...ffi.errors import RPCSessionBrokenError
from .base import ProtocolError, RPCError
from .channel import Channel
from .protocol import Limits

__all__ = ["PacketIO"]

_U64 = struct.Struct("<Q")
_I32 = struct.Struct("<i")
_LEN_BYTES = _U64.size  # the u64 length before each packet
_CODE_BYTES = _I32.size  # the i32 code opening each packet body
_CHUNK = 1 << 16
_STAGE_STEP = 1 << 20


class _PeerClosed(Exception):
    """The peer closed the stream at a packet boundary (a clean end)."""


class PacketIO:
    """Buffered packet reads from ``channel`` and (traced) sends to it."""

    def __init__(self, channel: Channel, name: str, limits: Limits) -> None:
        self.channel = channel
        self.name = name
        self.limits = limits
        self.closed = False
        self.broken: str | None = None  # what was cut off, once the stream is out of step
        self._rbuf = bytearray()
        self._rpos = 0
        self._sent_bytes = 0  # of the last send (only kept while tracing)

    # ------------------------------------------------------------------ reading

    def _fill(self, n: int) -> None:
        """Make at least ``n`` unread bytes available in the read buffer."""
        if self._rpos and self._rpos == len(self._rbuf):
            self._rbuf.clear()
            self._rpos = 0
        while len(self._rbuf) - self._rpos < n:
            size = max(_CHUNK, n - (len(self._rbuf) - self._rpos))
            with _trace.span_of("wire", _describe_recv, self) as sp:
                chunk = self.channel.recv(size)
                sp.set(bytes=len(chunk))
            if not chunk:
                raise ConnectionError(
                    f"{self.channel.peer} closed the channel in the middle of a packet"
                )
            self._rbuf += chunk

    def _read(self, n: int) -> bytes:
        """Exactly ``n`` bytes (small reads come from the buffer)."""
        if len(self._rbuf) - self._rpos < n:
            if n > _STAGE_STEP:
                return bytes(self._read_staged(n))
            self._fill(n)
        start = self._rpos
        self._rpos = start + n
        return bytes(self._rbuf[start : self._rpos])

    def _read_into(self, view: memoryview) -> None:
        """Fill ``view`` exactly: buffered bytes first, then straight from the channel."""
        have = min(len(self._rbuf) - self._rpos, len(view))
        if have:
            view[:have] = self._rbuf[self._rpos : self._rpos + have]
            self._rpos += have
        got = have
        while got < len(view):
            with _trace.span_of("wire", _describe_recv, self) as sp:
                n = self.channel.recv_into(view[got:])
                sp.set(bytes=n)
            if n == 0:
                raise ConnectionError(
                    f"{self.channel.peer} closed the channel after {got} of {len(view)} data bytes"
                )
            got += n

    def _read_some(self, view: memoryview) -> int:
        """Up to ``len(view)`` bytes into ``view``: the buffered ones, else one receive (at
        least one byte); the count. For forwarding data on as it arrives.
        """
        have = len(self._rbuf) - self._rpos
        if have:
            n = min(have, len(view))
            view[:n] = self._rbuf[self._rpos : self._rpos + n]
            self._rpos += n
            return n
        with _trace.span_of("wire", _describe_recv, self) as sp:
            n = self.channel.recv_into(view)
            sp.set(bytes=n)
        if n == 0:
            raise ConnectionError(
                f"{self.channel.peer} closed the channel in the middle of a packet"
            )
        return n

    def _read_staged(self, n: int) -> bytearray:
        """``n`` bytes into a buffer that grows as they arrive (a length field alone never
        allocates more than what was actually received plus one step).
        """
        out = bytearray()
        while len(out) < n:
            step = min(_STAGE_STEP, n - len(out))
            start = len(out)
            out.extend(bytes(step))
            self._read_into(memoryview(out)[start:])
        return out

    def _skip(self, n: int) -> None:
        while n > 0:
            step = min(n, _STAGE_STEP)
            self._read(step)
            n -= step

    def _packet_length(self, idle: bool = False) -> int:
        """The next non-empty packet's body length; ``_PeerClosed`` at a clean end of stream.
        ``idle``: a server waiting for its next request (that wait is not traced).
        """
        while True:
            if len(self._rbuf) - self._rpos < _LEN_BYTES:
                if self._rpos == len(self._rbuf):
                    self._rbuf.clear()
                    self._rpos = 0
                    if idle:
                        chunk = self.channel.recv(_CHUNK)
                    else:
                        with _trace.span_of("wire", _describe_recv, self) as sp:
                            chunk = self.channel.recv(_CHUNK)
                            sp.set(bytes=len(chunk))
                    if not chunk:
                        raise _PeerClosed()
                    self._rbuf += chunk
                self._fill(_LEN_BYTES)
            size: int = _U64.unpack_from(self._rbuf, self._rpos)[0]
            self._rpos += _LEN_BYTES
            if size == 0:
                continue  # an empty packet is padding
            if size < _CODE_BYTES or size > self.limits.max_packet:
                raise ProtocolError(
                    f"packet length {size} outside {_CODE_BYTES}..{self.limits.max_packet}; "
                    "the stream cannot be trusted any more"
                )
            return size

    def _next_packet(self, idle: bool = False) -> tuple[int, int]:
        """``(code, body bytes after the code)`` of the next packet (code not validated)."""
        size = self._packet_length(idle)
        if len(self._rbuf) - self._rpos < _CODE_BYTES:
            self._fill(_CODE_BYTES)
        (code,) = _I32.unpack_from(self._rbuf, self._rpos)
        self._rpos += _CODE_BYTES
        return code, size - _CODE_BYTES

    # ------------------------------------------------------------------ the C codec's fast paths
    # (untraced: callers take them only while tracing is off and the C codec is on; whenever
    # they return None the general path above reads the same bytes)

    def _fill_if_empty(self) -> bool:
        """When every buffered byte is consumed, one receive into the emptied read buffer;
        False when that receive finds the end of the stream.
        """
        rbuf = self._rbuf
        if self._rpos == len(rbuf):
            rbuf.clear()
            self._rpos = 0
            chunk = self.channel.recv(_CHUNK)
            if not chunk:
                return False
            rbuf += chunk
        return True

    def _packet_ready(self, c: Any) -> tuple[int, int, int] | None:
        """``(code, body_start, body_end)`` in the read buffer of the next packet once it is
        whole (one receive when the buffer is empty, untraced); None when it is not whole yet,
        is padding or has a length the general path must refuse.
        """
        if not self._fill_if_empty():
            return None  # the general path sees the end of the stream again
        head: tuple[int, int, int] | None = c.packet_at(
            self._rbuf, self._rpos, self.limits.max_packet
        )
        return head

    def _take_return(self, c: Any) -> list[Any] | None:
        """The values of the next packet if it is a whole kReturn (one receive when the buffer
        is empty), consumed; None otherwise, nothing consumed. A malformed kReturn raises
        ``ProtocolError``.
        """
        if not self._fill_if_empty():
            return None
        rbuf = self._rbuf
        limits = self.limits
        got = c.take_return(
            rbuf, self._rpos, limits.max_packet, limits.max_args, limits.max_bytes, limits
        )
        if got is None:
            return None
        values: list[Any]
        values, self._rpos = got
        return values

    # ------------------------------------------------------------------ writing

    def _send(self, *parts: bytes | memoryview) -> None:
        if self.closed:
            raise self.closed_error()
        with _trace.span_of("wire", _describe_send, self, parts):
            if len(parts) == 1:
                self.channel.send(parts[0])  # the common case: one whole packet, no join
            else:
                self.channel.send_parts(parts)

    # ------------------------------------------------------------------ a stream out of step

    def closed_error(self) -> RPCError:
        """The error for a request on this closed (or broken) connection."""
        if self.broken is not None:
            return RPCSessionBrokenError(
                f"RPC session to {self.channel.peer} is broken: {self.broken}; open a new session"
            )
        return RPCError(f"{self.name}: the RPC session to {self.channel.peer} is closed")

    def break_stream(self, what: str, exc: BaseException) -> None:
        """Mark the stream out of step because ``exc`` cut off ``what`` (e.g. ``"a copy of 64
        bytes to the remote"``), and close the channel; no-op if already closed.
        """
        if self.closed:
            return
        detail = str(exc)
        self.broken = f"{what} was interrupted by {type(exc).__name__}" + (
            f" ({detail})" if detail else ""
        )
        self.closed = True
        try:
            self.channel.close()
        except Exception:
            pass


# ---------------------------------------------------------------------- tracing (only when on)


def _describe_send(io: PacketIO, parts: Sequence[bytes | memoryview]) -> tuple[str, dict[str, Any]]:
    """The ``wire`` span of a send (it keeps the byte count for the span above it)."""
    nbytes = sum(len(p) for p in parts)
    io._sent_bytes = nbytes
    return "send", {"bytes": nbytes, "peer": io.channel.peer}


def _describe_recv(io: PacketIO) -> tuple[str, dict[str, Any]]:
    """The ``wire`` span of a receive."""
    return "recv", {"peer": io.channel.peer}
