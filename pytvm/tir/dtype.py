"""Type strings of the loop IR: their kind, lanes and element type, and their one spelling."""

from __future__ import annotations

from ..ffi.dtype import DataType, DataTypeCode
from ..ffi.errors import TVMTypeError, TVMValueError

__all__ = ["canonical", "is_float", "is_int", "lanes_of", "scalar_of", "with_lanes"]


def _dtype(text: str) -> DataType:
    return DataType.parse(text)


def is_float(dtype: str) -> bool:
    """Whether ``dtype`` is a floating-point type (any width, any lanes)."""
    return _dtype(dtype).code in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT)


def is_int(dtype: str) -> bool:
    """Whether ``dtype`` is a signed or unsigned integer type."""
    return _dtype(dtype).code in (DataTypeCode.INT, DataTypeCode.UINT)


def lanes_of(dtype: str) -> int:
    """Vector lanes of ``dtype`` (1 for a scalar)."""
    return _dtype(dtype).lanes


def scalar_of(dtype: str) -> str:
    """The element type of ``dtype`` (``"float32x8"`` → ``"float32"``)."""
    return str(_dtype(dtype).with_lanes(1))


def with_lanes(dtype: str, lanes: int) -> str:
    """``dtype`` with ``lanes`` lanes."""
    return str(_dtype(dtype).with_lanes(lanes))


def canonical(dtype: str) -> str:
    """``dtype`` spelled as TVM prints it; a bad type raises ``TVMValueError``."""
    try:
        return str(_dtype(dtype))
    except (TVMValueError, TVMTypeError) as err:
        raise TVMValueError(f"bad data type in the loop IR: {err}") from None
