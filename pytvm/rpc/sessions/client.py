"""The client API, like TVM's ``tvm.rpc``: ``connect``, ``RPCSession`` and remote functions,
modules and objects.

Examples
--------
>>> import numpy as np, pytvm
>>> from pytvm import rpc
>>> sess = rpc.LocalSession()                 # a session over this process, no socket
>>> a = pytvm.nd.array(np.arange(3, dtype="float32"), sess.cpu())
>>> str(a.device).startswith("remote["), a.numpy().tolist()
(True, [0.0, 1.0, 2.0])
"""

from __future__ import annotations

import ctypes
import logging
import os
import reprlib
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...ffi import Device, Object, PackedFunc
from ...ffi.device import device as make_device
from ...ffi.dtype import DataType
from ...ffi.errors import TVMAttributeError, TVMTypeError, TVMValueError
from ...ffi.type_index import TypeIndex
from ...runtime.module import Module
from ...runtime.ndarray import NDArray
from ..wire.base import MAX_SESSION_TIMEOUT, ProtocolError
from ..wire.protocol import Handle, ObjectRef, RPCCode, TensorDesc
from .forwarding_session import popen_session, socket_session
from .session import SessionBase, SessionModule, insert_session
from .workspace_session import WorkspaceSession

__all__ = [
    "LocalSession",
    "PopenSession",
    "RPCSession",
    "RemoteFunction",
    "RemoteModule",
    "RemoteObject",
    "connect",
]


class RPCSession:
    """A session with a remote (or local) RPC server: functions, devices, files, modules.

    Devices of the session carry its table slot in their type (``sess.cpu(0)`` on the first
    session is ``Device(129, 0)``), so arrays on them are copied through this session.
    """

    def __init__(self, session: SessionBase) -> None:
        self._session = session
        self._tbl_index = insert_session(session)
        self._sess = SessionModule(session)

    @property
    def session(self) -> SessionBase:
        """The underlying wire-level session."""
        return self._session

    # ------------------------------------------------------------------ functions

    def get_function(self, name: str) -> RemoteFunction:
        """The remote global function ``name``; ``AttributeError`` if the server has none."""
        handle = self._session.syscall(RPCCode.GET_GLOBAL_FUNC, [name])
        if not isinstance(handle, Handle) or not handle.value:
            raise TVMAttributeError(
                f"RPC server {self._session.name} has no global function {name!r}"
            )
        return RemoteFunction(self, handle.value, name)

    def system_lib(self) -> RemoteModule:
        """The server's system library module: TVM 0.27's ``ffi.SystemLib``, or
        ``runtime.SystemLib`` on a C runtime device (and TVM 0.18 servers).
        """
        for name in ("ffi.SystemLib", "runtime.SystemLib"):
            try:
                getter = self.get_function(name)
            except AttributeError:
                continue
            module = getter()
            if not isinstance(module, RemoteModule):
                raise TVMTypeError(f"{name} on the server returned {type(module).__name__}")
            return module
        raise TVMAttributeError(
            "the RPC server has no system library (neither ffi.SystemLib nor runtime.SystemLib)"
        )

    # ------------------------------------------------------------------ devices

    def device(self, dev_type: str | int, dev_id: int = 0) -> Device:
        """A device of the server, encoded for this session."""
        dev = make_device(dev_type, dev_id)
        if dev.is_remote:
            raise TVMValueError(f"{dev} is already an RPC device")
        return dev.with_session(self._tbl_index)

    def cpu(self, dev_id: int = 0) -> Device:
        """The server's CPU."""
        return self.device("cpu", dev_id)

    def cuda(self, dev_id: int = 0) -> Device:
        """A CUDA GPU of the server."""
        return self.device("cuda", dev_id)

    def cl(self, dev_id: int = 0) -> Device:
        """An OpenCL device of the server."""
        return self.device("opencl", dev_id)

    def vulkan(self, dev_id: int = 0) -> Device:
        """A Vulkan device of the server."""
        return self.device("vulkan", dev_id)

    def metal(self, dev_id: int = 0) -> Device:
        """A Metal device of the server."""
        return self.device("metal", dev_id)

    def rocm(self, dev_id: int = 0) -> Device:
        """A ROCm device of the server."""
        return self.device("rocm", dev_id)

    def ext_dev(self, dev_id: int = 0) -> Device:
        """The extension device of the server."""
        return self.device("ext_dev", dev_id)

    def hexagon(self, dev_id: int = 0) -> Device:
        """A Hexagon DSP (or its emulator) behind the server."""
        return self.device("hexagon", dev_id)

    def webgpu(self, dev_id: int = 0) -> Device:
        """A WebGPU device of the server."""
        return self.device("webgpu", dev_id)

    # ------------------------------------------------------------------ files and modules

    def upload(
        self, data: str | os.PathLike[str] | bytes | bytearray, target: str | None = None
    ) -> None:
        """Upload a local file (or bytes, then ``target`` is required) into the workspace."""
        if isinstance(data, (bytes, bytearray)):
            if not target:
                raise TVMValueError("upload of bytes needs a target file name")
            blob = bytes(data)
        else:
            blob = Path(data).read_bytes()
            target = target or Path(data).name
        self.get_function("tvm.rpc.server.upload")(target, blob)

    def download(self, path: str) -> bytes:
        """The bytes of a file in the server's workspace."""
        return bytes(self.get_function("tvm.rpc.server.download")(path))

    def remove(self, path: str) -> None:
        """Delete a file or directory in the server's workspace."""
        self.get_function("tvm.rpc.server.remove")(path)

    def listdir(self, path: str = ".") -> list[str]:
        """Names in a workspace directory."""
        text = self.get_function("tvm.rpc.server.listdir")(path)
        return [name for name in str(text).split(",") if name]

    def load_module(self, path: str) -> RemoteModule:
        """Load an uploaded shared object on the server (dlopen there)."""
        module = self.get_function("tvm.rpc.server.load_module")(path)
        assert isinstance(module, RemoteModule)
        return module

    def download_linked_module(self, path: str) -> bytes:
        """Bytes of a shared object the server linked from an uploaded object file or tar of
        them (``export_library("x.tar")``); see :mod:`pytvm.rpc.sessions.linked_module`.
        """
        return bytes(self.get_function("tvm.rpc.server.download_linked_module")(path))

    # ------------------------------------------------------------------ lifetime

    def close(self) -> None:
        """Free remote handles still queued, send kShutdown and close the connection."""
        self._session.close()

    def __enter__(self) -> RPCSession:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"<RPCSession slot {self._tbl_index}: {self._session.name}>"


