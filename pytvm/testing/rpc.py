"""RPC test helpers: a server thread on a loopback socket, without the process machinery."""

from __future__ import annotations

import socket
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from ..rpc.base import RPC_MAGIC, recv_key, recvall, send_key, set_nodelay
from ..rpc.channel import SocketChannel
from ..rpc.endpoint import serve

__all__ = ["thread_server"]


@contextmanager
def thread_server(sessions: int = 1) -> Iterator[int]:
    """Serve ``sessions`` sessions, one after another, in a thread of this process; yields the
    port. The handshake accepts any key."""
    listener = socket.create_server(("127.0.0.1", 0))
    port = listener.getsockname()[1]

    def run() -> None:
        for _ in range(sessions):
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            set_nodelay(conn)
            (magic,) = struct.unpack("<i", recvall(conn, 4))
            if magic != RPC_MAGIC:
                conn.close()
                continue
            recv_key(conn)
            send_key(conn, RPC_MAGIC, "server:")
            serve(SocketChannel(conn), f"thread server :{port}")

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    try:
        yield port
    finally:
        listener.close()
