"""Structural equality and hashing of IR: same shape, same constants, variables up to renaming.

Two variables are equal when they are bound at the same place (a parameter, a loop, a let, an
allocation) or, when free, when they are the same object; ``map_free_vars=True`` also pairs free
variables in order of appearance, as TVM's ``structural_equal`` does.
"""

from __future__ import annotations

import dataclasses
from enum import Enum
from types import MappingProxyType
from typing import Any

from .expr import Buffer, Var

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]

_IGNORED = frozenset({"name"})


class _Equal:
    def __init__(self, map_free_vars: bool) -> None:
        self.map_free_vars = map_free_vars
        self.vars: dict[int, int] = {}
        self.buffers: dict[int, int] = {}
        self.keep: list[Any] = []
        self.path: list[str] = []

    def var(self, a: Var, b: Var) -> bool:
        if a.dtype != b.dtype:
            return False
        mapped = self.vars.get(id(a))
        if mapped is not None:
            return mapped == id(b)
        if a is b:
            return True
        if not self.map_free_vars:
            return False
        self.vars[id(a)] = id(b)
        self.keep += [a, b]
        return True

    def bind(self, a: Var, b: Var) -> None:
        self.vars[id(a)] = id(b)
        self.keep += [a, b]

    def buffer(self, a: Buffer, b: Buffer) -> bool:
        mapped = self.buffers.get(id(a))
        if mapped is not None:
            return mapped == id(b)
        self.buffers[id(a)] = id(b)
        self.keep += [a, b]
        return (
            a.dtype == b.dtype
            and a.scope == b.scope
            and self.var(a.data, b.data)
            and self.value(a.shape, b.shape)
            and self.value(a.strides, b.strides)
        )

    def value(self, a: Any, b: Any) -> bool:  # noqa: PLR0911 - one case per kind of value
        if isinstance(a, Var) or isinstance(b, Var):
            return isinstance(a, Var) and isinstance(b, Var) and self.var(a, b)
        if isinstance(a, Buffer) or isinstance(b, Buffer):
            return isinstance(a, Buffer) and isinstance(b, Buffer) and self.buffer(a, b)
        if isinstance(a, tuple) and isinstance(b, tuple):
            return len(a) == len(b) and all(self.value(x, y) for x, y in zip(a, b, strict=True))
        if isinstance(a, (dict, MappingProxyType)) and isinstance(b, (dict, MappingProxyType)):
            if len(a) != len(b):
                return False
            if all(isinstance(k, str) for k in (*a, *b)):  # attributes: by name
                return a.keys() == b.keys() and all(self.value(a[k], b[k]) for k in a)
            # keyed by IR nodes (a buffer_map by parameter): entry by entry, in order
            pairs = zip(a.items(), b.items(), strict=True)
            return all(self.value(ka, kb) and self.value(va, vb) for (ka, va), (kb, vb) in pairs)
        if dataclasses.is_dataclass(a) and not isinstance(a, type):
            if type(a) is not type(b):
                return False
            return self.node(a, b)
        if isinstance(a, Enum) or isinstance(a, (int, float, str, bool)) or a is None:
            return type(a) is type(b) and a == b
        return a is b

    def node(self, a: Any, b: Any) -> bool:
        fields = [f.name for f in dataclasses.fields(a) if f.name not in _IGNORED]
        # Binding sites first, so uses inside the body see the pairing.
        for binder in ("loop_var", "var", "params"):
            if binder in fields:
                x, y = getattr(a, binder), getattr(b, binder)
                pairs = zip(x, y, strict=False) if isinstance(x, tuple) else [(x, y)]
                if isinstance(x, tuple) and len(x) != len(y):
                    return False
                for vx, vy in pairs:
                    if vx.dtype != vy.dtype:
                        return False
                    self.bind(vx, vy)
        if hasattr(a, "buffer") and "body" in fields:  # Allocate binds its buffer
            self.bind(a.buffer.data, b.buffer.data)
        return all(self.value(getattr(a, f), getattr(b, f)) for f in fields)


def structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> bool:
    """Whether two IR nodes are equal up to the renaming of bound variables."""
    return _Equal(map_free_vars).value(lhs, rhs)


def assert_structural_equal(lhs: Any, rhs: Any, map_free_vars: bool = False) -> None:
    """Raise ``ValueError`` with both texts when the nodes differ structurally."""
    if not structural_equal(lhs, rhs, map_free_vars):
        raise ValueError(f"IR differs structurally:\n--- lhs\n{lhs}\n--- rhs\n{rhs}")


def structural_hash(node: Any) -> int:
    """A hash equal for structurally equal nodes (variables hash by type, not identity)."""
    return hash(_shape(node))


def _shape(value: Any) -> Any:  # noqa: PLR0911 - one case per kind of value
    if isinstance(value, Var):
        return ("var", value.dtype)
    if isinstance(value, Buffer):
        return ("buffer", value.dtype, value.scope, _shape(value.shape))
    if isinstance(value, tuple):
        return tuple(_shape(v) for v in value)
    if isinstance(value, (dict, MappingProxyType)):
        return tuple(sorted((str(k), _shape(v)) for k, v in value.items()))
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        fields = dataclasses.fields(value)
        return (
            type(value).__name__,
            *(_shape(getattr(value, f.name)) for f in fields if f.name != "name"),
        )
    if isinstance(value, (int, float, str, bool, Enum)) or value is None:
        return value
    return type(value).__name__
