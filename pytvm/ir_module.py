"""``pytvm.IRModule``: TVM's one ``tvm.IRModule`` name for both kinds of module pytvm keeps
apart, a module of graph functions (:class:`pytvm.graph.IRModule`, what Relay code builds) and
a module of kernels (:class:`pytvm.tir.IRModule`, what ``te``/TVMScript build).

``IRModule(functions)`` and ``IRModule.from_expr(func)`` pick the kind from the functions they
are given; ``isinstance(m, pytvm.IRModule)`` holds for both.

Examples
--------
>>> import pytvm as tvm
>>> from pytvm import relay
>>> x = relay.var("x", shape=(2,))
>>> mod = tvm.IRModule.from_expr(relay.Function([x], relay.exp(x)))
>>> type(mod).__module__, isinstance(mod, tvm.IRModule), list(mod)
('pytvm.graph.module', True, ['main'])
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .ffi.errors import TVMValueError
from .graph import Function as GraphFunction
from .graph import IRModule as GraphModule
from .ir.module import IRModuleBase
from .tir.function import IRModule as KernelModule
from .tir.function import PrimFunc

__all__ = ["IRModule"]


def _kind(functions: Mapping[str, Any]) -> type[GraphModule] | type[KernelModule]:
    kinds = {type(f) for f in functions.values()}
    if kinds <= {GraphFunction}:
        return GraphModule
    if kinds <= {PrimFunc}:
        return KernelModule
    names = ", ".join(sorted(k.__name__ for k in kinds))
    raise TVMValueError(
        f"IRModule: pytvm keeps graph functions and kernels (PrimFunc) in separate modules; "
        f"got {names}"
    )


class _ModuleKind(type):
    def __instancecheck__(cls, obj: object) -> bool:
        return isinstance(obj, IRModuleBase)


class IRModule(metaclass=_ModuleKind):
    """TVM's ``IRModule``: builds a graph module or a kernel module by what it holds."""

    def __new__(  # type: ignore[misc]
        cls, functions: Mapping[str, Any] | None = None, attrs: Mapping[str, Any] | None = None
    ) -> GraphModule | KernelModule:
        """A graph module or a kernel module holding ``functions`` (empty: a kernel module)."""
        functions = dict(functions or {})
        kind = _kind(functions) if functions else KernelModule
        return kind(functions, dict(attrs or {}))

    @staticmethod
    def from_expr(
        expr: Any, functions: Mapping[str, Any] | None = None
    ) -> GraphModule | KernelModule:
        """A module whose ``main`` (a graph function) or only kernel is ``expr``."""
        if isinstance(expr, GraphFunction):
            return GraphModule.from_expr(expr, functions)
        if isinstance(expr, PrimFunc):
            return KernelModule.from_expr(expr)
        raise TVMValueError(
            f"IRModule.from_expr expects a graph Function or a PrimFunc, got {type(expr).__name__}"
        )