class _RemoteHandle:
    """Frees a remote handle when the last local reference goes (queued, see ForwardingSession)."""

    __slots__ = ("handle", "session")

    def __init__(self, session: RPCSession, handle: int) -> None:
        self.session, self.handle = session, handle

    def __del__(self) -> None:
        try:
            self.session._session.free_handle_later(self.handle)
        except Exception:
            pass


class RemoteFunction(PackedFunc):
    """A function living on the server; calling it is one kCallFunc round trip."""

    def __init__(self, session: RPCSession, handle: int, name: str = "") -> None:
        super().__init__(name)
        self._rpc = session
        self._remote = _RemoteHandle(session, handle)

    @property
    def remote_handle(self) -> int:
        """The server's handle of this function."""
        return self._remote.handle

    def __call__(self, *args: Any) -> Any:
        """Call the remote function with ``args``; the result, converted back."""
        session = self._rpc
        wire = [_to_wire(session, a, i) for i, a in enumerate(args)]
        return _from_wire(session, session._session.call_func(self._remote.handle, wire))


class RemoteModule(Module):
    """A module living on the server (e.g. a shared object loaded there)."""

    def __init__(self, session: RPCSession, handle: int) -> None:
        super().__init__()
        self._rpc = session
        self._remote = _RemoteHandle(session, handle)

    @property
    def type_key(self) -> str:
        """The module kind, ``"rpc"``."""
        return "rpc"

    def get_function(
        self, name: str, query_imports: bool = False, allow_missing: bool = False
    ) -> Any:
        """The remote function ``name``; ``None`` if missing and ``allow_missing``."""
        found = self._rpc.get_function("tvm.rpc.server.ModuleGetFunction")(self, name, True)
        if found is None and not allow_missing:
            raise TVMAttributeError(f"remote module has no function {name!r}")
        return found

    def import_module(self, module: Module) -> None:
        """Import ``module`` into the remote module, on the server."""
        self._rpc.get_function("tvm.rpc.server.ImportModule")(self, module)

    def evaluator_factory(self) -> PackedFunc:
        """The server's ``runtime.RPCTimeEvaluator``: timing runs there, means travel back."""
        return self._rpc.get_function("runtime.RPCTimeEvaluator")

    def global_function(self, name: str) -> PackedFunc:
        """The server's global function ``name`` (``tvm.graph_executor.create``, ...)."""
        return self._rpc.get_function(name)


