"""RPC test helpers: a server thread on a loopback socket, without the process machinery."""

from __future__ import annotations

import re
import socket
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from ..ffi.registry import (
    get_global_func,
    list_global_func_names,
    register_func,
    remove_global_func,
)
from ..rpc.sessions.client import RPCSession, connect
from ..rpc.sessions.endpoint import serve
from ..rpc.sessions.tracker_client import connect_tracker
from ..rpc.wire.base import RPC_MAGIC, recv_key, recvall, send_key, set_nodelay
from ..rpc.wire.channel import SocketChannel, reap

__all__ = [
    "is_closed_by_peer",
    "registry_restored",
    "server_session",
    "service_process",
    "thread_server",
    "tracker_with_server",
    "wait_for",
]


@contextmanager
def registry_restored() -> Iterator[None]:
    """Every global function comes back as it was (added ones removed) when the block ends."""
    saved = {name: get_global_func(name) for name in list_global_func_names()}
    try:
        yield
    finally:
        for name in list_global_func_names():
            if name not in saved:
                remove_global_func(name)
        for name, func in saved.items():
            if get_global_func(name, allow_missing=True) is not func:
                register_func(name, func, override=True)


@contextmanager
def thread_server(sessions: int = 1) -> Iterator[int]:
    """Serve ``sessions`` sessions, one after another, in a thread of this process; yields the
    port. The handshake accepts any key.
    """
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


@contextmanager
def service_process(
    *argv: str, pin: int | None = None
) -> Iterator[tuple[subprocess.Popen[str], int]]:
    """Run ``pytvm rpc <argv>`` (server, tracker or proxy) in a subprocess; yields the process
    and the port from its banner. It gets SIGTERM (then SIGKILL) on exit.

    A real subprocess matters for tests with a stock TVM client: TVM's C++ client holds the GIL
    while it waits on its socket, so a pytvm service in the same process could never answer.
    """
    prefix = ["taskset", "-c", str(pin)] if pin is not None else []
    proc = subprocess.Popen(
        [*prefix, sys.executable, "-m", "pytvm.cli", "rpc", *argv],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        banner = proc.stdout.readline()
        match = re.search(r":(\d+)\s*$", banner)
        if match is None:
            raise RuntimeError(f"pytvm rpc {' '.join(argv)} did not start: {banner!r}")
        yield proc, int(match.group(1))
    finally:
        reap(proc, timeout=10, terminate=True)


@contextmanager
def tracker_with_server(key: str) -> Iterator[int]:
    """A ``pytvm rpc tracker`` and a ``pytvm rpc server`` of ``key`` on loopback, each in a
    subprocess (see :func:`service_process`); yields the tracker's port once the server is in
    the tracker's queue of ``key``.
    """
    with service_process("tracker", "--host", "127.0.0.1") as (_, tracker_port):
        with service_process(
            "server", "--host", "127.0.0.1", "--tracker", f"127.0.0.1:{tracker_port}",
            "--key", key,
        ):  # fmt: skip

            def registered() -> bool:
                with connect_tracker("127.0.0.1", tracker_port) as tracker:
                    return key in tracker.summary()["queue_info"]

            wait_for(registered, f"the server of key {key!r} registering with the tracker")
            yield tracker_port


@contextmanager
def server_session() -> Iterator[RPCSession]:
    """A session to a ``pytvm rpc server`` subprocess on loopback, closed (and the server
    stopped) on exit.
    """
    with service_process("server", "--host", "127.0.0.1") as (_, port):
        sess = connect("127.0.0.1", port)
        try:
            yield sess
        finally:
            sess.close()


def wait_for(predicate: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Poll ``predicate`` (each call should be a round trip, not a sleep) until it is true;
    ``AssertionError`` naming ``what`` when ``timeout`` seconds pass first.
    """
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")


def is_closed_by_peer(sock: socket.socket) -> bool:
    """Wait (bounded by the socket's timeout) for the peer's next move: True on EOF or reset,
    False if data arrives instead.
    """
    try:
        return sock.recv(1) == b""
    except ConnectionResetError:
        return True
