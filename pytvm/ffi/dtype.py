"""``DataType``: DLPack's (code, bits, lanes) triple, parsed from and printed as TVM strings."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import IntEnum
from functools import lru_cache
from typing import Any

import numpy as np

from .errors import TVMTypeError, TVMValueError

__all__ = ["DataType", "DataTypeCode", "dtype"]


class DataTypeCode(IntEnum):
    """DLPack's ``DLDataTypeCode``."""

    INT = 0
    UINT = 1
    FLOAT = 2
    HANDLE = 3
    BFLOAT = 4
    COMPLEX = 5
    BOOL = 6
    FLOAT8_E3M4 = 7
    FLOAT8_E4M3 = 8
    FLOAT8_E4M3B11FNUZ = 9
    FLOAT8_E4M3FN = 10
    FLOAT8_E4M3FNUZ = 11
    FLOAT8_E5M2 = 12
    FLOAT8_E5M2FNUZ = 13
    FLOAT8_E8M0FNU = 14
    FLOAT6_E2M3FN = 15
    FLOAT6_E3M2FN = 16
    FLOAT4_E2M1FN = 17


# Codes whose name carries its bit width ("float8_e5m2"): name -> (code, bits).
_FIXED_WIDTH = {
    "float8_e3m4": (DataTypeCode.FLOAT8_E3M4, 8),
    "float8_e4m3": (DataTypeCode.FLOAT8_E4M3, 8),
    "float8_e4m3b11fnuz": (DataTypeCode.FLOAT8_E4M3B11FNUZ, 8),
    "float8_e4m3fn": (DataTypeCode.FLOAT8_E4M3FN, 8),
    "float8_e4m3fnuz": (DataTypeCode.FLOAT8_E4M3FNUZ, 8),
    "float8_e5m2": (DataTypeCode.FLOAT8_E5M2, 8),
    "float8_e5m2fnuz": (DataTypeCode.FLOAT8_E5M2FNUZ, 8),
    "float8_e8m0fnu": (DataTypeCode.FLOAT8_E8M0FNU, 8),
    "float6_e2m3fn": (DataTypeCode.FLOAT6_E2M3FN, 6),
    "float6_e3m2fn": (DataTypeCode.FLOAT6_E3M2FN, 6),
    "float4_e2m1fn": (DataTypeCode.FLOAT4_E2M1FN, 4),
}
_FIXED_NAME = {code: name for name, (code, _) in _FIXED_WIDTH.items()}
_PREFIX = {
    "int": DataTypeCode.INT,
    "uint": DataTypeCode.UINT,
    "float": DataTypeCode.FLOAT,
    "bfloat": DataTypeCode.BFLOAT,
    "complex": DataTypeCode.COMPLEX,
}
_PREFIX_NAME = {code: name for name, code in _PREFIX.items()}
_DEFAULT_BITS = {"int": 32, "uint": 32, "float": 32, "bfloat": 16, "complex": 64}
#: Exclusive upper bounds of the DLDataType fields: 8-bit code and bits, 16-bit lanes.
_CODE_LIMIT = 1 << 8
_BITS_LIMIT = 1 << 8
_LANES_LIMIT = 1 << 16
#: The width TVM stores ``bool`` in.
_BOOL_BITS = 8
_SYNTAX = re.compile(r"^([a-z]+?)(\d*)(?:x(\d+))?$")


