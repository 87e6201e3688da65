"""The device binary with ``--framing``: RPC inside serial frames and sessions, as a
UART-attached board speaks it; torn frames and packets are answered, never waited on.
"""

from __future__ import annotations

import os
import random
import select
import time
from collections.abc import Iterator
from typing import cast

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.crt import device_binary
from pytvm.ffi.errors import TVMError
from pytvm.rpc.sessions.forwarding_session import connect_channel
from pytvm.rpc.wire import protocol as wire
from pytvm.rpc.wire.channel import PipeChannel, popen_pipe, reap
from pytvm.rpc.wire.serial_channel import SerialChannel
from pytvm.rpc.wire.serial_framing import encode_frame
from pytvm.rpc.wire.serial_link import EventKind, MessageType, SerialLink, encode_message

pytestmark = pytest.mark.needs_cc

TIMEOUT = 5.0  # every read from the device waits at most this long
FRAME_BODY = 4093  # the device's 4096-byte frame payload less the 3-byte message header


def test_rpc_over_serial_frames_to_the_device_binary() -> None:
    raw, proc = popen_pipe([str(device_binary()), "--framing"])
    session = connect_channel(SerialChannel(raw), "framed device", process=proc)
    with rpc.RPCSession(session) as sess:
        assert sess.get_function("pytvm.device.echo")(41) == 41
        x = np.random.default_rng(3).random(1 << 18).astype("float32")  # 1 MiB
        a = pytvm.nd.array(x, sess.cpu())
        np.testing.assert_array_equal(a.numpy(), x)
        sess.get_function("pytvm.device.scale_f32")(a, 2.0)
        np.testing.assert_array_equal(a.numpy(), x * 2)
    assert proc.returncode == 0