class RemoteObject(Object):
    """An object living on the server; it can only be passed back to the same server."""

    def __init__(self, session: RPCSession, handle: int, remote_type_index: int) -> None:
        self._rpc = session
        self._remote = _RemoteHandle(session, handle)
        self.remote_type_index = remote_type_index

    def __repr__(self) -> str:
        return f"<RemoteObject type_index={self.remote_type_index} of {self._rpc!r}>"


def _to_wire(session: RPCSession, value: Any, index: int) -> Any:
    """A call argument as a wire value, checked against the session it goes to."""
    kind = type(value)
    if kind in (int, float, str, bytes, bool) or value is None:
        return value
    if isinstance(value, (NDArray, Device, RemoteFunction, RemoteModule, RemoteObject)):
        return _session_value_to_wire(session, value, index)
    for types, convert in _PLAIN_CONVERSIONS:
        if isinstance(value, types):
            return convert(value)
    raise TVMTypeError(
        f"argument {index}: a {kind.__name__} cannot be passed to a remote function (local "
        "objects and callbacks do not cross RPC); pass numbers, strings, bytes, devices, arrays "
        "or objects of the same session"
    )


#: Argument kinds that need no session, and their wire values (checked in this order).
_PLAIN_CONVERSIONS: tuple[tuple[type | tuple[type, ...], Callable[[Any], Any]], ...] = (
    ((bytearray, memoryview), bytes),
    (np.integer, int),
    (np.floating, float),
    (np.bool_, bool),
    (str, str),
    (DataType, lambda value: value),
    (ctypes.c_void_p, lambda value: Handle(value.value or 0)),
)


def _session_value_to_wire(session: RPCSession, value: Any, index: int) -> Any:
    """An array, device or remote object argument as a wire value; it must be ``session``'s."""
    if isinstance(value, NDArray):
        if value.device.rpc_session_index != session._tbl_index:
            raise TVMValueError(
                f"argument {index}: an array on {value.device} cannot be passed to a function of "
                f"RPC session slot {session._tbl_index}; copy it to sess.cpu() first"
            )
        return session._session.desc_of(value.dltensor)
    if isinstance(value, Device):
        if value.rpc_session_index != session._tbl_index:
            raise TVMValueError(
                f"argument {index}: cannot pass the device {value} to RPC session slot "
                f"{session._tbl_index}; use a device of that session (sess.device(...))"
            )
        return value.without_session()
    if value._rpc is not session:
        raise TVMValueError(f"argument {index}: {value!r} belongs to another RPC session")
    if isinstance(value, RemoteObject):
        return ObjectRef(value._remote.handle)
    tag = TypeIndex.MODULE if isinstance(value, RemoteModule) else TypeIndex.FUNCTION
    return Handle(value._remote.handle, tag)


def _from_wire(session: RPCSession, values: Sequence[Any]) -> Any:
    """A kReturn of a call (type index first) as a local value."""
    if not values:
        raise TVMValueError("empty kReturn from the server")
    tag = values[0]
    value: Any = values[1] if len(values) > 1 else None  # a wire value
    if tag in _RETURNED_AS_IS:
        return value
    if tag in (TypeIndex.STR, TypeIndex.SMALL_STR, TypeIndex.BYTES, TypeIndex.SMALL_BYTES):
        return _text_from_wire(tag, value)
    if tag == TypeIndex.OPAQUE_PTR:
        return ctypes.c_void_p(value.value) if isinstance(value, Handle) and value.value else None
    if tag == TypeIndex.TENSOR:
        return _tensor_from_wire(session, values)
    return _handle_from_wire(session, tag, value, values)


#: Return type indices whose wire value is already the local value.
_RETURNED_AS_IS = (
    TypeIndex.NONE,
    TypeIndex.INT,
    TypeIndex.BOOL,
    TypeIndex.FLOAT,
    TypeIndex.DATA_TYPE,
    TypeIndex.DEVICE,
)


def _text_from_wire(tag: int, value: Any) -> str | bytes:
    """A returned string or bytes; ``ProtocolError`` if the value does not match its tag."""
    text = tag in (TypeIndex.STR, TypeIndex.SMALL_STR)
    if text and isinstance(value, str):
        return str(value)
    if not text and isinstance(value, bytes):
        return bytes(value)
    raise ProtocolError(f"return tagged as {'a string' if text else 'bytes'} carries {value!r}")


def _tensor_from_wire(session: RPCSession, values: Sequence[Any]) -> NDArray:
    """A returned tensor (``[tag, desc, handle]``) as an array on the session's device."""
    desc, handle = values[1], values[2]
    if not isinstance(desc, TensorDesc) or not isinstance(handle, Handle):
        raise TVMValueError(f"malformed tensor return {values!r}")
    dev = desc.device.with_session(session._tbl_index)
    owner = _RemoteHandle(session, handle.value)
    return NDArray(desc.data, desc.shape, desc.dtype, dev, owner, desc.byte_offset)


