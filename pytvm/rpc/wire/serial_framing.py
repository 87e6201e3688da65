"""Serial-link framing (start byte, escaping, u32 length, CRC-16), byte-identical to the C code.

Frame layout on the wire (the same as ``pytvm/src/crt/include/pytvm_crt/serial_framing.h``)::

    SOP | escape( length:u32le | payload[length] | crc:u16le )

- ``SOP`` is the start-of-packet byte ``0x7E``; it never appears inside a frame, so a receiver
  resynchronises on the next ``0x7E`` after garbage, a reset peer or a corrupt frame.
- Escaping: each ``0x7E`` or ``0x7D`` (``ESC``) after the SOP is sent as ``0x7D, byte ^ 0x20``
  (``7E`` -> ``7D 5E``, ``7D`` -> ``7D 5D``); no other byte is escaped.
- ``length`` counts the unescaped payload bytes; an empty payload is allowed.
- ``crc`` is CRC-16/CCITT-FALSE (polynomial 0x1021, init 0xFFFF, not reflected, no final xor;
  check value 0x29B1 for ``b"123456789"``) over the unescaped length and payload bytes.

The :class:`Unframer` is a byte-at-a-time state machine (hunt for SOP, 4 length bytes, payload,
2 CRC bytes) that accepts payloads up to ``max_payload`` bytes. Each error drops the frame in
progress and is counted in ``errors``: a length over ``max_payload`` (rejected before any
payload byte is stored), a CRC mismatch, an ``ESC`` followed by anything but ``5E``/``5D``, or a
SOP before the frame in progress is complete (that SOP starts the next frame). Bytes seen while
hunting are counted in ``skipped``. Feeding a stream whole or split anywhere gives the same
payloads and counters. Shared test vectors: ``tests/crt/vectors/serial_framing.json``.

Examples
--------
>>> frame = encode_frame(b"hi")
>>> frame.hex()
'7e0200000068695cfa'
>>> Unframer().feed(b"noise" + frame)
[b'hi']
"""

from __future__ import annotations

import binascii
import re
import struct
from collections.abc import Callable, Iterable

__all__ = [
    "CRC_INIT",
    "DEFAULT_MAX_PAYLOAD",
    "ESC",
    "ESC_XOR",
    "SOP",
    "Framer",
    "Unframer",
    "crc16",
    "encode_frame",
]

SOP = 0x7E
ESC = 0x7D
ESC_XOR = 0x20
CRC_INIT = 0xFFFF
#: The payload limit both ends assume unless the integrator agrees on another.
DEFAULT_MAX_PAYLOAD = 4096
_MAX_LENGTH = 0xFFFFFFFF

_U32 = struct.Struct("<I")
_U16 = struct.Struct("<H")
_SPECIAL = re.compile(rb"[\x7d\x7e]")
_HUNT, _LENGTH, _PAYLOAD, _CRC = range(4)

Bytes = bytes | bytearray | memoryview


def crc16(data: Bytes, crc: int = CRC_INIT) -> int:
    """CRC-16/CCITT-FALSE of ``data``, continuing from ``crc``.

    Examples
    --------
    >>> hex(crc16(b"123456789"))
    '0x29b1'
    """
    return binascii.crc_hqx(data, crc)


def _escape(data: bytes) -> bytes:
    return data.replace(b"\x7d", b"\x7d\x5d").replace(b"\x7e", b"\x7d\x5e")


def encode_frame(payload: Bytes | Iterable[Bytes]) -> bytes:
    """The frame carrying ``payload`` (one buffer, or several sent as one payload)."""
    parts = [payload] if isinstance(payload, (bytes, bytearray, memoryview)) else list(payload)
    length = sum(memoryview(p).nbytes for p in parts)
    if length > _MAX_LENGTH:
        raise ValueError(
            f"frame payload of {length} bytes exceeds the u32 length field; split it into "
            "smaller payloads"
        )
    head = _U32.pack(length)
    crc = crc16(head)
    for part in parts:
        crc = crc16(part, crc)
    body = b"".join([head, *(bytes(p) for p in parts), _U16.pack(crc)])
    return b"\x7e" + _escape(body)


