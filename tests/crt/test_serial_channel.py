"""``SerialChannel``: the RPC byte stream over framing and a session, against Python and C peers."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.crt import device_binary
from pytvm.rpc.sessions.client import RPCSession
from pytvm.rpc.sessions.endpoint import serve
from pytvm.rpc.sessions.forwarding_session import connect_channel
from pytvm.rpc.wire import protocol as wire
from pytvm.rpc.wire.channel import Channel, PipeChannel, memory_pair, popen_pipe
from pytvm.rpc.wire.serial_channel import SerialChannel
from pytvm.rpc.wire.serial_framing import DEFAULT_MAX_PAYLOAD
from pytvm.testing.rpc import wait_for

ROOT = Path(__file__).resolve().parents[2]
MAKEFILE = ROOT / "pytvm" / "src" / "crt" / "serial" / "serial.mk"
COMPILERS = [cc for cc in ("cc", "gcc", "clang") if shutil.which(cc)]


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The C harness (serial/tests/serial_vectors.c), whose --echo mode is a board on a link."""
    if not COMPILERS or not shutil.which("make"):
        pytest.fail("these tests need make and a C compiler (gcc or clang) on PATH")
    out_dir = tmp_path_factory.mktemp("serial")
    subprocess.run(
        [
            "make",
            "-s",
            "-f",
            str(MAKEFILE),
            f"BUILD={out_dir}",
            f"CC={COMPILERS[0]}",
            "CFLAGS=-std=c99 -Wall -Wextra -Werror -pedantic -O2",
            "serial-vectors",
        ],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    return out_dir / "serial_vectors"


class NoisyChannel(Channel):
    """A link that adds line noise (a stray start byte included) after every write."""

    def __init__(self, inner: Channel) -> None:
        self.inner, self.peer = inner, inner.peer

    def send(self, data: bytes | bytearray | memoryview) -> None:
        self.inner.send(bytes(data) + b"\x00\x13\x7e\xff")

    def recv(self, size: int) -> bytes:
        return self.inner.recv(size)

    def close(self) -> None:
        self.inner.close()


def echo_once(channel: SerialChannel, size: int) -> threading.Thread:
    def run() -> None:
        data = b""
        while len(data) < size:
            data += channel.recv(size - len(data))
        channel.send(data)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def recv_exactly(channel: Channel, size: int) -> bytes:
    data = b""
    while len(data) < size:
        chunk = channel.recv(size - len(data))
        assert chunk
        data += chunk
    return data


def test_serial_channel_over_noisy_pipes() -> None:
    r1, w1 = os.pipe()
    r2, w2 = os.pipe()
    host = SerialChannel(NoisyChannel(PipeChannel(r1, w2)), max_payload=64)
    board = SerialChannel(NoisyChannel(PipeChannel(r2, w1)), initiator=False, max_payload=64)
    message = bytes(range(256)) * 8
    thread = echo_once(board, len(message))
    host.send(message)
    assert recv_exactly(host, len(message)) == message
    thread.join(timeout=10)
    assert board.session.unframer.errors > 0  # every stray start byte truncates a frame...
    assert board.session.dropped == 0  # ...and no frame was lost
    host.close()
    board.close()


def test_serial_channel_peer_restart_and_log_messages() -> None:
    near, far = memory_pair()
    logs: list[bytes] = []
    host, board = SerialChannel(near, on_log=logs.append), SerialChannel(far, initiator=False)
    thread = echo_once(board, 2)
    host.send(b"hi")
    assert recv_exactly(host, 2) == b"hi"
    thread.join(timeout=10)
    first = host.session.session_id
    restarter = threading.Thread(target=board.reset, daemon=True)
    restarter.start()
    with pytest.raises(ConnectionResetError, match="restarted the serial session"):
        host.recv(10)
    restarter.join(timeout=10)
    assert not restarter.is_alive()
    assert host.session.session_id == board.session.session_id != first
    board.session.send_log("board says hello")
    board.send(b"after")
    assert recv_exactly(host, 5) == b"after"
    assert logs == [b"board says hello"]
    host.close()
    board.close()


def test_serial_channel_handshake_on_a_closed_link_fails() -> None:
    near, far = memory_pair()
    far.close()
    with pytest.raises((ConnectionError, BrokenPipeError)):
        SerialChannel(near).send(b"x")


@contextmanager
def c_echo_board(harness: Path, flag: str) -> Iterator[PipeChannel]:
    """The harness as a board on a serial link; yields the host's end of the two pipes."""
    board_in, host_out = os.pipe()
    host_in, board_out = os.pipe()
    proc = subprocess.Popen([str(harness), flag], stdin=board_in, stdout=board_out)
    os.close(board_in)
    os.close(board_out)
    link = PipeChannel(host_in, host_out, peer="C echo board")
    try:
        yield link
    finally:
        link.close()
        assert proc.wait(timeout=10) == 0  # the end of input ends the board cleanly


@pytest.mark.needs_cc
def test_python_host_and_c_stream_board_over_pipes(harness: Path) -> None:
    logs: list[bytes] = []
    with c_echo_board(harness, "--echo") as link:
        host = SerialChannel(NoisyChannel(link), on_log=logs.append)  # noise towards the board
        data = np.random.default_rng(1).bytes(200_000) + bytes(range(256)) * 64
        for offset in range(0, len(data), 8192):  # what is in flight stays under a pipe buffer
            piece = data[offset : offset + 8192]
            host.send(piece)
            assert recv_exactly(host, len(piece)) == piece
        first = host.session.session_id
        host.reset()  # the board's stream reports the restart and carries the new session
        assert host.session.session_id != first
        host.send(b"after the reset")
        assert recv_exactly(host, 15) == b"after the reset"
        assert logs == [b"echo: session restarted"]
        assert host.session.unframer.errors == host.session.dropped == 0


@pytest.mark.needs_cc
def test_c_stream_initiates_and_python_answers(harness: Path) -> None:
    with c_echo_board(harness, "--echo-initiator") as link:
        host = SerialChannel(link, initiator=False)
        host.send(b"\x7e\x7d" * 3000)
        assert recv_exactly(host, 6000) == b"\x7e\x7d" * 3000
        assert host.session.established and host.session.local_nonce == 0  # it answered


def test_rpc_over_serial_channel_copies_a_mebibyte_bit_exactly() -> None:
    pytvm.register_func("test.serial.mul_add", lambda a, b, c: a * b + c, override=True)
    near, far = memory_pair()
    board = SerialChannel(far, initiator=False)
    server = threading.Thread(target=serve, args=(board, "serial board"), daemon=True)
    server.start()
    sess = RPCSession(connect_channel(SerialChannel(near), "serial"))
    assert sess.get_function("test.serial.mul_add")(6, 7, 0) == 42
    bits = np.random.default_rng(0).integers(0, 1 << 32, 1 << 18, dtype=np.uint32)
    x = bits.view(np.float32)  # NaN payloads and denormals included: compared as bits
    assert x.nbytes == 1 << 20
    remote = pytvm.nd.array(x, sess.cpu())
    back = remote.numpy()
    np.testing.assert_array_equal(back.view(np.uint32), bits)
    sess.close()
    server.join(timeout=30)
    assert not server.is_alive()
    assert board.session.unframer.errors == 0 and board.session.dropped == 0
    assert board.session.unframer.frames > (1 << 20) // DEFAULT_MAX_PAYLOAD


class GatedChannel(Channel):
    """A link whose reads wait for ``gate`` (and report when a read has started)."""

    def __init__(self, inner: Channel) -> None:
        self.inner, self.peer = inner, inner.peer
        self.gate, self.reading = threading.Event(), threading.Event()

    def send(self, data: bytes | bytearray | memoryview) -> None:
        self.inner.send(data)

    def recv(self, size: int) -> bytes:
        self.reading.set()
        assert self.gate.wait(timeout=10), "the test never opened the gate"
        return self.inner.recv(size)

    def close(self) -> None:
        self.inner.close()


def _in_serial_channel(thread: threading.Thread) -> bool:
    frame = sys._current_frames().get(thread.ident or -1)
    while frame is not None:
        if Path(frame.f_code.co_filename).parts[-2:] == ("wire", "serial_channel.py"):
            return True
        frame = frame.f_back
    return False


@pytest.mark.needs_cc
def test_send_is_not_blocked_by_a_thread_waiting_in_recv() -> None:
    """One thread receives while another sends, before and after the handshake."""
    raw, proc = popen_pipe([str(device_binary()), "--framing"])
    link = GatedChannel(raw)
    channel = SerialChannel(link)
    replies: list[bytes] = []
    done = threading.Event()

    def receive() -> None:
        stream = b""
        while len(replies) < 21:
            chunk = channel.recv(1 << 16)
            if not chunk:
                return
            stream += chunk
            while len(stream) >= 8 and len(stream) >= 8 + int.from_bytes(stream[:8], "little"):
                size = 8 + int.from_bytes(stream[:8], "little")
                replies.append(stream[:size])
                stream = stream[size:]
        done.set()

    reader = threading.Thread(target=receive, daemon=True)
    reader.start()
    assert link.reading.wait(timeout=10)  # the reader is blocked on the link, mid-handshake
    sender = threading.Thread(target=channel.send, args=(wire.encode_init_server(),), daemon=True)
    sender.start()
    wait_for(lambda: _in_serial_channel(sender) or not sender.is_alive(), "the sender to call send")
    link.gate.set()  # the handshake completes only now, while the sender waits for it
    sender.join(timeout=10)
    assert not sender.is_alive(), "send() stayed blocked behind the receiving thread"
    for _ in range(20):  # established: sends while the reader sits in recv
        channel.send(wire.encode_syscall(wire.RPCCode.GET_GLOBAL_FUNC, ["pytvm.device.info"]))
    try:
        assert done.wait(timeout=10), f"only {len(replies)} of 21 replies arrived"
        codes = [int.from_bytes(r[8:12], "little") for r in replies]
        assert codes == [wire.RPCCode.RETURN] * 21
    finally:
        channel.send(wire.encode_shutdown())
        assert proc.wait(timeout=10) == 0
        channel.close()
