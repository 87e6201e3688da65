"""TVM 0.27's names work on pytvm: code written for ``import tvm`` runs with ``import pytvm as
tvm`` (subpackages after a bare import, ``tvm.error``, ``DataType``, ``runtime.tensor`` ...).

apache-tvm 0.27 is the reference: names and values are compared with it, not with constants.
"""

from __future__ import annotations

import ctypes
import re
import subprocess
import sys
import threading
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
import tvm
import tvm.error

import pytvm
import pytvm as ptvm
from pytvm.ffi.errors import TVMValueError, parse_error
from pytvm.runtime import DeviceAPI
from pytvm.testing.rpc import thread_server


def _run(code: str) -> str:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


# ------------------------------------------------------------------ item 1: subpackages


def test_subpackages_are_reachable_after_a_bare_import() -> None:
    out = _run(
        "import sys, pytvm\n"
        "print('pytvm.rpc' in sys.modules, 'pytvm.contrib' in sys.modules)\n"
        "print(pytvm.rpc.connect.__module__, pytvm.contrib.hexagon.Launcher.__name__)\n"
        "print(pytvm.nd.array.__name__, pytvm.ffi.Shape.__name__, pytvm.runtime.tensor.__name__)\n"
        "print(pytvm.error.RPCError.__name__, pytvm.crt.device_binary.__name__)\n"
        "print(pytvm.viz.trace.Trace.__name__, 'rpc' in dir(pytvm))\n"
    )
    assert out.split("\n")[:5] == [
        "False False",  # loaded on first use, not by ``import pytvm``
        "pytvm.rpc.sessions.client Launcher",
        "array Shape tensor",
        "RPCError device_binary",
        "Trace True",
    ]


def test_unknown_top_level_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'no_such_package'"):
        _ = pytvm.no_such_package


def test_top_level_names_of_tvm_exist_in_pytvm() -> None:
    for name in (
        "DataType",
        "DataTypeCode",
        "Object",
        "cpu",
        "cuda",
        "device",
        "ext_dev",
        "hexagon",
        "error",
        "get_global_func",
        "register_global_func",
        "register_object",
        "rpc",
        "runtime",
        "contrib",
    ):
        assert hasattr(tvm, name), f"tvm 0.27 has no {name}: fix this list"
        assert hasattr(ptvm, name), f"pytvm has no {name}"


# ------------------------------------------------------------------ item 2: error names


def test_error_module_has_every_name_of_tvm_error() -> None:
    tvm_names = {n for n in dir(tvm.error) if not n.startswith("_")}
    assert tvm_names <= set(ptvm.error.__all__)
    for name in sorted(tvm_names - {"register_error"}):
        ours, theirs = getattr(ptvm.error, name), getattr(tvm.error, name)
        assert issubclass(ours, ptvm.TVMError), name
        # the same built-in kinds as TVM's class (RuntimeError, TimeoutError, AttributeError ...)
        builtin = {k for k in theirs.__mro__ if k.__module__ == "builtins"}
        assert builtin <= set(ours.__mro__), (name, builtin)
        # the same relations between TVM's classes
        for other in sorted(tvm_names - {"register_error"}):
            assert issubclass(ours, getattr(ptvm.error, other)) == issubclass(
                theirs, getattr(tvm.error, other)
            ), (name, other)


def _refuse(text: str) -> None:
    raise ValueError(text)


def test_remote_errors_are_caught_as_rpc_error() -> None:
    ptvm.register_global_func("conventions.refuse", _refuse, override=True)
    try:
        with thread_server() as port:
            refuse = ptvm.rpc.connect("127.0.0.1", port).get_function("conventions.refuse")
            with pytest.raises(ptvm.error.RPCError, match="bad-input"):
                refuse("bad-input")
            with pytest.raises(ValueError):  # the kind survives too
                refuse("bad-input")
    finally:
        ptvm.ffi.remove_global_func("conventions.refuse")


