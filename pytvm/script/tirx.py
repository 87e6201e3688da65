"""TVMScript's ``T`` namespace (``from tvm.script import tirx as T``): ``@T.prim_func`` and the
names its subset uses.

``@T.prim_func`` parses the decorated function's source into a :class:`pytvm.tir.PrimFunc`
(see :mod:`pytvm.script.parser` for the subset). Dtypes (``T.int32``, ``T.float32`` ...) are
annotations of scalar parameters and casts in the body (``T.float32(x)``); ``T.Buffer(shape,
dtype)`` annotates a buffer parameter; ``T.serial`` and ``T.grid`` are loops.

Examples
--------
>>> from pytvm.script import tirx as T
>>> @T.prim_func
... def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
...     for i in range(8):
...         B[i] = A[i] + T.float32(1)
>>> add_one.name, [p.name for p in add_one.params]
('add_one', ['A', 'B'])
"""

from __future__ import annotations

import builtins
from collections.abc import Callable
from typing import Any, overload

from ..tir.function import PrimFunc
from .parser import BufferAnnotation, DType, grid, parse_prim_func, serial

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

#: ``T.Buffer(shape, dtype)``, the annotation of a buffer parameter.
Buffer = BufferAnnotation
bool = DType("bool")
int8 = DType("int8")
int16 = DType("int16")
int32 = DType("int32")
int64 = DType("int64")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
uint64 = DType("uint64")
float16 = DType("float16")
float32 = DType("float32")
float64 = DType("float64")


@overload
def prim_func(func: Callable[..., Any], *, private: builtins.bool = ...) -> PrimFunc: ...
@overload
def prim_func(
    func: None = None,
    *,
    private: builtins.bool = ...,
    check_well_formed: builtins.bool = ...,
    s_tir: builtins.bool = ...,
    persistent: builtins.bool = ...,
) -> Callable[[Callable[..., Any]], PrimFunc]: ...
def prim_func(
    func: Callable[..., Any] | None = None,
    *,
    private: builtins.bool = False,
    check_well_formed: builtins.bool = True,
    s_tir: builtins.bool = False,
    persistent: builtins.bool = False,
) -> PrimFunc | Callable[[Callable[..., Any]], PrimFunc]:
    """Parse ``func`` into a ``PrimFunc`` named after it (no ``global_symbol`` when
    ``private``); usable as ``@T.prim_func`` and ``@T.prim_func(private=True)``.

    ``check_well_formed``, ``s_tir`` and ``persistent`` are TVM's options, accepted and without
    effect: the subset has no blocks to check or schedule.
    """
    del check_well_formed, s_tir, persistent

    def decorate(f: Callable[..., Any]) -> PrimFunc:
        return parse_prim_func(f, private=private)

    return decorate(func) if func is not None else decorate