class FramedDevice:
    """``pytvm-device --framing`` driven frame by frame from a hand-run session."""

    def __init__(self) -> None:
        self.link, self.proc = popen_pipe([str(device_binary()), "--framing"])
        self._out: list[bytes] = []
        self.session = SerialLink(self._out.append, nonce_source=lambda: 0x11)
        self._stream = bytearray()
        self.session.start()
        self._flush()
        deadline = time.monotonic() + TIMEOUT
        while not self.session.established:
            self._read(deadline)
        self.echo = self._init()

    def _flush(self) -> None:
        if self._out:
            self.link.send(b"".join(self._out))
            self._out.clear()

    def _read(self, deadline: float) -> None:
        ready, _, _ = select.select(
            [self.link.read_fd], [], [], max(0, deadline - time.monotonic())
        )
        if not ready:
            raise TimeoutError(f"pytvm-device sent nothing for {TIMEOUT} s")
        chunk = os.read(self.link.read_fd, 1 << 16)
        if not chunk:
            raise EOFError(f"pytvm-device closed the link (exit status {self.proc.poll()})")
        for event in self.session.receive(chunk):
            if event.kind == EventKind.DATA:
                self._stream += event.body
        self._flush()

    def frames(self, data: bytes) -> list[bytes]:
        """``data`` as NORMAL frames of the current session, split as SerialChannel splits."""
        sid = self.session.session_id
        return [
            encode_frame(encode_message(MessageType.NORMAL, sid, data[i : i + FRAME_BODY]))
            for i in range(0, len(data), FRAME_BODY)
        ]

    def mark(self) -> bytes:
        """An end mark: an empty NORMAL frame."""
        return encode_frame(encode_message(MessageType.NORMAL, self.session.session_id, b""))

    def send(self, *chunks: bytes) -> None:
        self.link.send(b"".join(chunks))

    def reply(self) -> tuple[int, list[object]]:
        """The next reply packet: its code and decoded values."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            if len(self._stream) >= 8:
                size = int.from_bytes(self._stream[:8], "little")
                if len(self._stream) >= 8 + size:
                    body = bytes(self._stream[8 : 8 + size])
                    del self._stream[: 8 + size]
                    reader = wire.Reader(body)
                    return reader.i32("code"), wire.decode_pseq(reader)
            self._read(deadline)

    def request(self, packet: bytes) -> tuple[int, list[object]]:
        self.send(*self.frames(packet), self.mark())
        return self.reply()

    def _init(self) -> int:
        code, _ = self.request(wire.encode_init_server())
        assert code == wire.RPCCode.RETURN
        code, values = self.request(
            wire.encode_syscall(wire.RPCCode.GET_GLOBAL_FUNC, ["pytvm.device.echo"])
        )
        assert code == wire.RPCCode.RETURN and isinstance(values[0], wire.Handle)
        return values[0].value

    def echo_call(self, value: object) -> bytes:
        return wire.encode_call(self.echo, [value])

    def assert_echo_works(self, value: object) -> None:
        assert self.request(self.echo_call(value)) == (wire.RPCCode.RETURN, [1, value])

    def close(self) -> None:
        self.link.close()
        reap(self.proc)


@pytest.fixture
def device() -> Iterator[FramedDevice]:
    dev = FramedDevice()
    try:
        yield dev
    finally:
        dev.close()


def assert_torn(reply: tuple[int, list[object]], why: str) -> None:
    code, values = reply
    assert code == wire.RPCCode.EXCEPTION, values
    text = str(values[0])
    assert "serial link: torn packet" in text and why in text and "not run" in text, text


def test_packet_claiming_more_than_its_frame_is_answered(device: FramedDevice) -> None:
    call = device.echo_call(8)
    torn = (len(call) - 8 + 100).to_bytes(8, "little") + call[8:]  # claims 100 bytes too many
    device.send(*device.frames(torn), device.mark(), *device.frames(device.echo_call(9)))
    device.send(device.mark())
    assert_torn(device.reply(), f"claims {len(call) - 8 + 100} body bytes but only")
    assert device.reply() == (wire.RPCCode.RETURN, [1, 9])  # the next request is intact


def test_truncated_frame_is_dropped_at_the_next_start_byte(device: FramedDevice) -> None:
    (frame,) = device.frames(device.echo_call(5))
    device.send(frame[:-4], device.mark())  # the mark's 0x7E cuts the frame short
    assert_torn(device.reply(), "its frame was dropped")
    device.assert_echo_works(6)


def test_corrupt_frame_in_a_multi_frame_packet_tears_it(device: FramedDevice) -> None:
    blob = bytes(random.Random(1).randrange(256) for _ in range(3 * FRAME_BODY))
    frames = device.frames(device.echo_call(bytearray(blob)))
    assert len(frames) == 4
    bad = bytearray(frames[1])
    bad[len(bad) // 2] ^= 0x01 if bad[len(bad) // 2] not in (0x7E, 0x7D, 0x7F, 0x7C) else 0x40
    device.send(frames[0], bytes(bad), *frames[2:], device.mark())
    assert_torn(device.reply(), f"dropped (truncated or corrupt) after {FRAME_BODY} bytes")
    code, values = device.request(device.echo_call(bytearray(blob)))  # sent intact: served
    assert code == wire.RPCCode.RETURN and bytes(cast(bytes, values[1])) == blob


def test_oversized_packet_is_answered_and_the_device_keeps_serving(device: FramedDevice) -> None:
    device.send(*device.frames((1 << 40).to_bytes(8, "little") + b"\x03\x00\x00\x00"))
    device.send(device.mark())
    assert_torn(device.reply(), f"claims {1 << 40} body bytes, over the limit")
    device.assert_echo_works(7)
    assert device.proc.poll() is None


def test_random_torn_frames_each_get_one_answer(device: FramedDevice) -> None:
    rng = random.Random(9)
    for i in range(1000):
        call = device.echo_call(i)
        kind = rng.randrange(3)
        if kind == 0:  # truncated frame
            (frame,) = device.frames(call)
            chunk = frame[: rng.randrange(1, len(frame) - 1)]
        elif kind == 1:  # corrupted frame (one byte changed, escapes included)
            (frame,) = device.frames(call)
            bad = bytearray(frame)
            at = rng.randrange(1, len(bad))
            bad[at] = (bad[at] + rng.randrange(1, 256)) % 256
            chunk = bytes(bad)
        else:  # a whole frame whose packet claims more bytes than it carries
            extra = rng.randrange(1, 5000)
            chunk = b"".join(
                device.frames((len(call) - 8 + extra).to_bytes(8, "little") + call[8:])
            )
        device.send(chunk, device.mark())
        code, values = device.reply()
        assert code == wire.RPCCode.EXCEPTION, (i, kind, values)
    device.assert_echo_works(12345)  # exactly one answer each: the next reply is this one's


class CorruptingChannel(PipeChannel):
    """A pipe link that changes one byte in the middle of the next write once armed; a read
    waits at most ``TIMEOUT`` seconds.
    """

    armed = False

    def recv(self, size: int) -> bytes:
        if not select.select([self.read_fd], [], [], TIMEOUT)[0]:
            raise TimeoutError(f"pytvm-device sent nothing for {TIMEOUT} s")
        return super().recv(size)

    def send(self, data: bytes | bytearray | memoryview) -> None:
        if self.armed:
            self.armed = False
            bad = bytearray(data)
            bad[len(bad) // 2] ^= (
                0x01 if bad[len(bad) // 2] not in (0x7C, 0x7D, 0x7E, 0x7F) else 0x40
            )
            data = bytes(bad)
        super().send(data)


def test_serial_channel_marks_let_the_device_answer_a_damaged_request() -> None:
    raw, proc = popen_pipe([str(device_binary()), "--framing"])
    link = CorruptingChannel(raw.read_fd, raw.write_fd, raw.peer)
    session = connect_channel(SerialChannel(link), "framed device", process=proc)
    with rpc.RPCSession(session) as sess:
        echo = sess.get_function("pytvm.device.echo")
        link.armed = True  # the request frame is damaged on the link; its end mark is not
        with pytest.raises(TVMError, match="serial link: torn packet: its frame was dropped"):
            echo(b"x" * 64)
        assert echo(2) == 2  # the session goes on
    assert proc.returncode == 0
