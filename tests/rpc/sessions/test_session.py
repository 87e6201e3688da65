"""Sessions end to end: local, over a loopback socket, over pipes, in memory, and nested."""

from __future__ import annotations

import gc
import os
import re
import stat
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm import rpc
from pytvm.ffi.dtype import DataType
from pytvm.rpc.sessions.forwarding_session import ForwardingSession
from pytvm.rpc.wire.base import RPCError
from pytvm.testing.rpc import thread_server


@pytest.fixture(scope="module", autouse=True)
def _functions() -> None:
    pytvm.register_func("test.rpc.echo", lambda x: x, override=True)
    pytvm.register_func("test.rpc.add", lambda a, b: a + b, override=True)
    pytvm.register_func("test.rpc.double", lambda t: pytvm.nd.array(t.numpy() * 2), override=True)

    def fail(msg: str) -> None:
        raise ValueError(msg)

    pytvm.register_func("test.rpc.fail", fail, override=True)
    pytvm.register_func(
        "test.rpc.make_obj", lambda: pytvm.runtime.Module.from_functions("x", {}), override=True
    )
    pytvm.register_func("test.rpc.kind", lambda o: o.type_key, override=True)


@pytest.fixture()
def remote() -> Iterator[rpc.RPCSession]:
    with thread_server() as port:
        sess = rpc.connect("127.0.0.1", port)
        yield sess
        sess.close()


def test_local_session_devices_carry_the_table_slot() -> None:
    sess = rpc.LocalSession()
    dev = sess.cpu(0)
    assert dev.device_type == (sess._tbl_index + 1) * 128 + 1
    assert dev.rpc_session_index == sess._tbl_index
    assert sess.hexagon(2).device_type % 128 == 16 and sess.hexagon(2).device_id == 2


def test_every_argument_and_return_type_crosses(remote: rpc.RPCSession) -> None:
    echo = remote.get_function("test.rpc.echo")
    for value in (None, 7, -(2**63), 2**63 - 1, True, False, 2.5, "héllo", "", b"\x00\xff"):
        out = echo(value)
        assert out == value and type(out) is type(value)
    assert echo(DataType.parse("float32x4")) == DataType.parse("float32x4")
    assert echo(bytearray(b"ab")) == b"ab"
    assert echo(np.int32(3)) == 3 and echo(np.float64(0.5)) == 0.5
    assert echo(remote.cpu(0)) == pytvm.Device(1, 0)  # returned devices come back unmasked (TVM)
    assert remote.get_function("test.rpc.add")("a", "b") == "ab"


def test_remote_objects_functions_and_modules_pass_back(remote: rpc.RPCSession) -> None:
    obj = remote.get_function("test.rpc.make_obj")()
    assert isinstance(obj, rpc.RemoteModule)
    assert remote.get_function("test.rpc.kind")(obj) == "x"
    fn = remote.get_function("test.rpc.echo")(remote.get_function("test.rpc.add"))
    assert isinstance(fn, rpc.RemoteFunction) and fn(2, 3) == 5


def test_arrays_copy_bit_exactly_both_ways(remote: rpc.RPCSession) -> None:
    rng = np.random.default_rng(0)
    for nbytes in (1024, 64 << 20):
        x = rng.integers(0, 256, nbytes, dtype=np.uint8)
        a = pytvm.nd.array(x, remote.cpu())
        assert a.device.is_remote
        np.testing.assert_array_equal(a.numpy(), x)


def test_copies_between_remote_arrays_and_to_local(remote: rpc.RPCSession) -> None:
    x = np.arange(12, dtype="float32").reshape(3, 4)
    a = pytvm.nd.array(x, remote.cpu())
    b = pytvm.nd.empty((3, 4), "float32", remote.cpu())
    a.copyto(b)  # kCopyAmongRemote
    np.testing.assert_array_equal(b.numpy(), x)
    local = b.copyto(pytvm.cpu())
    assert not local.device.is_remote
    np.testing.assert_array_equal(local.numpy(), x)
    c = pytvm.nd.empty((3, 4), "float32", remote.cpu()).copyfrom(local)
    np.testing.assert_array_equal(c.numpy(), x)


def test_tensor_returned_by_a_remote_function(remote: rpc.RPCSession) -> None:
    a = pytvm.nd.array(np.arange(5, dtype="int32"), remote.cpu())
    out = remote.get_function("test.rpc.double")(a)
    assert out.device == remote.cpu()
    np.testing.assert_array_equal(out.numpy(), np.arange(5) * 2)


def test_dropped_remote_handles_and_arrays_are_freed(remote: rpc.RPCSession) -> None:
    live = remote.get_function("rpc.server.live_handles")
    base = live()
    arrays = [pytvm.nd.array(np.ones(4, "float32"), remote.cpu()) for _ in range(3)]
    fns = [remote.get_function("test.rpc.echo") for _ in range(3)]
    assert live() == base + 6
    del arrays, fns
    gc.collect()
    assert live() == base  # queued frees go out before the next request


