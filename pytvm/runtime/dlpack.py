"""DLPack in and out: share an ``NDArray``'s memory with numpy, PyTorch, TVM, ... without copies.

Export hands the consumer a ``"dltensor_versioned"`` capsule (DLPack >= 1.0, when the consumer
asks with ``max_version``) or a legacy ``"dltensor"`` one, holding a managed tensor that keeps the
array alive until the consumer calls its deleter. Import takes a producer's capsule, renames it
``"used_..."`` (so nobody else consumes it) and calls the producer's deleter when the resulting
``NDArray`` dies.
"""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

from ..ffi import Device
from ..ffi.c_abi import (
    DLPACK_FLAG_READ_ONLY,
    DLManagedTensor,
    DLManagedTensorDeleter,
    DLManagedTensorVersioned,
    DLManagedTensorVersionedDeleter,
    DLPackVersion,
)
from ..ffi.dtype import DataType
from ..ffi.errors import TVMTypeError, TVMValueError
from .ndarray import NDArray

__all__ = ["to_dlpack_capsule", "from_dlpack", "DLPACK_VERSION"]

#: The DLPack version this module produces for consumers that ask for a versioned capsule.
DLPACK_VERSION = (1, 1)

_LEGACY = b"dltensor"
_VERSIONED = b"dltensor_versioned"
_USED = {_LEGACY: b"used_dltensor", _VERSIONED: b"used_dltensor_versioned"}
_KINDS = {_LEGACY: DLManagedTensor, _VERSIONED: DLManagedTensorVersioned}

_py = ctypes.pythonapi
_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _py)
)
_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _py)
)
_get_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _py)
)
_set_name = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _py)
)
# The capsule destructor runs on a dying object: take it as a raw pointer, never a py_object.
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _py)
)
_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _py)
)

# Exported tensors not yet released by their consumer: key -> (managed struct, array).
_EXPORTED: dict[int, tuple[Any, NDArray]] = {}
_export_keys = itertools.count(1)


def _release(managed: Any) -> None:
    _EXPORTED.pop(managed.contents.manager_ctx or 0, None)


_DELETER = DLManagedTensorDeleter(_release)
_DELETER_VERSIONED = DLManagedTensorVersionedDeleter(_release)


def _destroy_capsule(capsule: int) -> None:
    # If nobody consumed the capsule, release the tensor ourselves.
    for name, kind in _KINDS.items():
        if _is_valid_raw(capsule, name):
            address = _get_pointer_raw(capsule, name)
            _release(ctypes.pointer(kind.from_address(address)))


_capsule_destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destroy_capsule)


def to_dlpack_capsule(
    array: NDArray,
    stream: Any = None,
    *,
    max_version: Any = None,
    dl_device: Any = None,
    copy: Any = None,
) -> Any:
    """A capsule sharing ``array``'s memory (the DLPack ``__dlpack__`` protocol)."""
    if array.device.is_remote:
        raise TVMValueError(
            f"cannot export {array.device} through DLPack: the memory is on a "
            "remote machine; copy it here first with .copyto(pytvm.cpu())"
        )
    if copy is True:
        raise TVMValueError("__dlpack__(copy=True) is not supported; call .copyto() first")
    if dl_device is not None and tuple(dl_device) != array.__dlpack_device__():
        raise TVMValueError(
            f"__dlpack__(dl_device={dl_device}) differs from the array's device "
            f"{array.device}; cross-device export is not supported"
        )
    key = next(_export_keys)
    if max_version is not None and tuple(max_version)[0] >= 1:
        managed: Any = DLManagedTensorVersioned()
        managed.version = DLPackVersion(*DLPACK_VERSION)
        managed.flags = DLPACK_FLAG_READ_ONLY if array._read_only else 0
        managed.deleter = _DELETER_VERSIONED
        name = _VERSIONED
    else:
        if array._read_only:  # a legacy capsule cannot say "read-only" (numpy refuses too)
            raise TVMValueError(
                "cannot export a read-only array as a legacy DLPack capsule: the consumer "
                "could write to it; ask for DLPack >= 1.0 (max_version=(1, 0)) or copy it first"
            )
        managed = DLManagedTensor()
        managed.deleter = _DELETER
        name = _LEGACY
    managed.dl_tensor = array.dltensor
    managed.manager_ctx = key
    _EXPORTED[key] = (managed, array)
    return _new(ctypes.addressof(managed), name, ctypes.cast(_capsule_destructor, ctypes.c_void_p))


class _Borrowed:
    """Calls the producer's deleter once the NDArray viewing its memory is gone."""

    __slots__ = ("address", "kind", "source")

    def __init__(self, address: int, kind: Any, source: Any) -> None:
        self.address, self.kind, self.source = address, kind, source

    def __del__(self) -> None:
        managed = self.kind.from_address(self.address)
        if managed.deleter:
            managed.deleter(ctypes.cast(self.address, ctypes.POINTER(self.kind)))


def _is_compact(shape: list[int], strides: list[int] | None) -> bool:
    if strides is None or 0 in shape:  # an empty tensor has no layout (numpy exports strides 0)
        return True
    expected = 1
    for dim, stride in zip(reversed(shape), reversed(strides)):
        if dim != 1 and stride != expected:
            return False
        expected *= dim
    return True


def _capsule_of(source: Any) -> Any:
    if not hasattr(source, "__dlpack__"):
        return source
    try:
        return source.__dlpack__(max_version=DLPACK_VERSION)
    except TypeError:  # a producer that predates DLPack 1.0
        return source.__dlpack__()


def from_dlpack(source: Any) -> NDArray:
    """An ``NDArray`` sharing memory with a DLPack producer (an object with ``__dlpack__`` or a
    DLPack capsule). The producer's memory is not copied.

    Examples
    --------
    >>> import numpy as np, pytvm
    >>> x = np.zeros(3, "float32")
    >>> a = pytvm.nd.from_dlpack(x)
    >>> x[1] = 5.0
    >>> a.numpy().tolist()
    [0.0, 5.0, 0.0]
    """
    if isinstance(source, NDArray):
        return source
    capsule = _capsule_of(source)
    name = next((n for n in _KINDS if _is_valid(capsule, n)), None)
    if name is None:
        raise TVMTypeError(
            f"from_dlpack expects an object with __dlpack__ or an unused DLPack "
            f"capsule, got {type(source).__name__}"
        )
    address = _get_pointer(capsule, name)
    kind = _KINDS[name]
    managed = kind.from_address(address)
    if name == _VERSIONED and managed.version.major > DLPACK_VERSION[0]:
        raise TVMValueError(
            f"from_dlpack: DLPack version {managed.version.major}."
            f"{managed.version.minor} is newer than supported {DLPACK_VERSION}"
        )
    dl = managed.dl_tensor
    shape = [dl.shape[i] for i in range(dl.ndim)]
    strides = [dl.strides[i] for i in range(dl.ndim)] if dl.strides else None
    if not _is_compact(shape, strides):
        raise TVMValueError(
            f"from_dlpack: tensor of shape {shape} has strides {strides}; only "
            "compact row-major tensors are supported (make it contiguous first)"
        )
    _set_name(capsule, _USED[name])
    dtype = DataType(dl.dtype.code, dl.dtype.bits, dl.dtype.lanes)
    dev = Device(dl.device.device_type, dl.device.device_id)
    array = NDArray(
        dl.data or 0,
        shape,
        dtype,
        dev,
        owner=_Borrowed(address, kind, source),
        byte_offset=dl.byte_offset,
    )
    if name == _VERSIONED and managed.flags & DLPACK_FLAG_READ_ONLY:
        array._read_only = True
    return array
