"""DLPack capsules at the C level: the ``PyCapsule`` calls, the capsule names, and export.

Export hands the consumer a ``"dltensor_versioned"`` capsule (DLPack >= 1.0, when the consumer
asks with ``max_version``) or a legacy ``"dltensor"`` one, holding a managed tensor that keeps the
exporting array alive until the consumer calls its deleter. This module knows DLTensors, not
``NDArray``: ``ndarray.py`` exports through it and ``dlpack.py`` imports through it.
"""

from __future__ import annotations

import ctypes
import itertools
from typing import Any

from ..ffi.c_abi import (
    DLPACK_FLAG_READ_ONLY,
    DLManagedTensor,
    DLManagedTensorDeleter,
    DLManagedTensorVersioned,
    DLManagedTensorVersionedDeleter,
    DLPackVersion,
    DLTensor,
)
from ..ffi.device import Device
from ..ffi.errors import TVMValueError

__all__ = [
    "DLPACK_VERSION",
    "EXPORTED",
    "KINDS",
    "LEGACY",
    "USED",
    "VERSIONED",
    "capsule_pointer",
    "export_capsule",
    "is_valid_capsule",
    "rename_capsule",
]

#: The DLPack version produced for consumers that ask for a versioned capsule.
DLPACK_VERSION = (1, 1)

LEGACY = b"dltensor"
VERSIONED = b"dltensor_versioned"
#: The name a capsule takes once consumed, by its unconsumed name.
USED = {LEGACY: b"used_dltensor", VERSIONED: b"used_dltensor_versioned"}
#: The managed-tensor struct behind each capsule name.
KINDS = {LEGACY: DLManagedTensor, VERSIONED: DLManagedTensorVersioned}

_py = ctypes.pythonapi
_new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", _py)
)
is_valid_capsule = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _py)
)
capsule_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _py)
)
rename_capsule = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_char_p)(
    ("PyCapsule_SetName", _py)
)
# The capsule destructor runs on a dying object: take it as a raw pointer, never a py_object.
_is_valid_raw = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", _py)
)
_get_pointer_raw = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", _py)
)

#: Exported tensors not yet released by their consumer: key -> (managed struct, owner).
EXPORTED: dict[int, tuple[Any, object]] = {}
_export_keys = itertools.count(1)


def _release(managed: Any) -> None:
    EXPORTED.pop(managed.contents.manager_ctx or 0, None)


_DELETER = DLManagedTensorDeleter(_release)
_DELETER_VERSIONED = DLManagedTensorVersionedDeleter(_release)


def _destroy_capsule(capsule: int) -> None:
    # If nobody consumed the capsule, release the tensor ourselves.
    for name, kind in KINDS.items():
        if _is_valid_raw(capsule, name):
            address = _get_pointer_raw(capsule, name)
            _release(ctypes.pointer(kind.from_address(address)))


_capsule_destructor = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(_destroy_capsule)


def export_capsule(
    tensor: DLTensor,
    owner: object,
    device: Device,
    read_only: bool,
    *,
    max_version: Any = None,
    dl_device: Any = None,
    copy: Any = None,
) -> Any:
    """A capsule sharing ``tensor``'s memory, keeping ``owner`` alive until it is released.

    ``max_version``, ``dl_device`` and ``copy`` are the consumer's ``__dlpack__`` arguments.
    """
    if device.is_remote:
        raise TVMValueError(
            f"cannot export {device} through DLPack: the memory is on a "
            "remote machine; copy it here first with .copyto(pytvm.cpu())"
        )
    if copy is True:
        raise TVMValueError("__dlpack__(copy=True) is not supported; call .copyto() first")
    if dl_device is not None and tuple(dl_device) != (device.device_type, device.device_id):
        raise TVMValueError(
            f"__dlpack__(dl_device={dl_device}) differs from the array's device "
            f"{device}; cross-device export is not supported"
        )
    key = next(_export_keys)
    if max_version is not None and next(iter(max_version)) >= 1:
        managed: Any = DLManagedTensorVersioned()
        managed.version = DLPackVersion(*DLPACK_VERSION)
        managed.flags = DLPACK_FLAG_READ_ONLY if read_only else 0
        managed.deleter = _DELETER_VERSIONED
        name = VERSIONED
    else:
        if read_only:  # a legacy capsule cannot say "read-only" (numpy refuses too)
            raise TVMValueError(
                "cannot export a read-only array as a legacy DLPack capsule: the consumer "
                "could write to it; ask for DLPack >= 1.0 (max_version=(1, 0)) or copy it first"
            )
        managed = DLManagedTensor()
        managed.deleter = _DELETER
        name = LEGACY
    managed.dl_tensor = tensor
    managed.manager_ctx = key
    EXPORTED[key] = (managed, owner)
    return _new(ctypes.addressof(managed), name, ctypes.cast(_capsule_destructor, ctypes.c_void_p))
