"""``rpc.connect_serial``: a real C device (CRT + MinRPC + serial framing) on a pseudo-terminal,
sockets, and the errors for bad ports and silent boards.
"""

from __future__ import annotations

import os
import socket
import subprocess
from collections.abc import Iterator

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.crt import device_binary
from pytvm.rpc.wire.serial_port import SerialTimeoutError, open_serial_port, parse_socket_url


@pytest.fixture
def pty_board() -> Iterator[str]:
    """The framed C device serving on the master side of a pty; yields the slave's path."""
    master, slave = os.openpty()
    path = os.ttyname(slave)
    proc = subprocess.Popen(
        [str(device_binary()), str(master), str(master), "--framing"], pass_fds=(master,)
    )
    os.close(master)
    try:
        yield path
    finally:
        proc.kill()
        proc.wait(timeout=10)
        os.close(slave)


@pytest.mark.needs_cc
def test_session_over_a_serial_device(pty_board: str) -> None:
    with rpc.connect_serial(pty_board, frame_size=256, timeout=10) as sess:
        assert sess.get_function("pytvm.device.echo")(41) == 41
        x = np.arange(5000, dtype="float32")  # 20 kB: many 256-byte frames from the device
        a = pytvm.nd.array(x, sess.cpu(0))
        np.testing.assert_array_equal(a.numpy(), x)


def test_a_silent_board_times_out_naming_the_port() -> None:
    near, far = socket.socketpair()
    try:
        with pytest.raises(SerialTimeoutError, match=r"connect_serial\(socket.*0\.2 s"):
            rpc.connect_serial(near, timeout=0.2)
    finally:
        far.close()


def test_bad_ports_are_named() -> None:
    with pytest.raises(ConnectionError, match="/dev/no-such-tty"):
        rpc.connect_serial("/dev/no-such-tty")
    with pytest.raises(ValueError, match="socket://host:port"):
        rpc.connect_serial("socket:nohost")
    with pytest.raises(TypeError, match="device path"):
        rpc.connect_serial(42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="is not a terminal"):
        rpc.connect_serial("/dev/null")
    with pytest.raises(pytvm.ffi.errors.TVMValueError, match="timeout"):
        rpc.connect_serial("/dev/null", timeout=0)


def test_socket_urls() -> None:
    assert parse_socket_url("socket://127.0.0.1:4321") == ("127.0.0.1", 4321)
    assert parse_socket_url("tcp:[::1]:80") == ("::1", 80)
    assert parse_socket_url("/dev/ttyACM0") is None
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    port = listener.getsockname()[1]
    link = open_serial_port(f"tcp:127.0.0.1:{port}", timeout=5)
    peer, _ = listener.accept()
    try:
        peer.sendall(b"abc")
        assert link.recv(3) == b"abc"
        link.send(b"xyz")
        assert peer.recv(3) == b"xyz"
        peer.close()
        assert link.recv(1) == b""  # the board's end closed
    finally:
        link.close()
        listener.close()