class Framer:
    """Encode payloads as frames and hand each whole frame to ``write`` (e.g. a UART send)."""

    def __init__(self, write: Callable[[bytes], object]) -> None:
        self._write = write

    def write_frame(self, payload: Bytes | Iterable[Bytes]) -> None:
        """Frame ``payload`` (a buffer or a sequence of buffers) and write it."""
        self._write(encode_frame(payload))


class Unframer:
    """Byte-fed frame decoder; :meth:`feed` returns the payloads that completed."""

    def __init__(self, max_payload: int = DEFAULT_MAX_PAYLOAD) -> None:
        if not 0 <= max_payload <= _MAX_LENGTH:
            raise ValueError(
                f"max_payload {max_payload} is out of range; expected 0..{_MAX_LENGTH}"
            )
        self.max_payload = max_payload
        #: Frames delivered, frames dropped, and bytes skipped outside frames.
        self.frames = 0
        self.errors = 0
        self.skipped = 0
        self.reset()

    def reset(self) -> None:
        """Drop any frame in progress and hunt for the next SOP; the counters are kept."""
        self._state = _HUNT
        self._escaped = False
        self._field = bytearray()  # length or CRC bytes so far
        self._payload = bytearray()
        self._length = 0

    def _begin(self) -> None:
        if self._state != _HUNT:
            self.errors += 1
        self.reset()
        self._state = _LENGTH

    def _fail(self) -> None:
        self.errors += 1
        self._state = _HUNT

    def feed(self, data: Bytes) -> list[bytes]:
        """Consume received bytes; the payloads of the frames they complete, in order."""
        data = bytes(data)
        out: list[bytes] = []
        i, n = 0, len(data)
        while i < n:
            if self._state == _HUNT:
                j = data.find(b"\x7e", i)
                if j < 0:
                    self.skipped += n - i
                    return out
                self.skipped += j - i
                self._begin()
                i = j + 1
                continue
            if self._state == _PAYLOAD and not self._escaped:  # copy a run of plain bytes
                end = min(n, i + self._length - len(self._payload))
                match = _SPECIAL.search(data, i, end)
                stop = match.start() if match else end
                if stop > i:
                    self._payload += data[i:stop]
                    i = stop
                    if len(self._payload) == self._length:
                        self._state = _CRC
                    continue
            self._byte(data[i], out)
            i += 1
        return out

    def _byte(self, byte: int, out: list[bytes]) -> None:
        """One byte inside a frame (not hunting), exactly as the C state machine takes it."""
        if byte == SOP:
            self._begin()
            return
        if self._escaped:
            self._escaped = False
            if byte not in (SOP ^ ESC_XOR, ESC ^ ESC_XOR):
                self._fail()
                return
            byte ^= ESC_XOR
        elif byte == ESC:
            self._escaped = True
            return
        if self._state == _LENGTH:
            self._length_byte(byte)
        elif self._state == _PAYLOAD:
            self._payload.append(byte)
            if len(self._payload) == self._length:
                self._state = _CRC
        else:
            self._crc_byte(byte, out)

    def _length_byte(self, byte: int) -> None:
        """One unescaped byte of the length field."""
        self._field.append(byte)
        if len(self._field) < _U32.size:
            return
        self._length = _U32.unpack(self._field)[0]
        self._field.clear()
        if self._length > self.max_payload:
            self._fail()
        else:
            self._state = _PAYLOAD if self._length else _CRC

    def _crc_byte(self, byte: int, out: list[bytes]) -> None:
        """One unescaped byte of the CRC; a complete, matching frame goes to ``out``."""
        self._field.append(byte)
        if len(self._field) < _U16.size:
            return
        self._state = _HUNT
        payload = bytes(self._payload)
        expected = crc16(payload, crc16(_U32.pack(self._length)))
        if _U16.unpack(self._field)[0] != expected:
            self.errors += 1
            return
        self.frames += 1
        out.append(payload)
