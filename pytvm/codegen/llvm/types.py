"""LLVM types of loop-IR types and of the packed ABI's records (``DLTensor``, ``TVMValue``)."""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]

from ...ffi.dtype import DataType, DataTypeCode
from ...ffi.errors import TVMValueError

__all__ = [
    "DLTENSOR",
    "I1",
    "I8",
    "I16",
    "I32",
    "I64",
    "PTR",
    "alloca",
    "const_int",
    "element_bytes",
    "is_signed",
    "memory_type",
    "value_type",
]

I1, I8, I16, I32, I64 = (ir.IntType(n) for n in (1, 8, 16, 32, 64))
PTR = ir.PointerType()

#: ``DLTensor``: data, device {type, id}, ndim, dtype {code, bits, lanes}, shape, strides,
#: byte_offset.
DLTENSOR = ir.LiteralStructType(
    [
        PTR,
        ir.LiteralStructType([I32, I32]),
        I32,
        ir.LiteralStructType([I8, I8, I16]),
        PTR,
        PTR,
        I64,
    ]
)

_SUPPORTED = "float16, float32, float64, (u)int8/16/32/64, bool"


_SCALARS: dict[tuple[int, int], ir.Type] = {
    (DataTypeCode.FLOAT, 16): ir.HalfType(),
    (DataTypeCode.FLOAT, 32): ir.FloatType(),
    (DataTypeCode.FLOAT, 64): ir.DoubleType(),
    **{(code, bits): ir.IntType(bits) for code in (0, 1) for bits in (8, 16, 32, 64)},
    (DataTypeCode.BOOL, 8): I1,
    (DataTypeCode.HANDLE, 64): PTR,
}


def _scalar(dtype: str) -> ir.Type:
    t = DataType(dtype)
    found = _SCALARS.get((t.code, t.bits))
    if found is not None:
        return found
    raise TVMValueError(
        f"the LLVM code generator has no type for {t.with_lanes(1)}; supported: {_SUPPORTED}"
    )


def value_type(dtype: str) -> ir.Type:
    """The type of a value of ``dtype`` in registers (bool is ``i1``; lanes make a vector)."""
    lanes = DataType(dtype).lanes
    scalar = _scalar(dtype)
    return ir.VectorType(scalar, lanes) if lanes > 1 else scalar


def memory_type(dtype: str) -> ir.Type:
    """The type of ``dtype`` in memory (bool is a byte, as DLPack stores it)."""
    lanes = DataType(dtype).lanes
    scalar = _scalar(dtype)
    if scalar == I1:
        scalar = I8
    return ir.VectorType(scalar, lanes) if lanes > 1 else scalar


def element_bytes(dtype: str) -> int:
    """Bytes of one element of ``dtype`` in memory (one lane)."""
    return max(1, DataType(dtype).bits // 8)


def is_signed(dtype: str) -> bool:
    """Whether integer ``dtype`` is signed (bool and unsigned types are not)."""
    return DataType(dtype).code == DataTypeCode.INT


def const_int(ty: ir.Type, value: int) -> ir.Constant:
    """An integer constant of ``ty``, the value wrapped to the type's width (two's complement)."""
    assert isinstance(ty, ir.IntType)
    bits = ty.width
    value &= (1 << bits) - 1
    if value >= 1 << (bits - 1) and bits > 1:
        value -= 1 << bits
    return ir.Constant(ty, value)


def alloca(builder: ir.IRBuilder, ty: ir.Type, align: int | None = None) -> ir.Value:
    """A stack slot of ``ty`` at ``builder``'s position, as an opaque pointer."""
    slot = builder.alloca(ty)
    slot.type = PTR  # llvmlite keeps a typed pointer; LLVM's pointers are opaque
    if align is not None:
        slot.align = align
    return slot
