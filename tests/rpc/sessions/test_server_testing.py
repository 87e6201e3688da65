from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
import tvm
import tvm.rpc

import pytvm
from pytvm import rpc
from pytvm.ffi.libinfo import compile_shared
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.server_testing import remote_test_functions

TVM_RPC_TEST = [
    "rpc.test.addone",
    "rpc.test.strcat",
    "rpc.test.except",
    "rpc.test.runtime_str_concat",
    "rpc.test.remote_tensor_func",
    "rpc.test.add_to_lhs",
    "rpc.test.remote_return_nd",
]


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    with Server(port=0, key="t", silent=True) as srv:
        yield srv


def check_test_functions(sess: rpc.RPCSession) -> None:
    """The behaviour of TVM's rpc.test.* and tvm-ffi's testing.* helpers, through ``sess``."""
    f = sess.get_function
    assert f("rpc.test.addone")(10) == 11
    assert f("rpc.test.strcat")("abc", 11) == "abc:11"
    with pytest.raises(ValueError, match="abc"):
        f("rpc.test.except")("abc")
    assert f("rpc.test.runtime_str_concat")("abc", "def") == "abcdef"
    f("rpc.test.remote_tensor_func")(pytvm.nd.array(np.ones((3, 4)), sess.cpu()))
    with pytest.raises((RuntimeError, AssertionError), match="not equal"):  # local: as raised
        f("rpc.test.remote_tensor_func")(pytvm.nd.array(np.zeros((3, 4)), sess.cpu()))
    assert f("rpc.test.add_to_lhs")(10)(12) == 22
    make = f("rpc.test.remote_return_nd")
    arr = make("get_arr")()
    assert arr.numpy().tolist() == [0.0] * 10 and make("get_elem")(0) == 0.0
    assert make("get_arr_elem")(arr, 0) == 0.0
    assert make("ref_count")() == 1
    with pytest.raises(ValueError, match="unknown name 'nope'"):
        make("nope")
    echo = f("testing.echo")
    assert echo(1, 2, 3) == 1 and echo("xyz") == "xyz" and bytes(echo(b"123")) == b"123"
    for kind, cls in [("ValueError", ValueError), ("TypeError", TypeError), ("KeyError", KeyError)]:
        with pytest.raises(cls, match="from the test"):
            f("testing.test_raise_error")(kind, "from the test")


def test_server_offers_tvms_test_functions(server: Server) -> None:
    assert set(TVM_RPC_TEST) < set(remote_test_functions())
    with rpc.connect("127.0.0.1", server.port, key="t") as sess:
        check_test_functions(sess)


def test_local_session_offers_the_same_test_functions() -> None:
    check_test_functions(rpc.LocalSession())


def test_a_tvm_client_calls_the_test_functions(server: Server) -> None:
    remote = tvm.rpc.connect("127.0.0.1", server.port, key="t")
    assert remote.get_function("testing.echo")(100, 2, 3) == 100
    ones = tvm.runtime.tensor(np.ones((3, 4)), remote.cpu())
    remote.get_function("rpc.test.remote_tensor_func")(ones)
    make = remote.get_function("rpc.test.remote_return_nd")
    get_arr, get_arr_elem = make("get_arr"), make("get_arr_elem")
    assert get_arr_elem(get_arr(), 0) == 0.0
    with pytest.raises(tvm.error.RPCError, match="ValueError: abc"):  # TVM wraps remote errors
        remote.get_function("testing.test_raise_error")("ValueError", "abc")


def test_tvms_server_env_name_registers_the_server_functions() -> None:
    from pytvm.rpc.services import server as rpc_server

    saved = {n: pytvm.get_global_func(n, True) for n in pytvm.list_global_func_names()}
    ws = rpc_server._server_env([])
    try:
        pytvm.get_global_func("tvm.rpc.server.upload")("a.txt", b"1")
        assert Path(ws.relpath("a.txt")).read_bytes() == b"1"
        assert pytvm.get_global_func("testing.echo")(5) == 5
    finally:
        ws.close()
        for name in pytvm.list_global_func_names():
            if saved.get(name) is None:
                pytvm.remove_global_func(name)
            else:
                pytvm.register_func(name, saved[name], override=True)
    assert not Path(ws.path).exists()


# ---------------------------------------------------------------------- rpc.LocalSession()


def test_local_session_moves_files_in_a_workspace_of_its_own() -> None:
    first, second = rpc.LocalSession(), rpc.LocalSession()
    blob = bytes(range(10))
    first.upload(blob, "dat.bin")
    assert first.download("dat.bin") == blob
    assert first.listdir(".") == ["dat.bin"] and second.listdir(".") == []
    first.upload(b"x", "d/e.bin")
    first.remove("d")
    assert first.listdir("") == ["dat.bin"]
    workspace = first.get_function("tvm.rpc.server.workpath")("")
    assert Path(workspace).is_dir()
    with pytest.raises(ValueError, match="outside the session workspace"):
        first.download("/etc/hostname")
    first.close()
    assert not Path(workspace).exists()


@pytest.mark.needs_cc
def test_local_session_loads_an_uploaded_library(tmp_path: Path) -> None:
    source = tmp_path / "dev_lib.c"
    source.write_text("int answer(void) { return 42; }\n")
    lib = compile_shared([source], tmp_path / "dev_lib.so")
    sess = rpc.LocalSession()
    sess.upload(str(lib))
    module = sess.load_module("dev_lib.so")
    assert module.get_function("answer") is not None
    sess.close()
