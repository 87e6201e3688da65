"""The session interface every RPC hop implements, the ``rpc`` module that carries one, and the
process-wide session table that gives remote devices their type mask (spec section 7).

A :class:`SessionBase` speaks wire values (``pytvm.rpc.wire.protocol``): ``call_func`` takes
decoded arguments and returns the kReturn values (type tag first), ``syscall`` runs codes 9-21,
and the two copy methods move raw bytes. A
:class:`~pytvm.rpc.sessions.local_serving_session.LocalServingSession` executes them in this
process; a :class:`~pytvm.rpc.sessions.forwarding_session.ForwardingSession` forwards them over
an endpoint. A server's serving session is one or the other, which is what makes nested sessions
work: the request is simply handed to the next hop unchanged.
"""

from __future__ import annotations

import ctypes
import os
import threading
import weakref
from collections.abc import Sequence
from typing import Any

from ...ffi import trace as _trace
from ...ffi.c_abi import DLTensor
from ...ffi.device import Device
from ...ffi.dtype import DataType
from ...ffi.errors import TVMError, TVMValueError
from ...runtime.device_api import DeviceAPI, DeviceAttrKind
from ...runtime.module import Module
from ..wire.base import RPC_SESS_MASK
from ..wire.protocol import Handle, RPCCode, TensorDesc

__all__ = [
    "MAX_SESSIONS",
    "SessionBase",
    "SessionModule",
    "get_session",
    "insert_session",
    "live_sessions",
    "session_of_module",
]

#: Slots in the session table (TVM's kMaxSession).
MAX_SESSIONS = 32


