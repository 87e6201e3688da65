"""``LocalServingSession``: executes RPC requests in this process (the last hop of every session).

Wire values become local ones -- a DLTensor descriptor an :class:`~pytvm.runtime.NDArray` view,
a handle the object it names -- and results go back as TVM's kReturn layout. Objects handed to
the peer are kept alive in a handle table until kFreeHandle. Host memory is only touched inside
blocks this session allocated or tensors it handed out, so a bad pointer from the wire is an
error, never a crash.
"""

from __future__ import annotations

import ctypes
import sys
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import numpy as np

from ...ffi import Device, Object, PackedFunc
from ...ffi.c_abi import DLDataType, DLDevice, DLTensor
from ...ffi.container import Shape
from ...ffi.dtype import DataType
from ...ffi.errors import TVMIndexError, TVMTypeError, TVMValueError
from ...ffi.function import PyFunction
from ...ffi.registry import get_global_func, register_func
from ...ffi.type_index import TypeIndex
from ...runtime.device_api import DeviceAPI
from ...runtime.module import Module
from ...runtime.ndarray import ALIGNMENT, NDArray
from ..wire.base import ProtocolError
from ..wire.protocol import BytesObject, Handle, ObjectRef, RPCCode, StrObject, TensorDesc
from .session import SessionBase, SessionModule, host_memory

__all__ = ["LocalServingSession"]

_CPU = 1
_UINT8 = DataType(1, 8, 1)


_SESSIONS: weakref.WeakSet[LocalServingSession] = weakref.WeakSet()


