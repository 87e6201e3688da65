"""ctypes mirrors of the C ABI structures: ``TVMValue``, ``TVMByteArray`` and DLPack's types."""

from __future__ import annotations

import ctypes

__all__ = [
    "DLPACK_FLAG_READ_ONLY",
    "DLDataType",
    "DLDevice",
    "DLManagedTensor",
    "DLManagedTensorDeleter",
    "DLManagedTensorVersioned",
    "DLManagedTensorVersionedDeleter",
    "DLPackVersion",
    "DLTensor",
    "TVMByteArray",
    "TVMPackedCFunc",
    "TVMPackedCFuncFinalizer",
    "TVMValue",
]


class DLDevice(ctypes.Structure):
    """``DLDevice``: device type (possibly RPC-masked) and id."""

    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    """``DLDataType``: code, bits, lanes."""

    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    """``DLTensor``: a view of memory on a device."""

    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    """``DLManagedTensor``: a ``DLTensor`` plus the deleter its consumer calls once."""


DLManagedTensorDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DLManagedTensorDeleter),
]


class DLPackVersion(ctypes.Structure):
    """``DLPackVersion``: major, minor."""

    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    """``DLManagedTensorVersioned`` (DLPack >= 1.0): version, flags, then the tensor."""


DLManagedTensorVersionedDeleter = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", DLManagedTensorVersionedDeleter),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]

#: ``DLManagedTensorVersioned.flags`` bits.
DLPACK_FLAG_READ_ONLY = 1
DLPACK_FLAG_IS_COPIED = 2


class TVMValue(ctypes.Union):
    """``TVMValue``: one packed value, interpreted by the type index beside it."""

    _fields_ = [
        ("v_int64", ctypes.c_int64),
        ("v_float64", ctypes.c_double),
        ("v_handle", ctypes.c_void_p),
        ("v_str", ctypes.c_char_p),
        ("v_type", DLDataType),
        ("v_device", DLDevice),
    ]


class TVMByteArray(ctypes.Structure):
    """``TVMByteArray``: pointer and size of a byte string."""

    _fields_ = [("data", ctypes.c_void_p), ("size", ctypes.c_size_t)]


#: ``int f(TVMValue* args, int* codes, int n, TVMValue* ret, int* ret_code, void* resource)``;
#: arrays travel as plain addresses so callers can pass buffers they already own.
TVMPackedCFunc = ctypes.CFUNCTYPE(
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_int,
    ctypes.c_void_p,
    ctypes.c_void_p,
    ctypes.c_void_p,
)
TVMPackedCFuncFinalizer = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