@dataclass(frozen=True, slots=True, init=False, eq=False)
class DataType:
    """An element type: DLPack ``code``, ``bits`` per lane and ``lanes`` (vector width).

    Made from a TVM type string, as TVM's ``tvm.DataType("float32")``, or from the triple; it
    compares equal to its string, as TVM's (a ``str``) does.

    Examples
    --------
    >>> DataType("float32x4")
    DataType('float32x4')
    >>> str(DataType(2, 16)), DataType("int8").bits, DataType("float32") == "float32"
    ('float16', 8, True)
    """

    code: int
    bits: int
    lanes: int

    def __init__(self, code: int | str | DataType, bits: int | None = None, lanes: int = 1) -> None:
        if isinstance(code, (str, DataType)):
            if bits is not None or lanes != 1:
                raise TVMTypeError(
                    f"DataType({code!r}, ...) takes either a type string alone or "
                    "(code, bits, lanes)"
                )
            parsed = code if isinstance(code, DataType) else DataType.parse(code)
            code, bits, lanes = parsed.code, parsed.bits, parsed.lanes
        elif bits is None:
            raise TVMTypeError(f"DataType({code!r}) needs bits: DataType(code, bits, lanes=1)")
        if not (0 <= code < _CODE_LIMIT and 0 <= bits < _BITS_LIMIT and 0 <= lanes < _LANES_LIMIT):
            raise TVMValueError(
                f"DataType(code={code}, bits={bits}, lanes={lanes}) is out of "
                "range: code and bits must fit in 8 bits and lanes in 16 bits"
            )
        object.__setattr__(self, "code", code)
        object.__setattr__(self, "bits", bits)
        object.__setattr__(self, "lanes", lanes)

    @staticmethod
    def parse(text: str) -> DataType:
        """Parse a TVM type string such as ``"float32"``, ``"uint8"``, ``"float32x4"``."""
        if not isinstance(text, str):  # checked before the cache, which needs a hashable key
            raise TVMTypeError(f"DataType.parse expects a str, got {type(text).__name__}")
        return _parse(text)

    @staticmethod
    def from_dlpack_data_type(triple: tuple[int, int, int]) -> DataType:
        """The DataType of a DLPack ``(type_code, bits, lanes)`` triple (TVM's name)."""
        code, bits, lanes = triple
        return DataType(code, bits, lanes)

    @property
    def type_code(self) -> int:
        """The DLPack type code (TVM's name for :attr:`code`)."""
        return self.code

    @property
    def itemsize(self) -> int:
        """Bytes one element (all lanes) occupies in memory."""
        return (self.bits * self.lanes + 7) // 8

    def with_lanes(self, lanes: int) -> DataType:
        """The same type with ``lanes`` lanes (``float32`` -> ``float32x4``)."""
        return DataType(self.code, self.bits, lanes)

    def __eq__(self, other: object) -> bool:
        if isinstance(other, DataType):
            return (self.code, self.bits, self.lanes) == (other.code, other.bits, other.lanes)
        if isinstance(other, str):
            return _name(self.code, self.bits, self.lanes) == other
        return NotImplemented

    def __hash__(self) -> int:
        return hash(_name(self.code, self.bits, self.lanes))  # equal to its string's hash

    def __str__(self) -> str:
        return _name(self.code, self.bits, self.lanes)

    def __repr__(self) -> str:
        return f"DataType({str(self)!r})"

    def numpy_dtype(self) -> np.dtype[Any]:
        """The numpy dtype of one lane; ``TVMTypeError`` if numpy has none."""
        return _to_numpy(self)

    @staticmethod
    def from_numpy(dt: Any) -> DataType:
        """The DataType of a numpy dtype (or anything ``np.dtype`` accepts)."""
        return _from_numpy(np.dtype(dt))


def dtype(value: str | DataType | np.dtype[Any] | type) -> DataType:
    """Coerce a string, numpy dtype or ``DataType`` to a ``DataType``."""
    if isinstance(value, DataType):
        return value
    if isinstance(value, str):
        return _parse(value)
    try:
        return _from_numpy(np.dtype(value))
    except TypeError as err:
        raise TVMTypeError(f"cannot make a DataType from {value!r}: {err}") from None