def test_error_kinds_of_tvm_come_back_as_their_classes() -> None:
    err = parse_error("RPCSessionTimeoutError: session timed out after 1 s")
    assert isinstance(err, ptvm.error.RPCSessionTimeoutError)
    assert isinstance(err, (ptvm.error.RPCError, TimeoutError))
    assert type(parse_error("InternalError: check failed")) is ptvm.error.InternalError
    assert isinstance(parse_error("OpNotImplemented: Conv3D"), NotImplementedError)


def test_register_error_works_as_a_bare_decorator() -> None:
    @ptvm.error.register_error
    class BoardOnFire(ptvm.error.TVMError):
        pass

    assert type(parse_error("BoardOnFire: smoke")) is BoardOnFire


# ------------------------------------------------------------------ item 2: DataType, registry


@pytest.mark.parametrize("text", ["float32", "int8", "uint1", "bool", "float16x4", "bfloat16"])
def test_datatype_from_a_string_matches_tvm(text: str) -> None:
    ours, theirs = ptvm.DataType(text), tvm.DataType(text)
    assert (ours.type_code, ours.bits, ours.lanes) == (theirs.type_code, theirs.bits, theirs.lanes)
    assert str(ours) == str(theirs) and ours == theirs and ours == text
    assert hash(ours) == hash(text) and ours.itemsize == theirs.itemsize
    assert ours.with_lanes(8) == theirs.with_lanes(8)


def test_datatype_keeps_the_triple_constructor() -> None:
    assert ptvm.DataType(2, 32) == ptvm.DataType("float32") == ptvm.DataType(2, 32, 1)
    assert ptvm.DataType.from_dlpack_data_type((0, 8, 1)) == "int8"
    assert ptvm.DataType("float32") != "float64" and ptvm.DataType("int8") != 8
    with pytest.raises(TypeError, match="needs bits"):
        ptvm.DataType(2)
    with pytest.raises(ValueError, match="unknown data type 'floatish'"):
        ptvm.DataType("floatish")


def test_register_global_func_is_tvms_register_func() -> None:
    @ptvm.register_global_func("conventions.twice")
    def twice(x: int) -> int:
        return 2 * x

    try:
        assert ptvm.get_global_func("conventions.twice")(21) == 42
        with pytest.raises(ValueError, match="already registered"):
            ptvm.register_global_func("conventions.twice", lambda x: x)
        ptvm.register_global_func("conventions.twice", lambda x: 3 * x, override=True)
        assert ptvm.get_global_func("conventions.twice")(2) == 6
    finally:
        ptvm.ffi.remove_global_func("conventions.twice")


# ------------------------------------------------------------------ item 2: runtime names


def test_runtime_tensor_and_empty_as_tvm() -> None:
    x = np.arange(6, dtype="float32").reshape(2, 3)
    a = ptvm.runtime.tensor(x)
    assert isinstance(a, ptvm.runtime.Tensor) and a.device == ptvm.cpu(0)
    np.testing.assert_array_equal(a.numpy(), x)
    b = ptvm.runtime.tensor(x, device=ptvm.cpu(0), mem_scope="global")
    np.testing.assert_array_equal(b.numpy(), x)
    e = ptvm.runtime.empty((2, 3), "int8", ptvm.cpu(0))
    assert (e.shape, e.dtype) == ((2, 3), "int8")
    with LocalAndRemote() as sess:
        r = ptvm.runtime.tensor(x, sess.cpu())
        assert r.device.is_remote
        np.testing.assert_array_equal(r.numpy(), x)


def test_module_entry_name_is_tvms() -> None:
    assert ptvm.runtime.Module.entry_name == tvm.runtime.Module.entry_name


