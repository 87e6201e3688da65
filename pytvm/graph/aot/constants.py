"""C initialisers of linked constants (TVM's ``link-params``): ``static const`` arrays whose
values read back bit for bit.

Floats are printed as C99 hexadecimal literals (``0x1.8p+1f``: exact for every finite value),
infinities and NaN through ``<math.h>``'s ``INFINITY`` and ``NAN``; integers in decimal, the
most negative value of a type as ``(min + 1) - 1`` (its literal would not fit). The arrays go to
``.rodata`` (flash on a microcontroller).
"""

from __future__ import annotations

import math

import numpy as np

from ...codegen.c.types import c_scalar_type
from ...ffi.errors import TVMValueError

__all__ = ["c_const_array", "c_literal"]

_FLOATS = ("float32", "float64")
_INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "bool")
_PER_LINE = 8


def _float(value: float, suffix: str) -> str:
    if math.isnan(value):
        return "NAN"
    if math.isinf(value):
        return "INFINITY" if value > 0 else "-INFINITY"
    mantissa, exponent = value.hex().split("p")
    return f"{mantissa.rstrip('0').rstrip('.')}p{exponent}{suffix}"


def _int(value: int, dtype: str) -> str:
    if dtype == "bool":
        return "1" if value else "0"
    bits = int(dtype.removeprefix("u").removeprefix("int"))
    suffix = ("ULL" if dtype.startswith("u") else "LL") if bits == 64 else ""  # noqa: PLR2004
    if dtype.startswith("int") and value == -(1 << (bits - 1)):
        return f"(-{(1 << (bits - 1)) - 1}{suffix} - 1)"
    return f"{value}{'U' if dtype.startswith('u') and not suffix else ''}{suffix}"


def c_literal(value: float | int, dtype: str) -> str:
    """``value`` as a C literal of ``dtype`` that reads back exactly."""
    if dtype in _FLOATS:
        return _float(float(value), "f" if dtype == "float32" else "")
    if dtype in _INTS:
        return _int(int(value), dtype)
    raise TVMValueError(
        f"a linked constant of dtype {dtype} has no exact C initialiser; supported: "
        f"{', '.join(_FLOATS + _INTS)}"
    )


def c_const_array(name: str, array: np.ndarray, alignment: int = 16) -> str:
    """``static const <T> name[n] __attribute__((aligned(alignment))) = {...};`` of ``array``
    (row-major), its values exact.
    """
    dtype = str(array.dtype)
    flat = np.ascontiguousarray(array).reshape(-1)
    if dtype in _FLOATS:
        suffix = "f" if dtype == "float32" else ""
        values = [_float(v, suffix) for v in flat.astype(np.float64).tolist()]
    elif dtype in _INTS:
        values = [
            _int(v, dtype)
            for v in flat.astype(np.int64 if dtype != "uint64" else np.uint64).tolist()
        ]
    else:
        c_literal(0, dtype)  # raises the error naming the dtype
        values = []
    if not values:  # C has no empty arrays
        values = ["0"]
    rows = ["  " + ", ".join(values[i : i + _PER_LINE]) for i in range(0, len(values), _PER_LINE)]
    ctype = c_scalar_type(dtype)
    return (
        f"static const {ctype} {name}[{len(values)}] __attribute__((aligned({alignment}))) = {{\n"
        + ",\n".join(rows)
        + "\n};"
    )
