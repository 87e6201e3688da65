from __future__ import annotations

import ctypes
import logging
import os
import re
import select
import socket
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import tvm
import tvm.rpc

import pytvm
from pytvm.ffi.errors import TVMValueError
from pytvm.ffi.libinfo import compile_shared
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.client import connect
from pytvm.rpc.wire.base import (
    RPC_CODE_DUPLICATE,
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPC_TRACKER_MAGIC,
    RPCError,
    RPCSessionTimeoutError,
    TrackerCode,
    recv_key,
    recvall,
    recvjson,
    send_key,
    sendjson,
)
from pytvm.testing.rpc import service_process


@pytest.fixture(scope="module", autouse=True)
def worker_functions() -> Iterator[None]:
    """Functions registered here before a server forks are there in its session workers."""
    funcs: dict[str, Callable[..., object]] = {
        "testing.server.getpid": os.getpid,
        "testing.server.block": time.sleep,
        "testing.server.has_symbol": lambda name: hasattr(ctypes.CDLL(None), name),
    }
    for name, func in funcs.items():
        pytvm.register_func(name, func, override=True)
    yield
    for name in funcs:
        pytvm.remove_global_func(name)


def handshake(port: int, key: str) -> tuple[socket.socket, int, str]:
    """A raw client handshake; the socket, the reply code and (on success) the server key."""
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    send_key(sock, RPC_MAGIC, key)
    (code,) = struct.unpack("<i", recvall(sock, 4))
    return sock, code, recv_key(sock) if code == RPC_MAGIC else ""


def test_pytvm_client_calls_and_moves_files() -> None:
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        assert sess.get_function("rpc.test.addone")(41) == 42
        assert sess.get_function("rpc.test.strcat")("x", 3) == "x:3"
        sess.upload(bytearray(b"payload"), "dir/f.bin")
        assert bytes(sess.download("dir/f.bin")) == b"payload"
        assert sess.get_function("tvm.rpc.server.listdir")("dir") == "f.bin"
        with pytest.raises(ValueError, match="boom"):
            sess.get_function("rpc.test.except")("boom")
        assert sess.get_function("testing.server.getpid")() != os.getpid()
        sess.close()


def test_workspace_removed_after_session() -> None:
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        workspace = sess.get_function("tvm.rpc.server.workpath")("")
        sess.upload(bytearray(b"x"), "f.txt")
        assert (Path(workspace) / "f.txt").is_file()
        sess.close()
        assert server.wait_idle(10)
        assert not Path(workspace).exists()


def test_concurrent_sessions_each_in_own_process() -> None:
    with Server(port=0, key="k", silent=True) as server:
        first = connect("127.0.0.1", server.port, key="k")
        second = connect("127.0.0.1", server.port, key="k")
        pids = {sess.get_function("testing.server.getpid")() for sess in (first, second)}
        paths = {sess.get_function("tvm.rpc.server.workpath")("") for sess in (first, second)}
        assert len(pids) == 2 and os.getpid() not in pids
        assert len(paths) == 2
        assert server.session_count == 2
        first.close()
        assert second.get_function("rpc.test.addone")(1) == 2
        second.close()
        assert server.wait_idle(10)


