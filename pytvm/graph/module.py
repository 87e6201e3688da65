"""``IRModule``: graph functions by name (``"main"`` is the model) and module attributes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..ffi.errors import TVMValueError
from ..ir.module import IRModuleBase
from .expr import Function

__all__ = ["IRModule"]


@dataclass(frozen=True, slots=True, eq=False)
class IRModule(IRModuleBase[Function]):
    """Functions by name; TVM's ``IRModule`` of graph functions (``mod["main"]``).

    A function added without a name is filed under ``"main"``.
    """

    def _check_function(self, name: str, func: Any) -> None:
        if not isinstance(func, Function):
            raise TVMValueError(
                f"IRModule: function {name!r} is a {type(func).__name__}, expected a graph "
                "Function (kernels live in pytvm.tir.IRModule)"
            )

    @staticmethod
    def from_expr(expr: Function, functions: Mapping[str, Function] | None = None) -> IRModule:
        """A module whose ``main`` is ``expr``, with the ``functions`` (name -> function) beside
        it, as TVM's ``IRModule.from_expr``.
        """
        if not isinstance(expr, Function):
            raise TVMValueError(f"IRModule.from_expr expects a Function, got {type(expr).__name__}")
        return IRModule({**(functions or {}), "main": expr})

    def __str__(self) -> str:
        from .printer import astext

        return astext(self)

    def astext(self, show_meta_data: bool = True) -> str:
        """The module as text (TVM's ``IRModule.astext``); the text shows constants inline,
        so there is no metadata section for ``show_meta_data`` to add or leave out.
        """
        del show_meta_data
        return str(self)