class SessionBase(DeviceAPI):
    """One end of an RPC session, at the level of wire values.

    A session is also the device API of its remote devices (seed 000: ``RPCClientSession`` is
    both): the ``DeviceAPI`` methods below take RPC-masked devices and host ``DLTensor`` views,
    strip the mask and turn each call into the matching syscall or copy.
    """

    #: A short description of where requests go (for error messages and traces).
    name: str = "session"
    #: Slot in the session table once inserted (-1: not in the table).
    table_index: int = -1
    #: Whether requests leave this process (a client session over an endpoint): then a trace
    #: asks the next hop for its events (``pytvm.rpc.sessions.hop``).
    forwards: bool = False

    def call_func(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """Call the function ``handle``; returns the kReturn values, result type index first."""
        raise NotImplementedError

    def syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """Run syscall ``code`` (9-21) with wire arguments; returns its single result value."""
        raise NotImplementedError

    def copy_to_remote(self, desc: TensorDesc, data: memoryview) -> None:
        """Write ``data`` at ``desc.data + desc.byte_offset``."""
        raise NotImplementedError

    def copy_from_remote(self, desc: TensorDesc, nbytes: int, out: memoryview | None = None) -> Any:
        """Read ``nbytes`` from ``desc.data + desc.byte_offset``: into ``out`` if given (returns
        it), else into a new buffer.
        """
        raise NotImplementedError

    def copy_target(self, desc: TensorDesc, nbytes: int) -> memoryview | None:
        """Memory the incoming bytes of a kCopyToRemote can be received into directly, or None
        (then they are staged and passed to :meth:`copy_to_remote`).
        """
        return None

    def free_handle_later(self, handle: int) -> None:
        """Release ``handle`` at the next convenient point (safe from a garbage collector)."""
        self.syscall(RPCCode.FREE_HANDLE, [Handle(handle)])

    def close(self) -> None:
        """End the session; later requests fail."""

    # ------------------------------------------------------------------ as a device API

    def _unmask(self, dev: Device) -> Device:
        index = dev.rpc_session_index
        if index is not None and index != self.table_index:
            raise TVMValueError(
                f"{dev} belongs to RPC session slot {index}, not to this session "
                f"(slot {self.table_index}, {self.name})"
            )
        return dev.without_session()

    def desc_of(self, tensor: DLTensor) -> TensorDesc:
        """The wire descriptor of a local DLTensor describing remote memory (mask stripped)."""
        dev = self._unmask(Device(tensor.device.device_type, tensor.device.device_id))
        dt = tensor.dtype
        shape = tuple(tensor.shape[i] for i in range(tensor.ndim))
        return TensorDesc(
            tensor.data or 0, dev, DataType(dt.code, dt.bits, dt.lanes), shape, tensor.byte_offset
        )

    def set_device(self, dev: Device) -> None:
        """Make ``dev`` current on the server."""
        self.syscall(RPCCode.DEV_SET_DEVICE, [self._unmask(dev)])

    def get_attr(self, dev: Device, kind: int) -> Any:
        """Attribute ``kind`` of ``dev``; ``kExist`` of the remote CPU is answered here."""
        real = self._unmask(dev)
        if kind == DeviceAttrKind.EXIST and real.device_type == _CPU:
            return 1  # TVM answers this one locally
        return self.syscall(RPCCode.DEV_GET_ATTR, [real, int(kind)])

    def alloc_data(
        self,
        dev: Device,
        nbytes: int,
        alignment: int,
        dtype: DataType,
        mem_scope: str | None = None,
    ) -> int:
        """Allocate ``nbytes`` on remote ``dev``; the remote pointer."""
        with _trace.span_of("client session", _describe, self, "alloc_data", dev, nbytes):
            real = self._unmask(dev)
            if mem_scope in (None, "global"):
                args = [real, int(nbytes), int(alignment), dtype]
                ptr = self.syscall(RPCCode.DEV_ALLOC_DATA, args)
            else:
                template = TensorDesc(0, real, DataType(1, 8, 1), (int(nbytes),))
                ptr = self.syscall(RPCCode.DEV_ALLOC_DATA_WITH_SCOPE, [template, mem_scope])
            return _pointer(ptr, "allocation")

    def free_data(self, dev: Device, ptr: int) -> None:
        """Free the remote allocation ``ptr`` on ``dev``."""
        with _trace.span_of("client session", _describe, self, "free_data", dev):
            self.syscall(RPCCode.DEV_FREE_DATA, [self._unmask(dev), Handle(ptr)])

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: int | None) -> None:
        """Copy between two remote tensors of this session, or a remote and a host one."""
        src_remote = src.device.device_type >= RPC_SESS_MASK
        dst_remote = dst.device.device_type >= RPC_SESS_MASK
        with _trace.span_of(
            "client session", _describe_copy, self, src, dst, src_remote, dst_remote
        ):
            if src_remote and dst_remote:
                self.syscall(
                    RPCCode.COPY_AMONG_REMOTE,
                    [self.desc_of(src), self.desc_of(dst), Handle(stream or 0)],
                )
            elif dst_remote and src.device.device_type == _CPU:
                desc = self.desc_of(dst)
                host = host_memory((src.data or 0) + src.byte_offset, desc.nbytes)
                self.copy_to_remote(desc, host)
            elif src_remote and dst.device.device_type == _CPU:
                desc = self.desc_of(src)
                out = host_memory((dst.data or 0) + dst.byte_offset, desc.nbytes)
                self.copy_from_remote(desc, desc.nbytes, out)
            else:
                raise TVMValueError(
                    f"cannot copy between device types {src.device.device_type} and "
                    f"{dst.device.device_type} through {self.name}: one side must be this "
                    "session's remote device and the other host memory or the same session"
                )

    def stream_sync(self, dev: Device, stream: int | None) -> None:
        """Wait for ``stream`` on remote ``dev``."""
        with _trace.span_of("client session", _describe, self, "stream_sync", dev) as sp:
            real = self._unmask(dev)
            if real.device_type == _CPU and not stream:
                sp.set(skipped="host copies on the server are synchronous")
                return  # host copies on the server are synchronous; save the round trip
            self.syscall(RPCCode.DEV_STREAM_SYNC, [real, Handle(stream or 0)])

    def create_stream(self, dev: Device) -> int | None:
        """A new stream on remote ``dev``; ``None`` for the default stream."""
        return (
            _pointer(self.syscall(RPCCode.DEV_CREATE_STREAM, [self._unmask(dev)]), "stream") or None
        )

    def free_stream(self, dev: Device, stream: int | None) -> None:
        """Free ``stream`` on remote ``dev``."""
        self.syscall(RPCCode.DEV_FREE_STREAM, [self._unmask(dev), Handle(stream or 0)])

    def set_stream(self, dev: Device, stream: int | None) -> None:
        """Make ``stream`` current on remote ``dev``."""
        self.syscall(RPCCode.DEV_SET_STREAM, [self._unmask(dev), Handle(stream or 0)])

    def get_current_stream(self, dev: Device) -> int | None:
        """The current stream on remote ``dev``; ``None`` for the default stream."""
        value = self.syscall(RPCCode.DEV_GET_CURRENT_STREAM, [self._unmask(dev)])
        return _pointer(value, "stream") or None


