"""Type indices shared by Python values, compiled C kernels and the RPC wire (tvm-ffi numbering)."""

from __future__ import annotations

from enum import IntEnum

__all__ = ["STATIC_TYPE_KEYS", "TypeIndex", "is_object_index"]


class TypeIndex(IntEnum):
    """The tvm-ffi type index of a value: POD kinds below 64, objects from 64 up."""

    NONE = 0
    INT = 1
    BOOL = 2
    FLOAT = 3
    OPAQUE_PTR = 4
    DATA_TYPE = 5
    DEVICE = 6
    DL_TENSOR_PTR = 7
    RAW_STR = 8
    BYTE_ARRAY_PTR = 9
    OBJECT_RVALUE_REF = 10
    SMALL_STR = 11
    SMALL_BYTES = 12
    UNCHANGED = 13
    STATIC_OBJECT_BEGIN = 64
    OBJECT = 64
    STR = 65
    BYTES = 66
    ERROR = 67
    FUNCTION = 68
    SHAPE = 69
    TENSOR = 70
    ARRAY = 71
    MAP = 72
    MODULE = 73
    OPAQUE_PY_OBJECT = 74
    LIST = 75
    DICT = 76
    VISIT_INTERRUPT = 77
    BIG_INT = 78
    DISCO_DREF = 114
    RPC_OBJECT_REF = 115
    DYN_OBJECT_BEGIN = 128


#: Type keys of the objects whose index is fixed by tvm-ffi (the rest are assigned from 128 up).
STATIC_TYPE_KEYS: dict[str, int] = {
    "ffi.Object": TypeIndex.OBJECT,
    "ffi.String": TypeIndex.STR,
    "ffi.Bytes": TypeIndex.BYTES,
    "ffi.Error": TypeIndex.ERROR,
    "ffi.Function": TypeIndex.FUNCTION,
    "ffi.Shape": TypeIndex.SHAPE,
    "ffi.Tensor": TypeIndex.TENSOR,
    "ffi.Array": TypeIndex.ARRAY,
    "ffi.Map": TypeIndex.MAP,
    "ffi.Module": TypeIndex.MODULE,
    "ffi.OpaquePyObject": TypeIndex.OPAQUE_PY_OBJECT,
    "ffi.List": TypeIndex.LIST,
    "ffi.Dict": TypeIndex.DICT,
    "ffi.BigInt": TypeIndex.BIG_INT,
    "runtime.DiscoDRef": TypeIndex.DISCO_DREF,
    "runtime.RPCObjectRef": TypeIndex.RPC_OBJECT_REF,
}


def is_object_index(index: int) -> bool:
    """Whether ``index`` names an object (a reference-counted value) rather than a POD value."""
    return index >= TypeIndex.STATIC_OBJECT_BEGIN
