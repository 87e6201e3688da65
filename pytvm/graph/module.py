"""``IRModule``: graph functions by name (``"main"`` is the model)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType

from ..ffi.errors import TVMKeyError
from .expr import Function

__all__ = ["IRModule"]


@dataclass(frozen=True, slots=True, eq=False)
class IRModule:
    """Functions by name; TVM's ``IRModule`` of graph functions (``mod["main"]``)."""

    functions: Mapping[str, Function] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        object.__setattr__(self, "functions", MappingProxyType(dict(self.functions)))

    @staticmethod
    def from_expr(func: Function) -> IRModule:
        """A module whose ``main`` is ``func``."""
        return IRModule({"main": func})

    def __getitem__(self, name: str) -> Function:
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

    def with_function(self, name: str, func: Function) -> IRModule:
        """A copy with ``func`` as ``name``."""
        return IRModule({**self.functions, name: func})

    def __str__(self) -> str:
        from .printer import astext

        return astext(self)
