"""``DeviceAPI``: how memory on one kind of device is allocated, copied and synchronised.

Device APIs are found through global functions named ``device_api.<name>`` (``device_api.cpu``,
``device_api.hexagon``, ``device_api.rpc`` ...), so a user can register or override one from
Python exactly as seed 000's ``device_api.hexagon``. ``DeviceAPI.get(dev)`` picks
``device_api.rpc`` for any RPC-masked device type (type >= 128).
"""

from __future__ import annotations

import ctypes
import sys
from enum import IntEnum
from typing import Any, ClassVar, Literal, overload

from ..ffi import Device, Object, register_object
from ..ffi import trace as _trace
from ..ffi.c_abi import DLTensor
from ..ffi.device import DEVICE_NAME_TO_TYPE
from ..ffi.dtype import DataType
from ..ffi.errors import TVMError, TVMMemoryError, TVMValueError
from ..ffi.registry import get_global_func, list_global_func_names, register_func, registry_version

__all__ = [
    "CPUDeviceAPI",
    "DeviceAPI",
    "DeviceAttrKind",
    "enabled",
    "nbytes_of",
    "registered_device_apis",
]


class DeviceAttrKind(IntEnum):
    """The attributes ``DeviceAPI.get_attr`` answers (TVM's ``DeviceAttrKind``)."""

    EXIST = 0
    MAX_THREADS_PER_BLOCK = 1
    WARP_SIZE = 2
    MAX_SHARED_MEMORY_PER_BLOCK = 3
    COMPUTE_VERSION = 4
    DEVICE_NAME = 5
    MAX_CLOCK_RATE = 6
    MULTI_PROCESSOR_COUNT = 7
    MAX_THREAD_DIMENSIONS = 8
    MAX_REGISTERS_PER_BLOCK = 9
    GCN_ARCH = 10
    API_VERSION = 11
    DRIVER_VERSION = 12
    L2_CACHE_SIZE_BYTES = 13
    TOTAL_GLOBAL_MEMORY = 14
    AVAILABLE_GLOBAL_MEMORY = 15


def nbytes_of(tensor: DLTensor) -> int:
    """Bytes spanned by a compact DLTensor."""
    count = 1
    for i in range(tensor.ndim):
        count *= tensor.shape[i]
    dtype = tensor.dtype
    nbytes: int = count * ((dtype.bits * dtype.lanes + 7) // 8)
    return nbytes


@register_object("runtime.DeviceAPI")
class DeviceAPI(Object):
    """Interface of a device API. Pointers are integers (addresses in the device's space)."""

    name = "abstract"

    def set_device(self, dev: Device) -> None:
        """Make ``dev`` current for the calling thread."""

    def get_attr(self, dev: Device, kind: int) -> Any:
        """An attribute of ``dev`` (see ``DeviceAttrKind``); None if unknown."""
        return None

    def alloc_data(
        self,
        dev: Device,
        nbytes: int,
        alignment: int,
        dtype: DataType,
        mem_scope: str | None = None,
    ) -> int:
        """Allocate ``nbytes`` on ``dev``; returns the data pointer."""
        raise NotImplementedError

    def free_data(self, dev: Device, ptr: int) -> None:
        """Free memory from ``alloc_data``."""
        raise NotImplementedError

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: int | None) -> None:
        """Copy the bytes of ``src`` into ``dst`` (same size, compact); either may be on host."""
        raise NotImplementedError

    def stream_sync(self, dev: Device, stream: int | None) -> None:
        """Wait until work queued on ``stream`` of ``dev`` is done."""

    def create_stream(self, dev: Device) -> int | None:
        """A new stream of ``dev`` (None: the device has only its default stream)."""
        return None

    def free_stream(self, dev: Device, stream: int | None) -> None:
        """Release a stream from ``create_stream``."""

    def set_stream(self, dev: Device, stream: int | None) -> None:
        """Make ``stream`` the current stream of ``dev``."""

    def get_current_stream(self, dev: Device) -> int | None:
        """The current stream of ``dev``."""
        return None

    def alloc_workspace(self, dev: Device, nbytes: int, dtype_hint: DataType) -> int:
        """Scratch memory for kernels; by default the same as ``alloc_data``."""
        return self.alloc_data(dev, nbytes, 64, dtype_hint)

    def free_workspace(self, dev: Device, ptr: int) -> None:
        """Release scratch memory."""
        self.free_data(dev, ptr)

    _cache: ClassVar[dict[str, tuple[int, DeviceAPI]]] = {}

    @overload
    @staticmethod
    def get(dev: Device, allow_missing: Literal[False] = False) -> DeviceAPI: ...
    @overload
    @staticmethod
    def get(dev: Device, allow_missing: bool) -> DeviceAPI | None: ...

    @staticmethod
    def get(dev: Device, allow_missing: bool = False) -> DeviceAPI | None:
        """The device API serving ``dev``: ``device_api.rpc`` when the type carries a session
        mask, else ``device_api.<device name>``.

        A missing one raises ``TVMValueError`` naming ``dev`` and the global function to
        register; with ``allow_missing=True`` it returns None instead.
        """
        name = "rpc" if dev.is_remote else dev.device_name
        cached = DeviceAPI._cache.get(name)
        version = registry_version()
        if cached is not None and cached[0] == version:
            _trace.instant_of("DeviceAPI.get", _describe_choice, dev, name, cached[1])
            return cached[1]
        factory = get_global_func(f"device_api.{name}", allow_missing=True)
        if factory is None:
            if allow_missing:
                return None
            hint = (
                " (RPC-masked device: connect an RPC session first)"
                if dev.is_remote
                else f"; register one with pytvm.register_func('device_api.{name}', ...)"
            )
            raise TVMValueError(
                f"no device API for {dev}: global function "
                f"'device_api.{name}' is not registered{hint}"
            )
        api = factory()
        if not isinstance(api, DeviceAPI):
            raise TVMError(f"device_api.{name} returned {type(api).__name__}, not a DeviceAPI")
        DeviceAPI._cache[name] = (version, api)
        _trace.instant_of("DeviceAPI.get", _describe_choice, dev, name, api)
        return api