_CPU = 1


# ------------------------------------------------------------------ tracing (asked only when on)


def _describe(
    session: SessionBase, method: str, dev: Device, nbytes: int | None = None
) -> tuple[str, dict[str, Any]]:
    """Name and attributes of a ``client session`` span."""
    attrs: dict[str, Any] = {"device": str(dev), "session": session.name}
    if nbytes is not None:
        attrs["bytes"] = int(nbytes)
    return f"{type(session).__name__}.{method}", attrs


def _describe_copy(
    session: SessionBase, src: DLTensor, dst: DLTensor, src_remote: bool, dst_remote: bool
) -> tuple[str, dict[str, Any]]:
    """The ``client session`` span of ``copy_data_from_to``."""
    remote = dst if dst_remote else src
    dev = Device(remote.device.device_type, remote.device.device_id)
    nbytes = 1
    for i in range(remote.ndim):
        nbytes *= remote.shape[i]
    nbytes *= (remote.dtype.bits * remote.dtype.lanes + 7) // 8
    direction = (
        "remote -> remote"
        if src_remote and dst_remote
        else ("host -> remote" if dst_remote else "remote -> host")
    )
    name, attrs = _describe(session, "copy_data_from_to", dev, nbytes)
    attrs["direction"] = direction
    return name, attrs


def _pointer(value: Any, what: str) -> int:
    if isinstance(value, Handle):
        return value.value
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    raise TVMValueError(f"the server answered a {what} request with {value!r}, not a pointer")


def host_memory(address: int, nbytes: int) -> memoryview:
    """``nbytes`` of this process's memory at ``address`` as a writable byte view."""
    return memoryview((ctypes.c_char * nbytes).from_address(address)).cast("B")


class SessionModule(Module):
    """The ``rpc`` module a session constructor returns; it carries the :class:`SessionBase`."""

    def __init__(self, session: SessionBase) -> None:
        super().__init__()
        self.session = session

    @property
    def type_key(self) -> str:
        """The module kind, ``"rpc"``."""
        return "rpc"

    def __repr__(self) -> str:
        return f"<pytvm rpc module: {self.session.name}>"


def session_of_module(value: Any, constructor: str) -> SessionBase:
    """The session inside a constructor's result; a clear error if it returned something else."""
    if isinstance(value, SessionModule):
        return value.session
    if isinstance(value, SessionBase):
        return value
    raise TVMValueError(
        f"session constructor {constructor!r} returned {type(value).__name__}, expected an RPC "
        "session module (pytvm.rpc.SessionModule)"
    )


# ------------------------------------------------------------------------------ the table


class _Table:
    """The process's session slots and the lock guarding them."""

    slots: list[weakref.ref[SessionBase] | None] = [None] * MAX_SESSIONS
    lock = threading.Lock()


def _reset_lock_after_fork() -> None:
    _Table.lock = threading.Lock()  # a forked session worker has only the forking thread


os.register_at_fork(after_in_child=_reset_lock_after_fork)


def insert_session(session: SessionBase) -> int:
    """Put ``session`` in the first free slot; its remote devices get type
    ``(slot + 1) * 128 + real_type``.
    """
    with _Table.lock:
        for index, ref in enumerate(_Table.slots):
            if ref is None or ref() is None:
                _Table.slots[index] = weakref.ref(session)
                session.table_index = index
                return index
    raise TVMError(
        f"all {MAX_SESSIONS} RPC session slots are in use; close sessions you no longer need"
    )


def live_sessions() -> list[SessionBase]:
    """The sessions in the table that are still alive, by slot."""
    with _Table.lock:
        refs = list(_Table.slots)
    found = [ref() for ref in refs if ref is not None]
    return [s for s in found if s is not None]


def get_session(table_index: int) -> SessionBase:
    """The live session in slot ``table_index``."""
    ref = _Table.slots[table_index] if 0 <= table_index < MAX_SESSIONS else None
    session = ref() if ref is not None else None
    if session is None:
        raise TVMValueError(
            f"no live RPC session in slot {table_index} (device type "
            f"{(table_index + 1) * RPC_SESS_MASK}+): the session was closed or never existed"
        )
    return session
