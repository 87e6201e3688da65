"""``NDArray``: a tensor in a device's memory, described by a ``DLTensor`` (seed 000's flows).

Every copy goes through the device API of the device holding the data:
``copyfrom(numpy)`` is seed 000's ``copy_from_bytes`` (``copy_data_from_to`` then
``stream_sync``), whatever the device is -- host memory, an accelerator, or a remote device
whose device API is ``device_api.rpc``.
"""

from __future__ import annotations

import ctypes
import math
import operator
import weakref
from collections.abc import Sequence
from typing import Any, SupportsIndex

import numpy as np

from ..ffi import Device, Object, cpu, register_object
from ..ffi import trace as _trace
from ..ffi.arg_convert import register_arg_setter, set_dltensor_wrapper
from ..ffi.c_abi import DLDataType, DLDevice, DLTensor
from ..ffi.device import device as make_device
from ..ffi.dtype import DataType
from ..ffi.dtype import dtype as make_dtype
from ..ffi.errors import TVMTypeError, TVMValueError
from ..ffi.type_index import TypeIndex
from ._dlpack_capsule import export_capsule
from .device_api import DeviceAPI

__all__ = ["ALIGNMENT", "NDArray", "array", "empty", "tensor"]

#: Alignment of every allocation made for an ``NDArray``.
ALIGNMENT = 64

# NDArrays by the address of their DLTensor, so a DLTensor* back from C finds its array.
#: Arrays with more elements show only their head in ``repr``.
_REPR_MAX_ELEMENTS = 1000

_BY_ADDRESS: weakref.WeakValueDictionary[int, NDArray] = weakref.WeakValueDictionary()


class _Allocation:
    """Frees an NDArray's memory through the device API that allocated it."""

    __slots__ = ("api", "dev", "ptr")

    def __init__(self, api: DeviceAPI, dev: Device, ptr: int) -> None:
        self.api, self.dev, self.ptr = api, dev, ptr

    def __del__(self) -> None:
        try:
            self.api.free_data(self.dev, self.ptr)
        except Exception:
            pass