def _describe_choice(dev: Device, name: str, api: DeviceAPI) -> tuple[str, dict[str, Any]]:
    """Which device API ``DeviceAPI.get`` chose for ``dev`` and why (seed 000's question;
    asked only while tracing).
    """
    index = dev.rpc_session_index
    why = (
        "local device type"
        if index is None
        else f"type {dev.device_type} = 128 * (session {index} + 1) + {dev.device_type % 128}"
    )
    return f"DeviceAPI.get({dev}) -> device_api.{name}", {
        "device": str(dev),
        "api": f"device_api.{name}",
        "cls": type(api).__name__,
        "why": why,
    }


_libc = ctypes.CDLL(None)
_libc.posix_memalign.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_size_t, ctypes.c_size_t]
_libc.free.argtypes = [ctypes.c_void_p]
_libc.madvise.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]

# A block of two huge pages or more asks for huge pages (transparent_hugepage "madvise" grants
# them only on request): its first touch, e.g. a kCopyToRemote landing in a fresh nd.array on
# an RPC server, then faults once per 2 MiB instead of once per 4 KiB; those faults cost more
# than the copy itself (64 MiB over loopback: 20 ms of faults beside a 17 ms copy).
_HUGE_PAGE = 1 << 21
_MADV_HUGEPAGE = 14


class CPUDeviceAPI(DeviceAPI):
    """Host memory: aligned heap blocks, copies with ``memmove``, nothing to synchronise."""

    name = "cpu"

    def get_attr(self, dev: Device, kind: int) -> Any:
        """``EXIST`` is 1 and ``DEVICE_NAME`` ``"cpu"``; other attributes are ``None``."""
        if kind == DeviceAttrKind.EXIST:
            return 1
        if kind == DeviceAttrKind.DEVICE_NAME:
            return "cpu"
        return None

    def alloc_data(
        self,
        dev: Device,
        nbytes: int,
        alignment: int,
        dtype: DataType,
        mem_scope: str | None = None,
    ) -> int:
        """A heap block of ``nbytes`` aligned to ``alignment`` (at least pointer size)."""
        if not 0 <= nbytes <= sys.maxsize:  # c_size_t would silently drop the high bits
            raise TVMMemoryError(f"cannot allocate {nbytes} bytes on {dev}")
        ptr = ctypes.c_void_p()
        align = max(alignment, ctypes.sizeof(ctypes.c_void_p))
        if _libc.posix_memalign(ctypes.byref(ptr), align, max(nbytes, 1)) != 0:
            raise TVMMemoryError(f"cannot allocate {nbytes} bytes on {dev}")
        if nbytes >= 2 * _HUGE_PAGE and sys.platform == "linux":
            _advise_huge_pages(ptr.value or 0, nbytes)
        return ptr.value or 0

    def free_data(self, dev: Device, ptr: int) -> None:
        """Free a block from :meth:`alloc_data`."""
        _libc.free(ptr)

    def copy_data_from_to(self, src: DLTensor, dst: DLTensor, stream: int | None) -> None:
        """Copy the bytes of ``src`` to ``dst`` (same size) with ``memmove``."""
        nbytes = nbytes_of(src)
        if nbytes != nbytes_of(dst):
            raise TVMValueError(
                f"copy size mismatch: source has {nbytes} bytes, destination {nbytes_of(dst)}"
            )
        ctypes.memmove((dst.data or 0) + dst.byte_offset, (src.data or 0) + src.byte_offset, nbytes)


