"""DLPack in and out: share an ``NDArray``'s memory with numpy, PyTorch, TVM, ... without copies.

Export (``NDArray.__dlpack__``) hands the consumer a capsule holding a managed tensor that keeps
the array alive until the consumer calls its deleter (the capsules themselves are built in
``_dlpack_capsule``). Import takes a producer's capsule, renames it ``"used_..."`` (so nobody
else consumes it) and calls the producer's deleter when the resulting ``NDArray`` dies.
"""

from __future__ import annotations

import ctypes
from typing import Any

from ..ffi import Device
from ..ffi.c_abi import DLPACK_FLAG_READ_ONLY
from ..ffi.dtype import DataType
from ..ffi.errors import TVMTypeError, TVMValueError
from ._dlpack_capsule import (
    DLPACK_VERSION,
    KINDS,
    USED,
    VERSIONED,
    capsule_pointer,
    is_valid_capsule,
    rename_capsule,
)
from .ndarray import NDArray

__all__ = ["DLPACK_VERSION", "from_dlpack", "to_dlpack_capsule"]


def to_dlpack_capsule(
    array: NDArray,
    stream: Any = None,
    *,
    max_version: Any = None,
    dl_device: Any = None,
    copy: Any = None,
) -> Any:
    """A capsule sharing ``array``'s memory (the DLPack ``__dlpack__`` protocol)."""
    return array.__dlpack__(stream, max_version=max_version, dl_device=dl_device, copy=copy)


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
    name = next((n for n in KINDS if is_valid_capsule(capsule, n)), None)
    if name is None:
        raise TVMTypeError(
            f"from_dlpack expects an object with __dlpack__ or an unused DLPack "
            f"capsule, got {type(source).__name__}"
        )
    address = capsule_pointer(capsule, name)
    kind = KINDS[name]
    managed = kind.from_address(address)
    if name == VERSIONED and managed.version.major > DLPACK_VERSION[0]:
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
    rename_capsule(capsule, USED[name])
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
    if name == VERSIONED and managed.flags & DLPACK_FLAG_READ_ONLY:
        array._read_only = True
    return array