def test_local_arrays_and_devices_are_refused(remote: rpc.RPCSession) -> None:
    echo = remote.get_function("test.rpc.echo")
    with pytest.raises(ValueError, match=re.escape("copy it to sess.cpu")):
        echo(pytvm.nd.array(np.ones(2, "float32")))
    with pytest.raises(ValueError, match="cannot pass the device"):
        echo(pytvm.cpu(0))
    with pytest.raises(TypeError, match="callbacks do not cross RPC"):
        echo(lambda: 1)


def test_missing_function_is_named(remote: rpc.RPCSession) -> None:
    with pytest.raises(AttributeError, match=re.escape("no global function 'no.such.function'")):
        remote.get_function("no.such.function")


def test_remote_exception_keeps_kind_message_traceback_and_hop(
    remote: rpc.RPCSession,
) -> None:
    with pytest.raises(ValueError) as info:
        remote.get_function("test.rpc.fail")("boom")
    err = info.value
    assert isinstance(err, RPCError)
    assert "boom" in str(err) and "127.0.0.1:" in str(err)
    assert "Traceback" in err.traceback and "fail" in err.traceback
    assert remote.get_function("test.rpc.add")(1, 2) == 3  # the session goes on


def test_closed_session_refuses_requests(remote: rpc.RPCSession) -> None:
    f = remote.get_function("test.rpc.echo")
    remote.close()
    with pytest.raises(RPCError, match="closed"):
        f(1)


def test_copies_are_chunked_to_the_servers_packet_size_with_one_lookup() -> None:
    asked = []

    def max_packet() -> int:
        asked.append(1)
        return 4096

    pytvm.register_func("tvm.rpc.server.GetCRTMaxPacketSize", max_packet, override=True)
    try:
        with thread_server() as port, rpc.connect("127.0.0.1", port) as sess:
            x = np.random.default_rng(1).random(100_000).astype("float32")
            a = pytvm.nd.array(x, sess.cpu())
            np.testing.assert_array_equal(a.numpy(), x)
            a.copyfrom(x[::-1].copy())
            np.testing.assert_array_equal(a.numpy(), x[::-1])
            assert len(asked) == 1
    finally:
        pytvm.remove_global_func("tvm.rpc.server.GetCRTMaxPacketSize")


def test_nested_session_forwards_every_request_and_names_the_failing_hop() -> None:
    with thread_server() as inner, thread_server() as outer:
        args = ["rpc.Connect", "127.0.0.1", inner, "", False]
        with rpc.connect("127.0.0.1", outer, session_constructor_args=args) as sess:
            assert sess.get_function("test.rpc.add")(2, 3) == 5
            x = np.arange(1000, dtype="int64")
            a = pytvm.nd.array(x, sess.cpu())
            b = pytvm.nd.empty(x.shape, "int64", sess.cpu())
            a.copyto(b)
            np.testing.assert_array_equal(b.numpy(), x)
            with pytest.raises(ValueError) as info:
                sess.get_function("test.rpc.fail")("deep")
            text = str(info.value)
            assert f"127.0.0.1:{outer}" in text and f"127.0.0.1:{inner}" in text
            assert "deep" in text


def test_unknown_session_constructor_is_reported() -> None:
    with thread_server() as port:
        with pytest.raises(RPCError, match=re.escape("no.such.ctor")):
            rpc.connect("127.0.0.1", port, session_constructor_args=["no.such.ctor"])


def test_popen_session_over_two_pipes(tmp_path: Path) -> None:
    script = tmp_path / "server.sh"
    server = "pytvm.rpc.services.pipe_server"
    script.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m {server} "$@"\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    with rpc.PopenSession(str(script)) as sess:
        assert isinstance(sess.session, ForwardingSession)
        process = sess.session.process
        assert process is not None and process.pid != os.getpid()
        x = np.arange(64, dtype="float64")
        a = pytvm.nd.array(x, sess.cpu())
        np.testing.assert_array_equal(a.numpy(), x)
        assert sess.get_function("rpc.server.live_handles")() >= 2  # the array + this function
    assert process.returncode == 0  # kShutdown ended the child cleanly


def test_popen_session_refuses_a_non_executable(tmp_path: Path) -> None:
    path = tmp_path / "plain.txt"
    path.write_text("not a program")
    with pytest.raises(ValueError, match="not an executable"):
        rpc.PopenSession(str(path))


def test_in_memory_channel_pair() -> None:
    client, server = rpc.memory_pair()
    thread = threading.Thread(target=rpc.serve, args=(server, "memory server"), daemon=True)
    thread.start()
    sess = rpc.RPCSession(rpc.connect_channel(client, "memory"))
    assert sess.get_function("test.rpc.add")(20, 22) == 42
    sess.close()
    thread.join(timeout=10)
    assert not thread.is_alive()


