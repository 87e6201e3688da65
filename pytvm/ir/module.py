"""The behaviour both IRs' modules share: functions by name plus module attributes, immutable.

:class:`IRModuleBase` is the base of :class:`pytvm.tir.IRModule` (kernels) and
:class:`pytvm.graph.IRModule` (graph functions). Each IR adds which functions it holds
(:meth:`IRModuleBase._check_function`), the name a function is filed under
(:meth:`IRModuleBase._name_of`), ``from_expr``, and a check of the whole module that the pass
infrastructure runs after every pass when ``PassContext(config={"tir.verify": True})``
(:meth:`IRModuleBase.verify`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Any, Generic, Self, TypeVar

from ..ffi.errors import TVMKeyError, TVMValueError

__all__ = ["IRModuleBase"]

F = TypeVar("F")


@dataclass(frozen=True, slots=True, eq=False)
class IRModuleBase(Generic[F]):
    """Functions by name and the module's attributes (TVM's ``IRModule``); every edit returns a
    copy.
    """

    functions: Mapping[str, F] = field(default_factory=lambda: MappingProxyType({}))
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "functions", MappingProxyType(dict(self.functions or {})))
        object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs or {})))
        for name, func in self.functions.items():
            self._check_function(name, func)

    def _check_function(self, name: str, func: Any) -> None:
        """Raise if ``func`` cannot be held under ``name`` (every object can, here)."""

    def _name_of(self, func: F) -> str:
        """The name ``func`` is filed under when none is given (here: ``"main"``)."""
        del func
        return "main"

    def verify(self, stage: str = "") -> None:
        """Raise if the module is malformed, naming ``stage`` (here: nothing to check)."""
        del stage

    def __getitem__(self, name: str) -> F:
        try:
            return self.functions[name]
        except KeyError:
            raise TVMKeyError(
                f"IRModule has no function {name!r}; it has {sorted(self.functions)}"
            ) from None

    def __contains__(self, name: object) -> bool:
        return name in self.functions

    def __iter__(self) -> Iterator[str]:
        return iter(self.functions)

    def __len__(self) -> int:
        return len(self.functions)

    def items(self) -> Iterator[tuple[str, F]]:
        """(name, function) pairs."""
        return iter(self.functions.items())

    def get_global_var(self, name: str) -> str:
        """The name a function is filed under (functions are keyed by name), checked present."""
        if name not in self.functions:
            raise TVMValueError(
                f"IRModule has no function {name!r}; it has {sorted(self.functions)}"
            )
        return name

    def with_function(self, func: F, name: str | None = None) -> Self:
        """A copy with ``func`` added or replaced under ``name`` (default: its own name)."""
        key = self._name_of(func) if name is None else name
        return replace(self, functions={**self.functions, key: func})

    def map_functions(self, transform: Callable[[F], F]) -> Self:
        """A copy with ``transform`` applied to every function (``self`` if none changed)."""
        changed = {name: transform(func) for name, func in self.functions.items()}
        if all(changed[name] is func for name, func in self.functions.items()):
            return self
        return replace(self, functions=changed)

    def with_attr(self, attr_key: str, attr_value: Any) -> Self:
        """A copy with the module attribute ``attr_key`` set to ``attr_value``."""
        return replace(self, attrs={**self.attrs, attr_key: attr_value})

    def without_attr(self, attr_key: str) -> Self:
        """A copy without the module attribute ``attr_key``."""
        return replace(self, attrs={k: v for k, v in self.attrs.items() if k != attr_key})

    def get_attr(self, attr_key: str) -> Any:
        """The module attribute ``attr_key``, or None."""
        return self.attrs.get(attr_key)
