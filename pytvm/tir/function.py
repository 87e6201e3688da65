"""``PrimFunc`` (one lowered kernel) and ``IRModule`` (kernels by name)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any

from ..ffi.errors import TVMValueError
from ..ir.module import IRModuleBase
from .expr import Buffer, Var
from .stmt import Stmt

__all__ = ["IRModule", "PrimFunc"]


@dataclass(frozen=True, slots=True, eq=False)
class PrimFunc:
    """A kernel: parameters (handles bound to buffers in ``buffer_map``, or scalars) and a body.

    ``attrs`` holds ``global_symbol`` (the exported name) and ``tir.noalias`` as in TVM.
    """

    params: tuple[Var, ...]
    body: Stmt
    buffer_map: Mapping[Var, Buffer] = field(default_factory=lambda: MappingProxyType({}))
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))
        object.__setattr__(self, "buffer_map", MappingProxyType(dict(self.buffer_map)))
        object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))
        for var in self.buffer_map:
            if not any(var is p for p in self.params):
                raise TVMValueError(f"buffer_map key {var.name} is not a parameter")

    @property
    def name(self) -> str:
        """The exported name (``global_symbol``), or ``"main"``."""
        return str(self.attrs.get("global_symbol", "main"))

    def with_attr(self, key: str, value: Any) -> PrimFunc:
        """A copy with ``attrs[key] = value``."""
        return replace(self, attrs={**self.attrs, key: value})

    def with_body(self, body: Stmt) -> PrimFunc:
        """A copy with another body."""
        return replace(self, body=body)

    def script(self) -> str:
        """The function as readable text (also ``str(func)``)."""
        return str(self)

    def __str__(self) -> str:
        return _TEXT[0](self)

    def astext(self, show_meta_data: bool = False) -> str:
        """TVM's older spelling of :meth:`script`."""
        del show_meta_data
        return str(self)


#: How functions print; installed by the printer module when ``pytvm.tir`` loads.
_TEXT: list[Callable[[Any], str]] = [lambda func: f"PrimFunc({func.name})"]


def set_text_hook(render: Callable[[Any], str]) -> None:
    """Install the function that renders a PrimFunc as text."""
    _TEXT[0] = render


#: The check of a whole module run after a pass under ``tir.verify``; installed by
#: :mod:`pytvm.tir.verify` when ``pytvm.tir`` loads.
_VERIFY: list[Callable[[Any, str], None]] = []


def set_verify_hook(check: Callable[[Any, str], None]) -> None:
    """Install the function that checks a module after a pass (``check(mod, stage)``)."""
    _VERIFY[:] = [check]


@dataclass(frozen=True, slots=True, eq=False)
class IRModule(IRModuleBase[PrimFunc]):
    """Kernels by name (TVM's ``IRModule`` of PrimFuncs) and the module's attributes; edit with
    :meth:`with_function` and :meth:`with_attr`.

    ``attrs`` holds TVM's module attributes; the build reads ``system_lib_prefix`` (present:
    build a system library).

    Examples
    --------
    >>> from pytvm import te
    >>> a = te.placeholder((4,), name="A")
    >>> b = te.compute(a.shape, lambda i: a[i] + 1.0, name="B")
    >>> mod = IRModule.from_expr(te.create_prim_func([a, b]).with_attr("global_symbol", "add"))
    >>> list(mod), mod.with_attr("system_lib_prefix", "").attrs["system_lib_prefix"]
    (['add'], '')
    """

    def _check_function(self, name: str, func: Any) -> None:
        if not isinstance(func, PrimFunc):
            raise TVMValueError(
                f"IRModule: function {name!r} is a {type(func).__name__}, expected a "
                "PrimFunc (graph functions live in pytvm.graph.IRModule)"
            )

    def _name_of(self, func: PrimFunc) -> str:
        return func.name

    def verify(self, stage: str = "") -> None:
        """Check the module with :func:`pytvm.tir.verify.verify`, naming ``stage``."""
        for check in _VERIFY:
            check(self, stage)

    @staticmethod
    def from_expr(expr: PrimFunc, functions: Mapping[str, PrimFunc] | None = None) -> IRModule:
        """A module holding ``expr`` under its name (its ``global_symbol``, else ``"main"``) and
        the ``functions`` (name -> function) beside it, as TVM's ``IRModule.from_expr``.
        """
        if not isinstance(expr, PrimFunc):
            raise TVMValueError(f"IRModule.from_expr expects a PrimFunc, got {type(expr).__name__}")
        return IRModule({**(functions or {}), expr.name: expr})

    def script(self) -> str:
        """Every function as text."""
        return "\n\n".join(str(f) for f in self.functions.values())

    def __str__(self) -> str:
        return self.script()

    def astext(self, show_meta_data: bool = False) -> str:
        """TVM's older spelling of :meth:`script`."""
        del show_meta_data
        return self.script()
