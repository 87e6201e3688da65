"""A ``Shape`` returned by a remote function stays on the server as an object (spec section 5.3:
type index 69, sent as a handle) and can be passed back to that server (section 3.4: object
reference 115/115), as with TVM: over ``rpc.LocalSession()``, a pytvm server, and both ways
with apache-tvm 0.27.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
import tvm
import tvm.rpc

from pytvm import rpc
from pytvm.ffi import TypeIndex
from pytvm.testing.rpc import service_process, thread_server, wait_for

PY_SERVER = ("server", "--host", "127.0.0.1", "--port", "0", "--port-end", "1", "--silent")


@pytest.fixture(params=["local session", "pytvm server"])
def session(request: pytest.FixtureRequest) -> Iterator[rpc.RPCSession]:
    if request.param == "local session":
        yield rpc.LocalSession()
        return
    with thread_server() as port:
        yield rpc.connect("127.0.0.1", port)


def test_shape_made_remotely_is_passed_back(session: rpc.RPCSession) -> None:
    shape = session.get_function("ffi.Shape")(2, 3)
    assert isinstance(shape, rpc.RemoteObject) and shape.remote_type_index == TypeIndex.SHAPE
    elem = session.get_function("rpc.testing.GetShapeElem")
    assert [elem(shape, 0), elem(shape, 1)] == [2, 3]
    assert session.get_function("rpc.testing.GetShapeSize")(shape) == 2


def test_bad_shape_index_is_an_index_error_and_the_server_goes_on(
    session: rpc.RPCSession,
) -> None:
    shape = session.get_function("ffi.Shape")(2, 3)
    elem = session.get_function("rpc.testing.GetShapeElem")
    with pytest.raises(IndexError, match="index 2 is outside the 2 dimensions"):
        elem(shape, 2)
    with pytest.raises(TypeError, match=re.escape("expected an ffi.Shape, got int")):
        elem(7, 0)
    assert elem(shape, 1) == 3


def test_dropped_shape_is_freed_on_the_server() -> None:
    with thread_server() as port:
        sess = rpc.connect("127.0.0.1", port)
        live = sess.get_function("rpc.server.live_handles")
        before = live()
        shape = sess.get_function("ffi.Shape")(1)
        assert live() == before + 1
        del shape
        wait_for(lambda: live() == before, "the server to free the dropped shape")


def test_string_made_remotely_comes_back_as_text(session: rpc.RPCSession) -> None:
    assert session.get_function("ffi.String")("héllo") == "héllo"


def test_pytvm_client_uses_a_shape_from_a_tvm_server() -> None:
    server = tvm.rpc.Server(host="127.0.0.1", port=9600, port_end=9700, silent=True)
    try:
        sess = rpc.connect("127.0.0.1", server.port)
        shape = sess.get_function("ffi.Shape")(7, 8, 9)
        assert shape.remote_type_index == TypeIndex.SHAPE
        assert sess.get_function("rpc.testing.GetShapeElem")(shape, 2) == 9
        assert sess.get_function("rpc.testing.GetShapeSize")(shape) == 3
    finally:
        server.terminate()


def test_tvm_client_uses_a_shape_from_a_pytvm_server() -> None:
    with service_process(*PY_SERVER) as (_, port):
        sess = tvm.rpc.connect("127.0.0.1", port)
        shape = sess.get_function("ffi.Shape")(7, 8, 9)
        assert sess.get_function("rpc.testing.GetShapeElem")(shape, 1) == 8
        assert sess.get_function("rpc.testing.GetShapeSize")(shape) == 3