def _advise_huge_pages(ptr: int, nbytes: int) -> None:
    """Ask for huge pages over the whole 2 MiB pages inside ``[ptr, ptr + nbytes)``; a kernel
    that refuses (THP off) leaves the block as it is.
    """
    start = -(-ptr // _HUGE_PAGE) * _HUGE_PAGE
    end = (ptr + nbytes) // _HUGE_PAGE * _HUGE_PAGE
    if end > start:
        _libc.madvise(start, end - start, _MADV_HUGEPAGE)


_CPU_API = CPUDeviceAPI()
register_func("device_api.cpu", lambda: _CPU_API)


@register_func("runtime.Device_StreamSync")
def _device_stream_sync(dev: Device, stream: Any = None) -> None:
    """TVM's ``runtime.Device_StreamSync`` (what ``Device.sync()`` calls): wait for ``stream``
    (None or 0: the current one) of ``dev``, through ``device_api.rpc`` for a remote device.
    """
    handle = stream.value if isinstance(stream, ctypes.c_void_p) else stream
    api = DeviceAPI.get(dev)
    assert api is not None
    api.stream_sync(dev, int(handle) if handle else None)


# Target kinds TVM names by a prefix ("nvptx", "rocm -mcpu=...") or by an alias of its own.
_TARGET_PREFIX_TO_API = (("nvptx", "cuda"), ("rocm", "rocm"))
_TARGET_TO_API = {"gpu": "cuda", "cl": "opencl", "mtl": "metal", "rpc": "rpc"}
_HOST_TARGETS = frozenset({"cpu", "c", "llvm", "stackvm"})


def enabled(target: str | dict[str, Any] | Any) -> bool:
    """Whether this process can run code for ``target`` (TVM's ``tvm.runtime.enabled``).

    ``target`` is a target kind or device name (``"cuda"``, ``"llvm -mcpu=x"``), a dict with a
    ``"kind"`` or a target with ``kind.name``. The host kinds (``cpu``, ``c``, ``llvm``) are
    always enabled; any other is enabled when its ``device_api.<name>`` global function is
    registered. An unknown name is a ``TVMValueError``.

    Examples
    --------
    >>> enabled("llvm"), enabled("c"), enabled("rpc")
    (True, True, True)
    """
    if isinstance(target, dict):
        target = target.get("kind", "")
    elif hasattr(target, "kind"):
        target = target.kind.name
    if not isinstance(target, str):
        raise TVMValueError(f"enabled() expects a target name, got {type(target).__name__}")
    kind = target.split(" ", 1)[0].strip()
    if kind in _HOST_TARGETS:
        return True
    api = _TARGET_TO_API.get(kind)
    for prefix, name in _TARGET_PREFIX_TO_API:
        if kind.startswith(prefix):
            api = name
    if api is None:
        if kind not in DEVICE_NAME_TO_TYPE:
            raise TVMValueError(
                f"unknown target or device {target!r}: expected one of "
                f"{', '.join(sorted({*DEVICE_NAME_TO_TYPE, *_TARGET_TO_API}))}"
            )
        api = Device(DEVICE_NAME_TO_TYPE[kind]).device_name
    return get_global_func(f"device_api.{api}", allow_missing=True) is not None


def registered_device_apis() -> list[str]:
    """Names ``n`` for which a ``device_api.n`` global function is registered, sorted."""
    return sorted(
        name.split(".", 1)[1] for name in list_global_func_names() if name.startswith("device_api.")
    )