class LocalServingSession(SessionBase):
    """Serve requests against this process's global functions and device APIs."""

    name = "local"

    def __init__(self) -> None:
        _SESSIONS.add(self)
        self._objects: dict[int, list[Any]] = {}  # handle -> [object, reference count]
        # host pointer of tensors handed out -> (how many, bytes usable from the pointer)
        self._tensor_regions: dict[int, tuple[int, int]] = {}
        self._allocations: dict[int, tuple[Device, int]] = {}  # pointer -> (device, nbytes)
        self._lock = threading.RLock()  # a collector may free while a request holds it

    # ------------------------------------------------------------------ handles

    def export(self, obj: Any) -> int:
        """A handle for ``obj``, keeping it alive until a matching kFreeHandle."""
        handle = id(obj)
        with self._lock:
            entry = self._objects.get(handle)
            if entry is None:
                self._objects[handle] = [obj, 1]
                if isinstance(obj, NDArray) and obj.device.device_type == _CPU:
                    ptr, extent = obj.data_ptr, obj.byte_offset + obj.nbytes
                    refs, known = self._tensor_regions.get(ptr, (0, 0))
                    self._tensor_regions[ptr] = (refs + 1, max(known, extent))
            else:
                entry[1] += 1
        return handle

    def _free(self, handle: int) -> None:
        with self._lock:
            entry = self._objects.get(handle)
            if entry is None:
                raise TVMValueError(
                    f"kFreeHandle: {handle:#x} is not a live handle of this session"
                )
            entry[1] -= 1
            if entry[1] == 0:
                del self._objects[handle]
                obj = entry[0]
                if isinstance(obj, NDArray) and obj.data_ptr in self._tensor_regions:
                    refs, extent = self._tensor_regions[obj.data_ptr]
                    if refs <= 1:
                        del self._tensor_regions[obj.data_ptr]
                    else:
                        self._tensor_regions[obj.data_ptr] = (refs - 1, extent)

    def lookup(self, handle: int, what: str) -> Any:
        """The object behind ``handle``; a clear error for an unknown one."""
        entry = self._objects.get(handle)
        if entry is None:
            raise TVMValueError(f"{what} handle {handle:#x} is not a live handle of this session")
        return entry[0]

    @property
    def live_handles(self) -> int:
        """References the peer still holds: handle references plus allocations."""
        refs: int = sum(entry[1] for entry in list(self._objects.values()))
        return refs + len(self._allocations)

    # ------------------------------------------------------------------ calls

    def call_func(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """Call the local function ``handle`` with ``args``; the result on the wire."""
        func = self.lookup(handle, "function")
        if not callable(func):
            raise TVMValueError(f"handle {handle:#x} is a {type(func).__name__}, not a function")
        result = func(*[self._to_local(a, i) for i, a in enumerate(args)])
        return self._to_wire(result)

    def _to_local(self, value: Any, index: int) -> Any:  # noqa: PLR0911 - one return per wire kind
        kind = type(value)
        if kind is TensorDesc:
            return self._tensor(value, value.nbytes, f"argument {index}")
        if kind is Handle:
            if value.type_index == TypeIndex.OPAQUE_PTR:
                return ctypes.c_void_p(value.value) if value.value else None
            return self.lookup(value.value, f"argument {index}")
        if kind is ObjectRef:
            return self.lookup(value.handle, f"argument {index}")
        if kind is StrObject:
            return str(value)
        if kind is BytesObject:
            return bytes(value)
        return value

    def _to_wire(self, result: Any) -> list[Any]:  # noqa: PLR0911, PLR0912 - a branch per kind
        """A function result as kReturn values: its type index, then its encoding."""
        if result is None:
            return [TypeIndex.NONE, None]
        if isinstance(result, bool):
            return [TypeIndex.BOOL, result]
        if isinstance(result, (int, np.integer)):
            return [TypeIndex.INT, int(result)]
        if isinstance(result, (float, np.floating)):
            return [TypeIndex.FLOAT, float(result)]
        if isinstance(result, str):
            return [TypeIndex.STR, str(result)]
        if isinstance(result, Shape):  # an object on the wire: the peer gets a handle to it
            return [TypeIndex.SHAPE, Handle(self.export(result))]
        if isinstance(result, (bytes, bytearray, memoryview)):
            return [TypeIndex.BYTES, bytes(result)]
        if isinstance(result, (DataType, Device)):
            return [
                TypeIndex.DATA_TYPE if isinstance(result, DataType) else TypeIndex.DEVICE,
                result,
            ]
        if isinstance(result, ctypes.c_void_p):
            return [TypeIndex.OPAQUE_PTR, Handle(result.value or 0)]
        if isinstance(result, NDArray):
            desc = TensorDesc(
                result.data_ptr, result.device, result.data_type, result.shape, result.byte_offset
            )
            return [TypeIndex.TENSOR, desc, Handle(self.export(result))]
        if isinstance(result, PackedFunc):
            return [TypeIndex.FUNCTION, Handle(self.export(result))]
        if isinstance(result, Module):
            return [TypeIndex.MODULE, Handle(self.export(result))]
        if isinstance(result, Object):
            return [result.type_index, Handle(self.export(result))]
        if callable(result):
            return [TypeIndex.FUNCTION, Handle(self.export(PyFunction(result)))]
        raise TVMValueError(
            f"cannot return a {type(result).__name__} over RPC: return None, a number, str, "
            "bytes, DataType, Device, NDArray, function, module or object"
        )

    # ------------------------------------------------------------------ memory

    def _check_host(self, desc: TensorDesc, nbytes: int, what: str) -> None:
        """Host memory may only be touched inside a block this session knows."""
        block = self._allocations.get(desc.data)
        allocated = block[1] if block is not None and block[0].device_type == _CPU else -1
        size = max(allocated, self._tensor_regions.get(desc.data, (0, -1))[1])
        if size < 0 or desc.byte_offset + nbytes > size:
            raise TVMValueError(
                f"{what}: host pointer {desc.data:#x} + {desc.byte_offset} .. +{nbytes} bytes is "
                "not inside memory allocated by this session"
            )

    def _tensor(self, desc: TensorDesc, nbytes: int, what: str) -> NDArray:
        if desc.device.device_type == _CPU:
            self._check_host(desc, nbytes, what)
        return NDArray(desc.data, desc.shape, desc.dtype, desc.device, byte_offset=desc.byte_offset)

    def copy_target(self, desc: TensorDesc, nbytes: int) -> memoryview | None:
        """Host memory a copy into ``desc`` can land in; ``None`` off the CPU."""
        if desc.device.device_type != _CPU:
            return None
        self._check_host(desc, nbytes, "kCopyToRemote")
        return host_memory(desc.data + desc.byte_offset, nbytes)

    def copy_to_remote(self, desc: TensorDesc, data: memoryview) -> None:
        """Write ``data`` into the local tensor ``desc``."""
        target = self.copy_target(desc, len(data))
        if target is not None:
            target[:] = data
            return
        host = np.frombuffer(data, dtype=np.uint8)
        dst = _byte_view(desc, len(data))
        api = _api(desc.device)
        api.copy_data_from_to(_byte_view_host(host), dst, None)
        api.stream_sync(desc.device, None)

    def copy_from_remote(self, desc: TensorDesc, nbytes: int, out: memoryview | None = None) -> Any:
        """``nbytes`` of local tensor ``desc``, into ``out`` or a view/new buffer."""
        if desc.device.device_type == _CPU:
            self._check_host(desc, nbytes, "kCopyFromRemote")
            view = host_memory(desc.data + desc.byte_offset, nbytes)
            if out is None:
                return view
            out[:] = view
            return out
        host = np.empty(nbytes, dtype=np.uint8) if out is None else np.frombuffer(out, np.uint8)
        api = _api(desc.device)
        api.copy_data_from_to(_byte_view(desc, nbytes), _byte_view_host(host), None)
        api.stream_sync(desc.device, None)
        return host.data if out is None else out

    # ------------------------------------------------------------------ syscalls

    def syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """Run syscall ``code`` here; ``ProtocolError`` for an unknown code."""
        handler = _SYSCALLS.get(code)
        if handler is None:
            raise ProtocolError(f"unknown syscall {code} (status UnknownRPCSyscall)")
        return handler(self, list(args))

    def _get_global_func(self, args: list[Any]) -> Any:
        (name,) = _expect(args, (str,), "kGetGlobalFunc")
        func = get_global_func(str(name), allow_missing=True)
        return Handle(self.export(func) if func is not None else 0)

    def _free_handle(self, args: list[Any]) -> Any:
        (handle,) = _expect(args, (Handle,), "kFreeHandle")
        self._free(handle.value)

    def _alloc(self, dev: Device, nbytes: int, align: int, dtype: DataType, scope: Any) -> Handle:
        if not 0 <= nbytes <= sys.maxsize:
            raise TVMValueError(f"cannot allocate {nbytes} bytes (outside 0..{sys.maxsize})")
        ptr = _api(dev).alloc_data(dev, nbytes, align, dtype, scope)
        with self._lock:
            self._allocations[ptr] = (dev, nbytes)
        return Handle(ptr)

    def _dev_alloc_data(self, args: list[Any]) -> Any:
        dev, nbytes, align, dtype = _expect(args, (Device, int, int, DataType), "kDevAllocData")
        return self._alloc(dev, nbytes, max(align, 1), dtype, None)

    def _dev_alloc_with_scope(self, args: list[Any]) -> Any:
        desc, scope = _expect(args, (TensorDesc, (str, type(None))), "kDevAllocDataWithScope")
        scope = None if scope in (None, "global") else str(scope)
        return self._alloc(desc.device, desc.nbytes, ALIGNMENT, desc.dtype, scope)

    def _dev_free_data(self, args: list[Any]) -> Any:
        dev, ptr = _expect(args, (Device, Handle), "kDevFreeData")
        with self._lock:
            known = self._allocations.pop(ptr.value, None)
            if known is None:
                raise TVMValueError(
                    f"kDevFreeData: {ptr.value:#x} was not allocated by this session (or is freed)"
                )
        _api(dev).free_data(dev, ptr.value)

    def _copy_among(self, args: list[Any]) -> Any:
        src, dst, stream = _expect(args, (TensorDesc, TensorDesc, Handle), "kCopyAmongRemote")
        if src.nbytes != dst.nbytes:
            raise TVMValueError(f"kCopyAmongRemote: {src.nbytes} bytes into {dst.nbytes}")
        a, b = src.device.device_type, dst.device.device_type
        if _CPU not in (a, b) and a != b:
            raise TVMValueError(f"kCopyAmongRemote between device types {a} and {b}")
        dev = src.device if a != _CPU else dst.device
        src_t = self._tensor(src, src.nbytes, "kCopyAmongRemote source")
        dst_t = self._tensor(dst, dst.nbytes, "kCopyAmongRemote destination")
        _api(dev).copy_data_from_to(src_t.dltensor, dst_t.dltensor, stream.value or None)

    def _dev_simple(self, args: list[Any], code: RPCCode) -> Any:
        if code == RPCCode.DEV_SET_DEVICE:
            (dev,) = _expect(args, (Device,), code.name)
            _api(dev).set_device(dev)
            return None
        if code == RPCCode.DEV_GET_ATTR:
            dev, kind = _expect(args, (Device, int), code.name)
            api = DeviceAPI.get(dev, allow_missing=kind == 0)
            return 0 if api is None else api.get_attr(dev, kind)
        if code == RPCCode.DEV_CREATE_STREAM:
            (dev,) = _expect(args, (Device,), code.name)
            return Handle(_api(dev).create_stream(dev) or 0)
        if code == RPCCode.DEV_GET_CURRENT_STREAM:
            (dev,) = _expect(args, (Device,), code.name)
            return Handle(_api(dev).get_current_stream(dev) or 0)
        dev, stream = _expect(args, (Device, Handle), code.name)
        api = _api(dev)
        method = {
            RPCCode.DEV_STREAM_SYNC: api.stream_sync,
            RPCCode.DEV_FREE_STREAM: api.free_stream,
            RPCCode.DEV_SET_STREAM: api.set_stream,
        }[code]
        method(dev, stream.value or None)
        return None


def _simple(code: RPCCode) -> Any:
    return lambda self, args: self._dev_simple(args, code)


_SYSCALLS: dict[int, Any] = {
    RPCCode.GET_GLOBAL_FUNC: LocalServingSession._get_global_func,
    RPCCode.FREE_HANDLE: LocalServingSession._free_handle,
    RPCCode.DEV_ALLOC_DATA: LocalServingSession._dev_alloc_data,
    RPCCode.DEV_ALLOC_DATA_WITH_SCOPE: LocalServingSession._dev_alloc_with_scope,
    RPCCode.DEV_FREE_DATA: LocalServingSession._dev_free_data,
    RPCCode.COPY_AMONG_REMOTE: LocalServingSession._copy_among,
    **{
        code: _simple(code)
        for code in (
            RPCCode.DEV_SET_DEVICE,
            RPCCode.DEV_GET_ATTR,
            RPCCode.DEV_STREAM_SYNC,
            RPCCode.DEV_CREATE_STREAM,
            RPCCode.DEV_FREE_STREAM,
            RPCCode.DEV_SET_STREAM,
            RPCCode.DEV_GET_CURRENT_STREAM,
        )
    },
}


def _expect(args: list[Any], kinds: tuple[Any, ...], what: str) -> list[Any]:
    """Check a syscall's argument count and types; ``ProtocolError`` naming the bad one."""
    if len(args) != len(kinds):
        raise ProtocolError(f"{what} takes {len(kinds)} arguments, got {len(args)}")
    for i, (value, kind) in enumerate(zip(args, kinds)):
        ok = isinstance(value, kind) and not (kind is int and isinstance(value, bool))
        if not ok:
            raise ProtocolError(
                f"{what} argument {i}: expected {getattr(kind, '__name__', kind)}, "
                f"got {type(value).__name__}"
            )
    return args


def _api(dev: Device) -> DeviceAPI:
    return DeviceAPI.get(dev)


def _byte_view(desc: TensorDesc, nbytes: int) -> DLTensor:
    """``nbytes`` of a device tensor as a 1-d uint8 DLTensor (copies of chunks use this)."""
    return _dl(desc.data, desc.device, nbytes, desc.byte_offset)


def _byte_view_host(host: np.ndarray) -> DLTensor:
    return _dl(host.ctypes.data, Device(_CPU, 0), host.nbytes, 0)


def _dl(data: int, dev: Device, nbytes: int, byte_offset: int) -> DLTensor:
    shape = (ctypes.c_int64 * 1)(nbytes)
    dl = DLTensor()
    dl.data = data or None
    dl.device = DLDevice(dev.device_type, dev.device_id)
    dl.ndim = 1
    dl.dtype = DLDataType(_UINT8.code, _UINT8.bits, _UINT8.lanes)
    dl.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64))
    dl.strides = None
    dl.byte_offset = byte_offset
    dl._keep = shape  # the shape array lives as long as dl
    return dl