def test_client_session_timeout_raises_timeout_error() -> None:
    # The limit runs from the handshake, so connect and workpath must fit in it too: seconds,
    # which no load eats, rather than a fraction of one.
    with Server(port=0, key="k", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k", session_timeout=2)
        workspace = sess.get_function("tvm.rpc.server.workpath")("")
        start = time.monotonic()
        with pytest.raises(RPCSessionTimeoutError, match=re.escape("timed out after 2 s")):
            sess.get_function("testing.server.block")(30)
        assert time.monotonic() - start < 10
        assert server.wait_idle(10)
        assert not Path(workspace).exists()  # the killed worker's workspace is removed too


def test_server_timeout_applies_without_client_option() -> None:
    with Server(port=0, key="k", silent=True, timeout=2) as server:  # connect fits in it
        sess = connect("127.0.0.1", server.port, key="k")
        with pytest.raises(RPCSessionTimeoutError):
            sess.get_function("testing.server.block")(30)
        assert server.wait_idle(10)


def test_auth_token(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    with Server(port=0, key="k", auth_token="s3cret", silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k", auth_token="s3cret")
        assert sess.get_function("rpc.test.addone")(1) == 2
        sess.close()
        with pytest.raises(RPCError, match=r"(?i)match"):
            connect("127.0.0.1", server.port, key="k", auth_token="wrong")
        with pytest.raises(RPCError, match=r"(?i)match"):
            connect("127.0.0.1", server.port, key="k")
        assert server.wait_idle(10)
    assert "wrong auth token" in caplog.text
    assert "missing auth token" in caplog.text
    assert "s3cret" not in caplog.text


def test_wrong_key_is_refused_with_mismatch_code() -> None:
    with Server(port=0, key="k", silent=True) as server:
        sock, code, _ = handshake(server.port, "client:other")
        assert code == RPC_CODE_MISMATCH
        sock.close()
        with pytest.raises(RPCError, match=r"(?i)match"):
            connect("127.0.0.1", server.port, key="other")


def test_client_vanishing_mid_packet_leaves_server_serving() -> None:
    with Server(port=0, key="k", silent=True) as server:
        sock, code, server_key = handshake(server.port, "client:k")
        assert (code, server_key) == (RPC_MAGIC, "server:k")
        sock.sendall(struct.pack("<Qi", 100, 3) + b"half")  # 8 of 100 promised bytes
        sock.close()
        assert server.wait_idle(10)
        sess = connect("127.0.0.1", server.port, key="k")
        assert sess.get_function("rpc.test.addone")(1) == 2
        sess.close()


def test_wrong_magic_is_closed_silently() -> None:
    with Server(port=0, key="k", silent=True) as server:
        sock = socket.create_connection(("127.0.0.1", server.port), timeout=10)
        sock.sendall(struct.pack("<ii", 0x1234, 7) + b"client:")
        try:
            assert sock.recv(16) == b""
        except ConnectionResetError:  # closed with our key bytes unread: a reset, also fine
            pass
        sock.close()
        assert server.wait_idle(10)


def test_stock_tvm_client_with_a_token_in_its_key() -> None:
    # A subprocess server: TVM's C++ client may hold the GIL while it waits on its socket.
    args = ("server", "--port", "0", "--port-end", "1", "--key", "tvmkey", "--silent")
    with service_process(*args, "--auth-token", "s3cret") as (_, port):
        sess = tvm.rpc.connect("127.0.0.1", port, key="tvmkey -token=s3cret")
        assert sess.get_function("rpc.test.addone")(1) == 2
        sess.upload(bytearray(b"from tvm"), "f.txt")
        assert bytes(sess.download("f.txt")) == b"from tvm"
        sess.remove("f.txt")
        del sess
        with pytest.raises(Exception, match=r"(?i)match"):
            tvm.rpc.connect("127.0.0.1", port, key="tvmkey -token=wrong")


@pytest.mark.needs_cc
def test_load_library_is_loaded_globally_in_each_session(tmp_path: Path) -> None:
    src = tmp_path / "answer.c"
    src.write_text("int pytvm_server_test_answer(void) { return 42; }\n")
    lib = compile_shared([src], tmp_path / "libanswer.so")
    with Server(port=0, key="k", load_library=str(lib), silent=True) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        assert sess.get_function("testing.server.has_symbol")("pytvm_server_test_answer")
        sess.close()
    assert not hasattr(ctypes.CDLL(None), "pytvm_server_test_answer")  # not in the server


def test_bad_arguments_are_refused_early(tmp_path: Path) -> None:
    with pytest.raises(TVMValueError, match="no file"):
        Server(port=0, load_library=str(tmp_path / "missing.so"))
    with pytest.raises(TVMValueError, match="needs a key"):
        Server(port=0, tracker_addr=("127.0.0.1", 1))
    with pytest.raises(OSError, match="cannot bind"):
        with socket.socket() as taken:
            taken.bind(("127.0.0.1", 0))
            taken.listen()
            port = taken.getsockname()[1]
            Server(port=port, port_end=port + 1)


def test_tracker_mode_match_keys() -> None:
    from pytvm.rpc.services.tracker import Tracker
    from pytvm.rpc.sessions.tracker_client import connect_tracker

    with Tracker(port=0, silent=True) as tracker:
        addr = ("127.0.0.1", tracker.port)
        with Server(port=0, key="dev", tracker_addr=addr, silent=True) as server:
            with connect_tracker(*addr) as tsess:
                sess = tsess.request("dev")
                assert sess.get_function("rpc.test.addone")(1) == 2
                sess.close()
                assert server.wait_idle(10)
                sess = tsess.request("dev")  # a new match key was registered
                assert sess.get_function("rpc.test.addone")(2) == 3
                # While a tracker session runs, nobody else gets in, even with the plain key.
                sock, code, _ = handshake(server.port, "client:dev")
                assert code == RPC_CODE_MISMATCH
                sock.close()
                sess.close()


def test_tracker_mode_reputs_a_handed_out_but_unused_key() -> None:
    from pytvm.rpc.services.tracker import Tracker

    with Tracker(port=0, silent=True) as tracker:
        addr = ("127.0.0.1", tracker.port)
        with Server(
            port=0, key="dev", tracker_addr=addr, silent=True, ping_period=0.05,
            unmatch_timeout=0.1,
        ):  # fmt: skip
            conn = socket.create_connection(addr, timeout=10)
            conn.sendall(struct.pack("<i", RPC_TRACKER_MAGIC))
            assert struct.unpack("<i", recvall(conn, 4))[0] == RPC_TRACKER_MAGIC
            keys = []
            for _ in range(2):
                sendjson(conn, [TrackerCode.REQUEST, "dev", "", 1])
                status, (_host, _port, match_key) = recvjson(conn)
                assert status == TrackerCode.SUCCESS
                keys.append(match_key)
            conn.close()
            assert keys[0] != keys[1] and all(k.startswith("dev:") for k in keys)


def test_tracker_mode_reconnects_after_tracker_restart() -> None:
    from pytvm.rpc.services.tracker import Tracker
    from pytvm.rpc.sessions.tracker_client import connect_tracker

    first = Tracker(port=19190, port_end=19990, silent=True)  # below the ephemeral ports
    port = first.port
    addr = ("127.0.0.1", port)
    with Server(port=0, key="dev", tracker_addr=addr, silent=True, ping_period=0.02) as server:
        with connect_tracker(*addr) as tsess:
            tsess.request("dev").close()
        assert server.wait_idle(10)
        first.terminate()  # the spare forked meanwhile no longer holds its port: wait_idle()
        with Tracker(port=port, port_end=port + 1, silent=True):
            with connect_tracker(*addr) as tsess:
                # waits until the server has registered again
                sess = tsess.request("dev", wait_for_unknown_key=True, timeout=10)
                assert sess.get_function("rpc.test.addone")(1) == 2
                sess.close()


def test_proxy_mode() -> None:
    from pytvm.rpc.services.proxy import Proxy

    with Proxy(port=0) as proxy:
        with Server("127.0.0.1", proxy.port, key="px", is_proxy=True, silent=True) as server:
            for value in (1, 2):  # one session per pairing, then the server dials again
                sess = connect("127.0.0.1", proxy.port, key="px")
                assert sess.get_function("rpc.test.addone")(value) == value + 1
                sess.close()
                assert server.wait_idle(10)


def test_proxy_duplicate_key_stops_server() -> None:
    from pytvm.rpc.services.proxy import Proxy

    with Proxy(port=0) as proxy:
        # Two raw servers offer the same key: the proxy keeps one and refuses the other, so
        # once a refusal arrives, "dup" is certainly waiting in its server pool.
        raws = [socket.create_connection(("127.0.0.1", proxy.port), timeout=10) for _ in "ab"]
        for raw in raws:
            send_key(raw, RPC_MAGIC, "server:dup")
        ready, _, _ = select.select(raws, [], [], 10)
        assert struct.unpack("<i", recvall(ready[0], 4))[0] == RPC_CODE_DUPLICATE
        server = Server("127.0.0.1", proxy.port, key="dup", is_proxy=True, silent=True)
        assert server.wait(10)  # a duplicate is fatal
        server.terminate()
        for raw in raws:
            raw.close()


def test_proxy_timeout_then_redial() -> None:
    from pytvm.rpc.services.proxy import Proxy

    with Proxy(port=0, timeout_server=0.05) as proxy:
        with Server(
            "127.0.0.1", proxy.port, key="slow", is_proxy=True, silent=True, retry_period=0.01
        ):
            sess = connect("127.0.0.1", proxy.port, key="slow")
            assert sess.get_function("rpc.test.addone")(1) == 2
            sess.close()


def test_proxy_unreachable_gives_up_after_retries() -> None:
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]  # bound, not listening: connections are refused
        server = Server(
            "127.0.0.1", port, key="x", is_proxy=True, silent=True, retry_period=0.01, max_retry=2
        )
        assert server.wait(10)
        server.terminate()


def test_terminate_is_idempotent_and_wait_returns() -> None:
    server = Server(port=0, key="k", silent=True)
    assert not server.wait(0.01)
    server.terminate()
    server.terminate()
    assert server.wait(0)