@register_object("ffi.Tensor")
class NDArray(Object):
    """An n-dimensional array on a device.

    Make one with :func:`pytvm.nd.array`, :func:`pytvm.nd.empty` or
    :func:`pytvm.nd.from_dlpack`.

    Examples
    --------
    >>> import numpy as np, pytvm
    >>> a = pytvm.nd.array(np.arange(4, dtype="int32"))
    >>> a.shape, a.dtype, str(a.device)
    ((4,), 'int32', 'cpu(0)')
    >>> a.copyfrom(np.array([5, 6, 7, 8], "int32")).numpy().tolist()
    [5, 6, 7, 8]
    """

    #: True for memory a DLPack producer marked read-only: copies into it are refused.
    _read_only: bool = False

    def __init__(
        self,
        data: int,
        shape: Sequence[int],
        dtype: DataType,
        dev: Device,
        owner: Any = None,
        byte_offset: int = 0,
    ) -> None:
        ndim = len(shape)
        self._shape = tuple(int(s) for s in shape)
        self._shape_buf = (ctypes.c_int64 * max(ndim, 1))(*self._shape)
        self._dtype = dtype
        self._device = dev
        self._owner = owner
        dl = DLTensor()
        dl.data = data or None
        dl.device = DLDevice(dev.device_type, dev.device_id)
        dl.ndim = ndim
        dl.dtype = DLDataType(dtype.code, dtype.bits, dtype.lanes)
        dl.shape = ctypes.cast(self._shape_buf, ctypes.POINTER(ctypes.c_int64))
        dl.strides = None
        dl.byte_offset = byte_offset
        self._dl = dl
        self._dl_address = ctypes.addressof(dl)
        _BY_ADDRESS[self._dl_address] = self

    # ------------------------------------------------------------------ properties

    @property
    def shape(self) -> tuple[int, ...]:
        """The shape."""
        return self._shape

    @property
    def dtype(self) -> str:
        """The element type as a string, e.g. ``"float32"``."""
        return str(self._dtype)

    @property
    def data_type(self) -> DataType:
        """The element type as a ``DataType``."""
        return self._dtype

    @property
    def device(self) -> Device:
        """The device holding the data (RPC-masked for a remote array)."""
        return self._device

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self._shape)

    @property
    def byte_offset(self) -> int:
        """Offset of the first element from the data pointer, in bytes."""
        return int(self._dl.byte_offset)

    @property
    def data_ptr(self) -> int:
        """The data pointer (an address in the device's memory)."""
        return self._dl.data or 0

    @property
    def size(self) -> int:
        """Number of elements."""
        return math.prod(self._shape)

    @property
    def nbytes(self) -> int:
        """Bytes of data."""
        return self.size * self._dtype.itemsize

    @property
    def dltensor(self) -> DLTensor:
        """The ``DLTensor`` describing this array (valid while the array lives)."""
        return self._dl

    @property
    def dltensor_address(self) -> int:
        """Address of the ``DLTensor``: what C kernels receive as a ``DLTensor*``."""
        return self._dl_address

    # ------------------------------------------------------------------ copies

    def _check_same(self, shape: tuple[int, ...], dtype: str, what: str) -> None:
        if shape != self._shape or dtype != self.dtype:
            raise TVMValueError(
                f"{what}: shape/dtype mismatch: array is {self._shape} {self.dtype}, "
                f"source is {shape} {dtype}"
            )

    def _host_layout(self) -> tuple[tuple[int, ...], str]:
        """Shape and element type of this array as numpy sees it: vector lanes become the last
        axis (``(2,) float32x4`` is ``(2, 4) float32``), as in TVM.
        """
        t = self._dtype
        if t.lanes == 1:
            return self._shape, self.dtype
        return (*self._shape, t.lanes), str(DataType(t.code, t.bits, 1))

    def copyfrom(self, source: Any) -> NDArray:
        """Copy data from a numpy array (or array-like) or another NDArray into this array."""
        with _trace.span_of("Python API", _describe_array, "NDArray.copyfrom", self):
            if isinstance(source, NDArray):
                source.copyto(self)
                return self
            if not isinstance(source, np.ndarray):
                source = np.asarray(source, dtype=self._dtype.numpy_dtype())
            shape, dtype = self._host_layout()
            if source.shape != shape or str(make_dtype(source.dtype)) != dtype:
                raise TVMValueError(
                    f"copyfrom: shape/dtype mismatch: array is {shape} {dtype}, "
                    f"source is {source.shape} {make_dtype(source.dtype)}"
                )
            if not source.dtype.isnative:  # the device holds native byte order (">i4" -> "<i4")
                source = source.astype(source.dtype.newbyteorder("="))
            host = np.ascontiguousarray(source)  # a non-contiguous input is copied, never misread
            self.copy_from_bytes(host)
            return self

    def _check_writable(self, what: str) -> None:
        if self._read_only:
            raise TVMValueError(
                f"{what}: this {self._shape} {self.dtype} array views memory its DLPack producer "
                "marked read-only; write into a copy instead (.copyto(pytvm.cpu()))"
            )

    def copy_from_bytes(self, host: np.ndarray | bytes | bytearray | memoryview) -> None:
        """Seed 000's CopyFromBytes: device API ``copy_data_from_to`` host -> here, then sync."""
        self._check_writable("copy_from_bytes")
        buf = np.frombuffer(host, dtype=np.uint8) if not isinstance(host, np.ndarray) else host
        if buf.nbytes != self.nbytes:
            raise TVMValueError(
                f"copy_from_bytes: got {buf.nbytes} bytes, array {self._shape} "
                f"{self.dtype} holds {self.nbytes}"
            )
        with _trace.span_of("Python API", _describe_bytes, "NDArray.copy_from_bytes", buf):
            api = DeviceAPI.get(self._device)
            api.copy_data_from_to(_host_view(buf, self), self._dl, None)
            api.stream_sync(self._device, None)

    def copy_to_bytes(self, host: np.ndarray) -> None:
        """Copy this array's bytes into a contiguous host buffer of the same size, then sync."""
        if host.nbytes != self.nbytes or not host.flags.c_contiguous:
            raise TVMValueError(
                f"copy_to_bytes needs a contiguous buffer of {self.nbytes} bytes, got {host.nbytes}"
            )
        with _trace.span_of("Python API", _describe_bytes, "NDArray.copy_to_bytes", host):
            api = DeviceAPI.get(self._device)
            api.copy_data_from_to(self._dl, _host_view(host, self), None)
            api.stream_sync(self._device, None)

    def numpy(self) -> np.ndarray:
        """A numpy copy of the data."""
        with _trace.span_of("Python API", _describe_array, "NDArray.numpy", self):
            out = np.empty(self._host_layout()[0], dtype=self._dtype.numpy_dtype())
            self.copy_to_bytes(out)
            return out

    def copyto(self, target: Device | NDArray) -> NDArray:
        """Copy to a device (a new array) or into an existing array of the same shape/dtype."""
        if isinstance(target, NDArray):
            target._check_same(self._shape, self.dtype, "copyto")
            target._check_writable("copyto")
            _copy_between(self, target)
            return target
        if isinstance(target, Device):
            out = empty(self._shape, self._dtype, target)
            _copy_between(self, out)
            return out
        raise TVMTypeError(f"copyto expects a Device or an NDArray, got {type(target).__name__}")

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        out = self.numpy()
        return out if dtype is None else out.astype(dtype)

    def __repr__(self) -> str:
        head = f"<pytvm.NDArray shape={self._shape}, dtype={self.dtype}, {self._device}>"
        if self._device.is_remote or self.size > _REPR_MAX_ELEMENTS:
            return head
        return f"{head}\n{self.numpy()!r}"

    # The capsules are built in _dlpack_capsule (import is dlpack.py's, which imports this).
    def __dlpack__(
        self,
        stream: Any = None,
        *,
        max_version: Any = None,
        dl_device: Any = None,
        copy: Any = None,
    ) -> Any:
        """Export through DLPack, sharing memory (see ``pytvm.runtime.dlpack``)."""
        return export_capsule(
            self._dl,
            self,
            self._device,
            self._read_only,
            max_version=max_version,
            dl_device=dl_device,
            copy=copy,
        )

    def __dlpack_device__(self) -> tuple[int, int]:
        return (self._device.device_type, self._device.device_id)