# ------------------------------------------------------------------ global functions


@register_func("rpc.LocalSession")
def _local_session_constructor() -> SessionModule:
    return SessionModule(LocalServingSession())


@register_func("rpc.server.live_handles")
def _live_handles() -> int:
    """Handles and allocations held by peers of every local session of this process (a server
    worker has exactly one): lets a client check that what it dropped was freed.
    """
    return sum(s.live_handles for s in list(_SESSIONS))


@register_func("tvm.rpc.server.ModuleGetFunction")
def _module_get_function(mod: Module, name: str, query_imports: bool = True) -> Any:
    return mod.get_function(str(name), query_imports=bool(query_imports), allow_missing=True)


@register_func("tvm.rpc.server.ImportModule")
def _import_module(parent: Module, child: Module) -> None:
    parent.import_module(child)


def _as_shape(value: Any, what: str) -> Shape:
    if isinstance(value, Shape):
        return value
    if isinstance(value, (tuple, list)):
        return Shape(value)
    raise TVMTypeError(f"{what}: expected an ffi.Shape, got {type(value).__name__}")


@register_func("rpc.testing.GetShapeSize")
def _get_shape_size(shape: Any) -> int:
    """TVM's test helper: the number of dimensions of a shape (one made by ``ffi.Shape``)."""
    return len(_as_shape(shape, "rpc.testing.GetShapeSize"))


@register_func("rpc.testing.GetShapeElem")
def _get_shape_elem(shape: Any, index: int) -> int:
    """TVM's test helper: dimension ``index`` of a shape."""
    dims = _as_shape(shape, "rpc.testing.GetShapeElem")
    if not 0 <= index < len(dims):
        raise TVMIndexError(
            f"rpc.testing.GetShapeElem: index {index} is outside the {len(dims)} dimensions of "
            f"{dims}"
        )
    return dims[index]