def test_convert_matches_tvm_for_values_both_have() -> None:
    convert = ptvm.runtime.convert
    for value in (3, 2.5, True, None):
        assert convert(value) == tvm.runtime.convert(value)
    s = convert("abc")
    assert isinstance(s, ptvm.ffi.String) and s == tvm.runtime.convert("abc")
    assert convert(b"xy") == bytes(tvm.runtime.convert(b"xy"))
    assert convert(ptvm.DataType("int8")) == "int8"
    assert convert(np.dtype("float16")) == "float16"
    f = convert(lambda x: x + 1)
    assert isinstance(f, ptvm.ffi.PackedFunc) and f(1) == 2
    x = np.arange(4, dtype="int32")
    t = convert(x)
    x[0] = 7  # a view, as TVM's from_dlpack
    assert isinstance(t, ptvm.runtime.NDArray) and t.numpy().tolist() == [7, 1, 2, 3]
    assert convert([1, "a"]) == (1, "a") and isinstance(convert([1, "a"])[1], ptvm.ffi.String)
    with pytest.raises(TypeError, match=re.escape("cannot convert a builtins.object")):
        convert(object())


def test_enabled_answers_as_tvm() -> None:
    enabled = ptvm.runtime.enabled
    for kind in ("cpu", "rpc", "cuda", "gpu", "opencl", "cl", "metal", "vulkan", "rocm"):
        assert enabled(kind) == tvm.runtime.enabled(kind), kind
    assert enabled("llvm") and enabled("c") and enabled({"kind": "llvm"})
    ptvm.register_global_func("device_api.vulkan", lambda: None)
    try:
        assert enabled("vulkan")
    finally:
        ptvm.ffi.remove_global_func("device_api.vulkan")
    assert not enabled("vulkan")
    with pytest.raises(TVMValueError, match="unknown target or device 'warp-drive'"):
        enabled("warp-drive")


# ------------------------------------------------------------------ item 2: Device.sync


class _SyncRecorder(DeviceAPI):
    """A device API (for ext_dev) that records the stream syncs it is asked for."""

    name = "ext_dev"

    def __init__(self) -> None:
        self.synced: list[tuple[Any, int | None]] = []
        self.event = threading.Event()

    def stream_sync(self, dev: Any, stream: int | None) -> None:
        self.synced.append((dev, stream))
        self.event.set()


@pytest.fixture
def ext_dev_api() -> Iterator[_SyncRecorder]:
    api = _SyncRecorder()
    ptvm.register_global_func("device_api.ext_dev", lambda: api, override=True)
    try:
        yield api
    finally:
        ptvm.ffi.remove_global_func("device_api.ext_dev")


def test_device_sync_calls_the_device_api(ext_dev_api: _SyncRecorder) -> None:
    ptvm.ext_dev(1).sync()
    ptvm.ext_dev(1).sync(ctypes.c_void_p(0x40).value)
    assert ext_dev_api.synced == [(ptvm.ext_dev(1), None), (ptvm.ext_dev(1), 0x40)]


@pytest.mark.parametrize("where", ["local session", "server"])
def test_remote_device_sync_goes_through_the_rpc_device_api(
    ext_dev_api: _SyncRecorder, where: str
) -> None:
    with LocalAndRemote(where) as sess:
        dev = sess.device("ext_dev", 2)
        with ptvm.trace() as t:
            dev.sync()
        assert ext_dev_api.event.wait(10)
        assert ext_dev_api.synced == [(ptvm.ext_dev(2), None)]  # unmasked on the far side
        assert "device_api.rpc" in {e.attrs.get("api") for e in t.events}


class LocalAndRemote:
    """``rpc.LocalSession()`` or a session to a pytvm server thread on loopback."""

    def __init__(self, where: str = "server") -> None:
        self.where = where
        self._server: Any = None

    def __enter__(self) -> Any:
        if self.where == "local session":
            return ptvm.rpc.LocalSession()
        self._server = thread_server()
        port = self._server.__enter__()
        return ptvm.rpc.connect("127.0.0.1", port)

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.__exit__(None, None, None)