def _handle_from_wire(session: RPCSession, tag: int, value: Any, values: Sequence[Any]) -> Any:
    """A returned function, module or other object, held by its remote handle."""
    handle_value = value.value if isinstance(value, Handle) else None
    if handle_value is None:
        raise TVMValueError(f"return of type index {tag} without a handle: {values!r}")
    if tag == TypeIndex.FUNCTION:
        return RemoteFunction(session, handle_value)
    if tag == TypeIndex.MODULE:
        return RemoteModule(session, handle_value)
    return RemoteObject(session, handle_value, int(tag))


# ---------------------------------------------------------------------------- constructors


def connect(
    host: str,
    port: int,
    key: str = "",
    session_timeout: float = 0,
    session_constructor_args: Sequence[Any] | None = None,
    enable_logging: bool = False,
    auth_token: str | None = None,
    connect_timeout: float | None = 60.0,
) -> RPCSession:
    """Connect to an RPC server (or a proxy) and start a session.

    ``session_constructor_args=[name, *args]`` makes the server call its global function
    ``name`` and serve this session through the session it returns (e.g. ``["rpc.Connect",
    host2, port2, key2, False]`` for one more hop). ``session_timeout`` asks the server to end
    the session after that many seconds (at most 7 days; 0: no limit); ``auth_token`` is
    presented as ``-token=<t>``. ``enable_logging`` (TVM's flag, off by default) logs every
    request of the session and its outcome at INFO on the ``pytvm.rpc.sessions.client`` logger.

    A refusal (``RPCError``) lists the causes possible for the key that was sent; the server's
    log names the actual one.
    """
    if session_constructor_args is not None and not isinstance(
        session_constructor_args, (list, tuple)
    ):
        raise TVMTypeError("session_constructor_args must be a list or tuple")
    full_key = "client:" + key
    if session_timeout:
        if not 0 < float(session_timeout) <= MAX_SESSION_TIMEOUT:
            raise TVMValueError(
                f"session_timeout={session_timeout!r}: expected seconds in "
                f"(0, {MAX_SESSION_TIMEOUT:g}], or 0 for no limit"
            )
        full_key += f" -timeout={session_timeout}"
    if auth_token:
        if " " in auth_token:
            raise TVMValueError("auth_token must not contain spaces")
        full_key += f" -token={auth_token}"
    session = socket_session(
        host, int(port), full_key, list(session_constructor_args or ()), connect_timeout
    )
    if enable_logging:
        _log_each_request(session, f"{host}:{port}")
    return RPCSession(session)


_request_log = logging.getLogger("pytvm.rpc.client")
_brief = reprlib.Repr()
_brief.maxstring = _brief.maxother = 60


def _log_each_request(session: SessionBase, peer: str) -> None:
    """Log each request ``session`` sends (``call_func``, ``syscall`` and the copies), its
    arguments in brief, and what came back or what it raised, with its duration.
    """
    for name in ("call_func", "syscall", "copy_to_remote", "copy_from_remote"):
        setattr(session, name, _logged(getattr(session, name), name, peer))


def _logged(request: Callable[..., Any], what: str, peer: str) -> Callable[..., Any]:
    def logged(*args: Any) -> Any:
        shown = ", ".join(
            f"<{len(a)} bytes>" if isinstance(a, (memoryview, bytes)) else _brief.repr(a)
            for a in args
        )
        start = time.perf_counter()
        try:
            result = request(*args)
        except Exception as err:
            _request_log.info("rpc %s: %s(%s) raised %s", peer, what, shown, type(err).__name__)
            raise
        ms = (time.perf_counter() - start) * 1e3
        _request_log.info(
            "rpc %s: %s(%s) -> %s in %.3f ms", peer, what, shown, _brief.repr(result), ms
        )
        return result

    return logged


def LocalSession() -> RPCSession:
    """An RPC session served by this process (no socket): same API, local execution.

    It has a temporary workspace of its own (removed when the session is closed or collected)
    for ``upload``/``download``/``remove``/``listdir``/``load_module``, and offers the server's
    test functions (``rpc.test.*``, ``testing.echo``).
    """
    return RPCSession(WorkspaceSession())


def PopenSession(binary: str | bytes | os.PathLike[str]) -> RPCSession:
    """A session with an executable started as ``binary <read_fd> <write_fd>`` over pipes."""
    return RPCSession(popen_session(binary))
