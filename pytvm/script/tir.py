"""TVM 0.18's spelling of TVMScript's ``T`` namespace (``from tvm.script import tir as T``):
the names of :mod:`pytvm.script.tirx`.

Examples
--------
>>> from pytvm.script import tir as T
>>> T.int32.name
'int32'
"""

from __future__ import annotations

from .tirx import (
    Buffer,
    bool,
    float16,
    float32,
    float64,
    grid,
    int8,
    int16,
    int32,
    int64,
    prim_func,
    serial,
    uint8,
    uint16,
    uint32,
    uint64,
)

__all__ = [
    "Buffer",
    "bool",
    "float16",
    "float32",
    "float64",
    "grid",
    "int8",
    "int16",
    "int32",
    "int64",
    "prim_func",
    "serial",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
]
