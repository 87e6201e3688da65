"""A server that accepts a connection and then stops answering is an error after the connect
timeout, at the handshake or at the session's initialisation, never a hang.
"""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator

import pytest

from pytvm import rpc
from pytvm.ffi.errors import RPCError


def _silent_server(answer_handshake: bool) -> Iterator[int]:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    done = threading.Event()
    held: list[socket.socket] = []

    def serve() -> None:
        conn, _ = listener.accept()
        held.append(conn)
        if answer_handshake:
            magic, size = struct.unpack("<ii", conn.recv(8))
            conn.recv(size)  # the client's key
            conn.sendall(struct.pack("<ii", magic, 0))  # our magic, an empty key
        done.wait(30)  # then never answer

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield listener.getsockname()[1]
    finally:
        done.set()
        thread.join(30)
        for conn in held:
            conn.close()
        listener.close()


@pytest.fixture(params=[False, True], ids=["handshake", "init"])
def silent_port(request: pytest.FixtureRequest) -> Iterator[int]:
    yield from _silent_server(bool(request.param))


def test_silent_server_is_an_error_after_the_connect_timeout(silent_port: int) -> None:
    with pytest.raises(RPCError, match=r"within 0.5 s"):
        rpc.connect("127.0.0.1", silent_port, connect_timeout=0.5)