def _host_view(buf: np.ndarray, like: NDArray) -> DLTensor:
    """A DLTensor over host memory, shaped like ``like`` (the copy target/source)."""
    host = DLTensor()
    host.data = buf.ctypes.data or None
    host.device = DLDevice(1, 0)
    host.ndim = like._dl.ndim
    host.dtype = like._dl.dtype
    host.shape = like._dl.shape
    host.strides = None
    host.byte_offset = 0
    return host


def _copy_between(src: NDArray, dst: NDArray) -> None:
    """TVMArrayCopyFromTo: the device API of the non-CPU side does the copy."""
    dev = src._device if src._device.device_type != 1 else dst._device
    api = DeviceAPI.get(dev)
    api.copy_data_from_to(src._dl, dst._dl, None)
    api.stream_sync(dev, None)


def _describe_array(name: str, arr: NDArray) -> tuple[str, dict[str, Any]]:
    """A ``Python API`` span about ``arr`` (asked only while tracing)."""
    return name, {"shape": list(arr.shape), "dtype": arr.dtype, "device": str(arr.device)}


def _describe_bytes(name: str, buf: np.ndarray) -> tuple[str, dict[str, Any]]:
    """A ``Python API`` span moving the bytes of ``buf`` (asked only while tracing)."""
    return name, {"bytes": buf.nbytes}


def _dimension(d: Any) -> int | None:
    """``d`` as an int when it is one (an int, a numpy integer, or an object with
    ``__index__`` such as a constant shape expression of the compiler); else ``None``.
    """
    if isinstance(d, bool):
        return None
    try:
        return operator.index(d)
    except TypeError:
        return None


def _normalize_shape(shape: SupportsIndex | Sequence[SupportsIndex]) -> tuple[int, ...]:
    dims = (shape,) if _dimension(shape) is not None else tuple(shape)  # type: ignore[arg-type]
    out = tuple(_dimension(d) for d in dims)
    if any(d is None or d < 0 for d in out):
        raise TVMValueError(f"bad shape {shape!r}: dimensions must be non-negative ints")
    return out  # type: ignore[return-value]


def empty(
    shape: SupportsIndex | Sequence[SupportsIndex],
    dtype: str | DataType | Any = "float32",
    device: Device | str | None = None,
    mem_scope: str | None = None,
) -> NDArray:
    """An uninitialised array on ``device`` (default ``cpu(0)``)."""
    dims = _normalize_shape(shape)
    dt = make_dtype(dtype)
    dev = cpu(0) if device is None else make_device(device)
    api = DeviceAPI.get(dev)
    nbytes = math.prod(dims) * dt.itemsize
    ptr = api.alloc_data(dev, nbytes, ALIGNMENT, dt, mem_scope)
    return NDArray(ptr, dims, dt, dev, owner=_Allocation(api, dev, ptr))


def array(arr: Any, device: Device | str | None = None) -> NDArray:
    """An array on ``device`` holding a copy of ``arr`` (numpy, array-like or NDArray)."""
    if isinstance(arr, NDArray):
        return arr.copyto(cpu(0) if device is None else make_device(device))
    host = np.asarray(arr)
    out = empty(host.shape, make_dtype(host.dtype), device)
    return out.copyfrom(host)


def tensor(arr: Any, device: Device | str | None = None, mem_scope: str | None = None) -> NDArray:
    """An array on ``device`` (default ``cpu(0)``) holding a copy of ``arr``: TVM 0.27's
    ``tvm.runtime.tensor``, the same as :func:`array` with a memory scope.

    Examples
    --------
    >>> tensor([1, 2], device="cpu").numpy().tolist()
    [1, 2]
    """
    if mem_scope is None:
        return array(arr, device)
    host = arr.numpy() if isinstance(arr, NDArray) else np.asarray(arr)
    out = empty(host.shape, make_dtype(host.dtype), device, mem_scope)
    return out.copyfrom(host)


def _set_ndarray(values: Any, i: int, v: NDArray, keep: list[Any]) -> int:
    values[i] = v._dl_address
    return TypeIndex.DL_TENSOR_PTR


def _wrap_dltensor(address: int) -> NDArray:
    """A DLTensor* from C: the NDArray it belongs to, or a borrowed view of C's memory."""
    found = _BY_ADDRESS.get(address)
    if found is not None:
        return found
    dl = DLTensor.from_address(address)
    shape = [dl.shape[i] for i in range(dl.ndim)]
    dtype = DataType(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)
    dev = Device(dl.device.device_type, dl.device.device_id)
    return NDArray(dl.data or 0, shape, dtype, dev, owner=None, byte_offset=dl.byte_offset)


register_arg_setter(NDArray, _set_ndarray, is_tensor=True)
set_dltensor_wrapper(_wrap_dltensor)
