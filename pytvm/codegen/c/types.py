"""C spellings of loop-IR types: scalar types, vector types (GCC/Clang vector extensions)."""

from __future__ import annotations

from ...ffi.dtype import DataType, DataTypeCode
from ...ffi.errors import TVMValueError

__all__ = ["c_scalar_type", "c_vector_type", "vector_typedef"]

_SCALAR = {
    (DataTypeCode.FLOAT, 16): "_Float16",
    (DataTypeCode.FLOAT, 32): "float",
    (DataTypeCode.FLOAT, 64): "double",
    (DataTypeCode.INT, 8): "int8_t",
    (DataTypeCode.INT, 16): "int16_t",
    (DataTypeCode.INT, 32): "int32_t",
    (DataTypeCode.INT, 64): "int64_t",
    (DataTypeCode.UINT, 8): "uint8_t",
    (DataTypeCode.UINT, 16): "uint16_t",
    (DataTypeCode.UINT, 32): "uint32_t",
    (DataTypeCode.UINT, 64): "uint64_t",
    (DataTypeCode.BOOL, 8): "int8_t",
    (DataTypeCode.HANDLE, 64): "void*",
}


def c_scalar_type(dtype: str) -> str:
    """The C type of one element of ``dtype`` (``"float32x8"`` → ``"float"``)."""
    t = DataType(dtype)
    name = _SCALAR.get((DataTypeCode(t.code), t.bits))
    if name is None:
        raise TVMValueError(
            f"the C code generator has no type for {t.with_lanes(1)}; supported: float16, float32, "
            "float64, (u)int8/16/32/64, bool"
        )
    return name


def c_vector_type(dtype: str) -> str:
    """The name of the vector typedef for ``dtype`` (``"float32x8"`` → ``"pv_float32x8"``)."""
    return "pv_" + dtype


def vector_typedef(dtype: str) -> str:
    """The typedef of the vector type of ``dtype`` (a GCC/Clang vector extension)."""
    t = DataType(dtype)
    if t.lanes & (t.lanes - 1):
        raise TVMValueError(f"vector type {dtype}: lanes must be a power of two")
    size = t.lanes * max(1, t.bits // 8)
    vector = f"{c_vector_type(dtype)} __attribute__((vector_size({size})))"
    return f"typedef {c_scalar_type(dtype)} {vector};"
