"""Interoperability with the real peer: apache-tvm 0.27's client, server and tracker.

TVM's C++ client holds the GIL while it waits on its socket, so every pytvm service a TVM
client talks to runs in a subprocess (``service_process``); TVM's own server and tracker run in
their own worker processes too.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest
import tvm
import tvm.rpc
import tvm.rpc.tracker

import pytvm
from pytvm import rpc
from pytvm.ffi.dtype import DataType
from pytvm.testing.rpc import service_process

PY_SERVER = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1", "--silent")


def _register_echo() -> None:
    import tvm as _tvm

    _tvm.register_global_func("rpc.test.echo", lambda x: x, override=True)


def _stop(server: object) -> None:
    server.terminate()  # type: ignore[attr-defined]


@pytest.fixture(scope="module")
def tvm_server() -> Iterator[int]:
    server = tvm.rpc.Server(
        host="127.0.0.1", port=9600, port_end=9700, silent=True, server_init_callback=_register_echo
    )
    yield server.port
    _stop(server)


@pytest.fixture(scope="module")
def py_server() -> Iterator[int]:
    with service_process(*PY_SERVER) as (_, port):
        yield port


# ------------------------------------------------------------------ TVM client -> pytvm server


def test_tvm_client_calls_pytvm_server(py_server: int) -> None:
    sess = tvm.rpc.connect("127.0.0.1", py_server)
    assert sess.get_function("rpc.test.addone")(41) == 42
    assert sess.get_function("rpc.test.addone")(1.5) == 2.5
    assert sess.get_function("rpc.test.strcat")("x", 3) == "x:3"
    assert sess.get_function("rpc.test.runtime_str_concat")("ab", "cd") == "abcd"
    echo = sess.get_function("rpc.test.echo")
    for value in (7, -(2**63), 2.25, "héllo", ""):
        assert echo(value) == value
    assert bytes(echo(b"\x00\x01\xff")) == b"\x00\x01\xff"
    assert echo(True) in (True, 1)
    assert str(echo(tvm.runtime.DataType("float32"))) == "float32"
    with pytest.raises(Exception, match="boom-from-pytvm"):
        sess.get_function("rpc.test.except")("boom-from-pytvm")
    with pytest.raises(AttributeError):
        sess.get_function("no.such.function")
    assert sess.get_function("rpc.test.addone")(1) == 2  # still serving


@pytest.mark.parametrize("nbytes", [1024, 64 << 20])
def test_tvm_client_tensors_round_trip_on_pytvm_server(py_server: int, nbytes: int) -> None:
    sess = tvm.rpc.connect("127.0.0.1", py_server)
    x = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
    a = tvm.runtime.tensor(x, sess.cpu())
    np.testing.assert_array_equal(a.numpy(), x)
    if nbytes == 1024:
        b = tvm.runtime.empty((nbytes,), "uint8", sess.cpu())
        a.copyto(b)
        np.testing.assert_array_equal(b.numpy(), x)


def test_tvm_client_files_on_pytvm_server(py_server: int) -> None:
    sess = tvm.rpc.connect("127.0.0.1", py_server)
    sess.upload(bytearray(b"payload"), "a.bin")
    assert bytes(sess.download("a.bin")) == b"payload"
    assert "a.bin" in sess.listdir(".")
    sess.remove("a.bin")
    with pytest.raises(Exception, match=re.escape("a.bin")):
        sess.download("a.bin")


# ------------------------------------------------------------------ pytvm client -> TVM server


def test_pytvm_client_calls_tvm_server_with_every_argument_type(tvm_server: int) -> None:
    with rpc.connect("127.0.0.1", tvm_server) as sess:
        echo = sess.get_function("rpc.test.echo")
        for value in (None, 7, -(2**63), 2**63 - 1, 2.5, "héllo", "", b"\x00\xff" * 10):
            assert echo(value) == value
        assert echo(True) is True
        assert echo(DataType.parse("int8x4")) == DataType.parse("int8x4")
        assert echo(sess.cpu(0)) == pytvm.Device(1, 0)
        assert sess.get_function("rpc.test.strcat")("x", 3) == "x:3"
        with pytest.raises(rpc.RPCError, match="tvm-side-boom"):
            sess.get_function("rpc.test.except")("tvm-side-boom")
        with pytest.raises(AttributeError, match=re.escape("no.such")):
            sess.get_function("no.such")
        assert sess.get_function("rpc.test.addone")(1) == 2


@pytest.mark.parametrize("nbytes", [1024, 64 << 20])
def test_pytvm_client_tensors_round_trip_on_tvm_server(tvm_server: int, nbytes: int) -> None:
    with rpc.connect("127.0.0.1", tvm_server) as sess:
        x = np.random.default_rng(nbytes).integers(0, 256, nbytes, dtype=np.uint8)
        a = pytvm.nd.array(x, sess.cpu())
        np.testing.assert_array_equal(a.numpy(), x)
        if nbytes == 1024:
            b = pytvm.nd.empty((nbytes,), "uint8", sess.cpu())
            a.copyto(b)
            np.testing.assert_array_equal(b.numpy(), x)


def test_pytvm_client_files_on_tvm_server(tvm_server: int) -> None:
    with rpc.connect("127.0.0.1", tvm_server) as sess:
        sess.upload(b"from pytvm", "p.txt")
        assert sess.download("p.txt") == b"from pytvm"
        sess.remove("p.txt")


# ------------------------------------------------------------------ trackers


def test_tvm_server_on_pytvm_tracker_requested_by_pytvm_client() -> None:
    from pytvm.rpc.services.tracker import Tracker

    with Tracker(host="127.0.0.1", port=0, port_end=1, silent=True) as tracker:
        server = tvm.rpc.Server(
            host="127.0.0.1",
            port=9700,
            port_end=9800,
            tracker_addr=("127.0.0.1", tracker.port),
            key="tvm-board",
            silent=True,
        )
        try:
            with rpc.connect_tracker("127.0.0.1", tracker.port) as client:
                # TVM's server registers from its own process, after its constructor returns
                sess = client.request(
                    "tvm-board", session_timeout=60, wait_for_unknown_key=True, timeout=60
                )
                assert sess.get_function("rpc.test.addone")(9) == 10
                sess.close()
        finally:
            _stop(server)


def test_pytvm_server_on_tvm_tracker_requested_by_tvm_client() -> None:
    tracker = tvm.rpc.tracker.Tracker(host="127.0.0.1", port=9800, port_end=9900, silent=True)
    try:
        args = ("--tracker", f"127.0.0.1:{tracker.port}", "--key", "py-board")
        with service_process(*PY_SERVER, *args):
            sess = tvm.rpc.connect_tracker("127.0.0.1", tracker.port).request("py-board")
            assert sess.get_function("rpc.server.live_handles")() >= 1  # a pytvm-only function
            assert sess.get_function("rpc.test.addone")(1) == 2
    finally:
        _stop(tracker)


# ------------------------------------------------------------------ nested sessions


def test_nested_session_through_a_tvm_middle_hop(tvm_server: int, py_server: int) -> None:
    ctor = ["rpc.Connect", "127.0.0.1", py_server, "", False]
    with rpc.connect("127.0.0.1", tvm_server, session_constructor_args=ctor) as sess:
        # rpc.server.live_handles exists only on the pytvm server, two hops away.
        assert sess.get_function("rpc.server.live_handles")() >= 1
        x = np.arange(4096, dtype="float32")
        a = pytvm.nd.array(x, sess.cpu())
        b = pytvm.nd.empty(x.shape, "float32", sess.cpu())
        a.copyto(b)
        np.testing.assert_array_equal(b.numpy(), x)
        with pytest.raises(rpc.RPCError, match="deep-boom"):
            sess.get_function("rpc.test.except")("deep-boom")