@lru_cache(maxsize=512)
def _parse(text: str) -> DataType:
    if not isinstance(text, str):
        raise TVMTypeError(f"DataType.parse expects a str, got {type(text).__name__}")
    if text == "bool":
        return DataType(DataTypeCode.BOOL, _BOOL_BITS, 1)
    if text == "handle":
        return DataType(DataTypeCode.HANDLE, 64, 1)
    # Names with a fixed width ("bool", "float8_e4m3fn") take only a lanes suffix ("boolx4").
    base, sep, lanes_text = text.partition("x")
    if base == "bool" or base in _FIXED_WIDTH:
        valid_lanes = (
            lanes_text.isascii() and lanes_text.isdigit() and 0 < int(lanes_text) < _LANES_LIMIT
        )
        if sep and not valid_lanes:
            raise _bad(text)
        code, bits = (DataTypeCode.BOOL, _BOOL_BITS) if base == "bool" else _FIXED_WIDTH[base]
        return DataType(code, bits, int(lanes_text) if sep else 1)
    match = _SYNTAX.match(text)
    if not match or match.group(1) not in _PREFIX:
        raise _bad(text)
    prefix, bits_text, lanes_group = match.groups()
    bits = int(bits_text) if bits_text else _DEFAULT_BITS[prefix]
    lanes = int(lanes_group) if lanes_group else 1
    if bits == 0 or lanes == 0 or bits >= _BITS_LIMIT or lanes >= _LANES_LIMIT:
        raise _bad(text)
    return DataType(_PREFIX[prefix], bits, lanes)


def _bad(text: str) -> TVMValueError:
    return TVMValueError(
        f"unknown data type {text!r}: expected e.g. 'float32', 'int8', 'uint8', 'bool', "
        "'float16', 'bfloat16', 'float32x4' or 'handle'"
    )


@lru_cache(maxsize=512)
def _name(code: int, bits: int, lanes: int) -> str:
    if code == DataTypeCode.BOOL and bits == _BOOL_BITS:
        base = "bool"
    elif code == DataTypeCode.HANDLE:
        base = "handle"
    elif code in _FIXED_NAME:
        base = _FIXED_NAME[DataTypeCode(code)]
    elif code in _PREFIX_NAME:
        base = f"{_PREFIX_NAME[DataTypeCode(code)]}{bits}"
    else:
        base = f"custom[{code}]{bits}"
    return base if lanes == 1 else f"{base}x{lanes}"


_NUMPY_KIND = {
    "i": DataTypeCode.INT,
    "u": DataTypeCode.UINT,
    "f": DataTypeCode.FLOAT,
    "c": DataTypeCode.COMPLEX,
}


@lru_cache(maxsize=128)
def _from_numpy(dt: np.dtype[Any]) -> DataType:
    if dt == np.bool_:
        return DataType(DataTypeCode.BOOL, _BOOL_BITS, 1)
    if dt.kind in _NUMPY_KIND:
        return DataType(_NUMPY_KIND[dt.kind], dt.itemsize * 8, 1)
    if dt.name in ("bfloat16",) or dt.name in _FIXED_WIDTH:
        return _parse(dt.name)
    raise TVMTypeError(
        f"numpy dtype {dt} has no DataType (expected bool, int, uint, float or complex)"
    )


@lru_cache(maxsize=128)
def _to_numpy(t: DataType) -> np.dtype[Any]:
    if t.code == DataTypeCode.BOOL:
        return np.dtype(np.bool_)
    if t.code in (DataTypeCode.INT, DataTypeCode.UINT, DataTypeCode.FLOAT, DataTypeCode.COMPLEX):
        kind = {0: "i", 1: "u", 2: "f", 5: "c"}[t.code]
        try:
            return np.dtype(f"{kind}{t.bits // 8}") if t.bits % 8 == 0 else _no_numpy(t)
        except TypeError:
            return _no_numpy(t)
    if t.code == DataTypeCode.BFLOAT or t.code in _FIXED_NAME:
        try:
            import ml_dtypes  # optional: numpy has no bfloat16/float8 of its own
        except ImportError:
            return _no_numpy(t)
        name = "bfloat16" if t.code == DataTypeCode.BFLOAT else _FIXED_NAME[DataTypeCode(t.code)]
        return np.dtype(getattr(ml_dtypes, name, None) or _no_numpy(t))
    return _no_numpy(t)


def _no_numpy(t: DataType) -> np.dtype[Any]:
    raise TVMTypeError(f"data type {t} has no numpy equivalent")