def test_remote_time_evaluator_and_system_lib(remote: rpc.RPCSession) -> None:
    pytvm.runtime.register_system_lib_function("test_rpc_noop", lambda: None, override=True)
    lib = remote.system_lib()
    result = lib.time_evaluator("test_rpc_noop", remote.cpu(), number=5, repeat=3)()
    assert len(result.results) == 3 and all(r >= 0 for r in result.results)


def test_bad_pointer_from_the_wire_is_an_error_not_a_crash(remote: rpc.RPCSession) -> None:
    from pytvm.rpc.wire.protocol import Handle, RPCCode

    with pytest.raises(ValueError, match="not allocated by this session"):
        remote.session.syscall(RPCCode.DEV_FREE_DATA, [pytvm.Device(1, 0), Handle(0xDEAD0)])
    assert remote.get_function("test.rpc.add")(1, 1) == 2


def test_device_of_an_empty_session_slot_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="no live RPC session in slot 31"):
        pytvm.nd.empty((2,), "float32", pytvm.Device(32 * 128 + 1, 0))


def test_device_syscalls_reach_the_servers_device_api(remote: rpc.RPCSession) -> None:
    from pytvm.runtime import DeviceAttrKind

    api = pytvm.runtime.DeviceAPI.get(remote.cpu())
    assert api is not None and api.name == "rpc"
    dev = remote.cpu(0)
    api.set_device(dev)  # kDevSetDevice
    assert api.get_attr(dev, DeviceAttrKind.DEVICE_NAME) == "cpu"  # kDevGetAttr
    assert api.get_attr(remote.ext_dev(0), DeviceAttrKind.EXIST) == 0  # no such API there
    stream = api.create_stream(dev)  # kDevCreateStream: the CPU has only its default stream
    api.set_stream(dev, stream)  # kDevSetStream
    assert api.get_current_stream(dev) is None  # kDevGetCurrentStream
    api.stream_sync(dev, stream)
    api.free_stream(dev, stream)  # kDevFreeStream
    live = remote.get_function("rpc.server.live_handles")
    base = live()
    ptr = api.alloc_data(dev, 256, 64, DataType.parse("float32"))  # kDevAllocData
    assert ptr != 0 and live() == base + 1
    api.free_data(dev, ptr)  # kDevFreeData (queued, sent before the next request)
    assert live() == base


def test_pipelined_chunked_copy_reports_an_error_and_stays_in_step() -> None:
    from pytvm.rpc.wire.protocol import TensorDesc

    pytvm.register_func("tvm.rpc.server.GetCRTMaxPacketSize", lambda: 4096, override=True)
    try:
        with thread_server() as port, rpc.connect("127.0.0.1", port) as sess:
            bad = TensorDesc(0xBAD000, pytvm.Device(1, 0), DataType.parse("uint8"), (100_000,))
            data = memoryview(bytes(100_000))
            with pytest.raises(ValueError, match="not inside memory allocated"):
                sess.session.copy_to_remote(bad, data)
            with pytest.raises(ValueError, match="not inside memory allocated"):
                sess.session.copy_from_remote(bad, 100_000)
            x = np.arange(50_000, dtype="int32")
            np.testing.assert_array_equal(pytvm.nd.array(x, sess.cpu()).numpy(), x)
            assert sess.get_function("test.rpc.add")(1, 2) == 3
    finally:
        pytvm.remove_global_func("tvm.rpc.server.GetCRTMaxPacketSize")


def test_arrays_and_handles_of_another_session_are_refused() -> None:
    with thread_server() as port_a, thread_server() as port_b:
        with rpc.connect("127.0.0.1", port_a) as a, rpc.connect("127.0.0.1", port_b) as b:
            echo_b = b.get_function("test.rpc.echo")
            on_a = pytvm.nd.array(np.ones(2, "float32"), a.cpu())
            slot_a = a._tbl_index
            with pytest.raises(ValueError, match=rf"argument 0: an array on remote\[{slot_a}\]"):
                echo_b(on_a)
            with pytest.raises(ValueError, match=r"argument 1: .* belongs to another RPC session"):
                echo_b(1, a.get_function("test.rpc.echo"))
            assert echo_b(pytvm.nd.array(on_a.numpy(), b.cpu())).numpy().tolist() == [1.0, 1.0]


def test_interpreter_exit_with_a_session_to_a_server_thread_does_not_hang() -> None:
    script = (
        "from pytvm import rpc\n"
        "from pytvm.testing.rpc import thread_server\n"
        "with thread_server() as port:\n"
        "    sess = rpc.connect('127.0.0.1', port)\n"
        "    f = sess.get_function('rpc.testing.GetShapeSize')\n"
        "    del f  # a free queued when the interpreter exits\n"
        "print('done')\n"
    )
    child = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False
    )
    assert (child.returncode, child.stdout) == (0, "done\n"), child.stderr[-2000:]
