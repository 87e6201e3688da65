"""TVM v0.18's byte transport (``tvm.micro.transport.Transport``) and ``TransportLogger``: a
user's transport over a socket pair, logged in TVM's format, and a ``Session`` over a user's
transport to the emulated Cortex-M4 board's UART (the serial framing runs over its bytes).
The QEMU test is skipped only when qemu-system-arm or arm-none-eabi-gcc is missing.
"""

from __future__ import annotations

import logging
import shutil
import socket
import subprocess
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.crt.qemu import QemuBoard
from pytvm.micro import transport as mt
from pytvm.rpc.wire.serial_port import SerialLinkChannel, SerialTimeoutError

ROOT = Path(__file__).resolve().parents[2]
CRT = ROOT / "pytvm" / "src" / "crt"


class SocketTransport(mt.Transport):
    """A user's transport: one end of a socket pair."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock: socket.socket | None = None
        self._pending = sock

    def timeouts(self) -> mt.TransportTimeouts:
        return mt.TransportTimeouts()

    def open(self) -> None:
        self.sock = self._pending

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None

    def read(self, n: int, timeout_sec: float | None) -> bytes:
        if self.sock is None:
            raise mt.TransportClosedError()
        self.sock.settimeout(timeout_sec)
        try:
            return self.sock.recv(n)
        except TimeoutError as err:
            raise mt.IoTimeoutError() from err

    def write(self, data: bytes, timeout_sec: float | None) -> int:
        if self.sock is None:
            raise mt.TransportClosedError()
        self.sock.settimeout(timeout_sec)
        return self.sock.send(data)


def test_transport_logger_logs_reads_writes_and_errors(caplog: pytest.LogCaptureFixture) -> None:
    near, far = socket.socketpair()
    logger = logging.getLogger("pytvm.test.transport")
    with caplog.at_level(logging.INFO, logger.name):
        with mt.TransportLogger("uart", SocketTransport(near), logger=logger) as t:
            assert t.write(b"hello", 1.0) == 5
            assert far.recv(16) == b"hello"
            far.sendall(bytes(range(65, 65 + 20)))
            got = b""
            while len(got) < 20:
                got += t.read(20 - len(got), 1.0)
            with pytest.raises(mt.IoTimeoutError):
                t.read(4, 0.05)
        with pytest.raises(mt.TransportClosedError):
            t.read(4, 0.05)
    far.close()
    lines = [r.getMessage() for r in caplog.records]
    assert lines[0] == "uart: opening transport"
    assert lines[1] == "uart: write { 1.00s}        <- [  5 B]: " + "68 65 6c 6c 6f".ljust(47) + (
        "  hello"
    )
    first_read = next(line for line in lines if line.startswith("uart: read { 1.00s}   20 B"))
    assert (
        first_read.splitlines()[1]
        == "0000  " + " ".join(f"{b:02x}" for b in range(65, 81)) + "  ABCDEFGHIJKLMNOP"
    )
    assert "uart: read { 0.05s}    4 B -> [IoTimeoutError  0.05s]" in lines
    assert "uart: closing transport" in lines
    assert lines[-1] == "uart: read { 0.05s}    4 B -> [err: TransportClosedError]"


def test_transport_abstract_methods_are_tvms() -> None:
    assert mt.Transport.__abstractmethods__ == {"timeouts", "open", "close", "read", "write"}


class UartTransport(mt.Transport):
    """A user's transport: the emulated board's UART0 as raw bytes."""

    def __init__(self, board: QemuBoard) -> None:
        self.board = board
        self.link: SerialLinkChannel | None = None

    def timeouts(self) -> mt.TransportTimeouts:
        return mt.TransportTimeouts(session_start_timeout_sec=20.0)

    def open(self) -> None:
        self.link = self.board.channel()

    def close(self) -> None:
        self.link = None
        self.board.close()

    def read(self, n: int, timeout_sec: float | None) -> bytes:
        if self.link is None:
            raise mt.TransportClosedError()
        self.link.timeout = timeout_sec
        try:
            return self.link.recv(n)
        except SerialTimeoutError as err:
            raise mt.IoTimeoutError() from err

    def write(self, data: bytes, timeout_sec: float | None) -> int:
        if self.link is None:
            raise mt.TransportClosedError()
        self.link.timeout = timeout_sec
        self.link.send(data)
        return len(data)


@pytest.mark.skipif(
    any(shutil.which(tool) is None for tool in ("qemu-system-arm", "arm-none-eabi-gcc")),
    reason="needs qemu-system-arm and arm-none-eabi-gcc (`make mcu` installs them)",
)
def test_session_over_a_users_transport_to_the_board(tmp_path: Path) -> None:
    app = CRT / "image" / "app_init_none.c"
    proc = subprocess.run(
        ["make", "-s", "-C", str(CRT), "board-image", "BOARD=mps2-an386", f"O={tmp_path}",
         f"APP_SRCS={app}"],
        capture_output=True, text=True, check=False, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout + proc.stderr
    elf = tmp_path / "board" / "mps2-an386" / "image.elf"
    board = QemuBoard(elf)
    with pytvm.micro.Session(mt.TransportLogger("board", UartTransport(board))) as sess:
        data = np.random.default_rng(0).random(1000, dtype=np.float32)
        np.testing.assert_array_equal(pytvm.nd.array(data, sess.device).numpy(), data)
    assert board.process is None  # leaving the session closed the transport, which ended QEMU
