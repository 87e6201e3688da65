"""TVMScript's ``I`` namespace (``from tvm.script import ir as I``): ``@I.ir_module``.

Examples
--------
>>> from pytvm.script import ir as I
>>> from pytvm.script import tirx as T
>>> @I.ir_module
... class Module:
...     @T.prim_func
...     def main(A: T.Buffer((4,), "int32")):
...         for i in T.serial(4):
...             A[i] = i * 2
>>> list(Module)
['main']
"""

from __future__ import annotations

from collections.abc import Callable
from typing import overload

from ..ffi.errors import TVMTypeError
from ..tir.function import IRModule, PrimFunc

__all__ = ["ir_module"]


@overload
def ir_module(mod: type, *, check_well_formed: bool = ..., s_tir: bool = ...) -> IRModule: ...
@overload
def ir_module(
    mod: None = None, *, check_well_formed: bool = ..., s_tir: bool = ...
) -> Callable[[type], IRModule]: ...
def ir_module(
    mod: type | None = None, *, check_well_formed: bool = True, s_tir: bool = False
) -> IRModule | Callable[[type], IRModule]:
    """The ``IRModule`` of the ``@T.prim_func`` methods of the class ``mod``, each under its
    attribute name (its ``global_symbol``, unless it was declared private).

    ``check_well_formed`` and ``s_tir`` are TVM's options, accepted and without effect.
    """
    del check_well_formed, s_tir

    def decorate(cls: type) -> IRModule:
        if not isinstance(cls, type):
            raise TVMTypeError(f"@I.ir_module decorates a class, got {type(cls).__name__}")
        functions: dict[str, PrimFunc] = {}
        for name, value in vars(cls).items():
            if isinstance(value, PrimFunc):
                private = "global_symbol" not in value.attrs
                functions[name] = value if private else value.with_attr("global_symbol", name)
        return IRModule(functions)

    return decorate(mod) if mod is not None else decorate
