"""Walking and rewriting the loop IR: a visitor and a mutator every pass builds on.

Both dispatch on the node's class name (``visit_Add``, ``visit_For``, ...) and fall back to a
generic walk over the node's dataclass fields, so a pass overrides only the nodes it cares about.
The mutator rebuilds a node only when a child changed, so an untouched subtree keeps its
identity (passes and the structural comparison rely on that).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from .expr import Buffer, IterVar, PrimExpr, Range, Var
from .stmt import Stmt

__all__ = ["IRMutator", "IRVisitor", "post_order_visit", "substitute"]

_IR_TYPES = (PrimExpr, Stmt, Buffer, Range, IterVar)


_SKIP = frozenset(
    {"dtype", "name", "lanes", "value_index", "message", "key", "op", "kind", "scope"}
)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(cls: type) -> tuple[str, ...]:
    """Names of the fields of ``cls`` that may hold IR children."""
    names = _FIELDS.get(cls)
    if names is None:
        names = tuple(f.name for f in dataclasses.fields(cls) if f.name not in _SKIP)
        _FIELDS[cls] = names
    return names


def _method(visitor: type, node_type: type) -> Any:
    """The ``visit_<Class>`` function of ``visitor`` for ``node_type`` (None: generic walk),
    looked up once per pair.
    """
    key = (visitor, node_type)
    found = _METHODS.get(key, _MISSING)
    if found is _MISSING:
        found = getattr(visitor, "visit_" + node_type.__name__, None)
        _METHODS[key] = found
    return found


_MISSING = object()
_METHODS: dict[tuple[type, type], Any] = {}


class IRVisitor:
    """Walk every node once per occurrence; override ``visit_<Class>`` to look at a kind."""

    def visit(self, node: Any) -> None:
        """Visit ``node`` and, by default, its children."""
        method = _method(type(self), type(node))
        if method is not None:
            method(self, node)
        else:
            self.generic_visit(node)

    def generic_visit(self, node: Any) -> None:
        """Visit the children of ``node``."""
        for name in _child_fields(type(node)):
            value = getattr(node, name)
            if isinstance(value, _IR_TYPES):
                self.visit(value)
            elif type(value) is tuple:
                for item in value:
                    self._visit_value(item)

    def _visit_value(self, value: Any) -> None:
        if isinstance(value, _IR_TYPES):
            self.visit(value)
        elif isinstance(value, tuple):
            for item in value:
                self._visit_value(item)

    def visit_Buffer(self, node: Buffer) -> None:
        """Buffers are leaves by default (their shapes are not walked)."""


class IRMutator:
    """Rewrite nodes bottom-up; override ``visit_<Class>`` and call ``generic_visit`` inside."""

    def visit(self, node: Any) -> Any:
        """The rewritten ``node``."""
        method = _method(type(self), type(node))
        if method is not None:
            return method(self, node)
        return self.generic_visit(node)

    def generic_visit(self, node: Any) -> Any:
        """``node`` with its children rewritten (the same object if none changed)."""
        changes: dict[str, Any] | None = None
        for name in _child_fields(type(node)):
            old = getattr(node, name)
            if isinstance(old, _IR_TYPES):
                new = self.visit(old)
            elif type(old) is tuple:
                new = self._visit_value(old)
            else:
                continue
            if new is not old:
                if changes is None:
                    changes = {}
                changes[name] = new
        if changes is None:
            return node
        return dataclasses.replace(node, **changes)

    def _visit_value(self, value: Any) -> Any:
        if isinstance(value, _IR_TYPES):
            return self.visit(value)
        if isinstance(value, tuple):
            items = [self._visit_value(v) for v in value]
            if all(a is b for a, b in zip(items, value, strict=True)):
                return value
            return tuple(items)
        return value

    def visit_Buffer(self, node: Buffer) -> Buffer:
        """Buffers are kept as they are by default."""
        return node

    def visit_Var(self, node: Var) -> PrimExpr:
        """Variables are kept by default."""
        return node


def post_order_visit(node: Any, fvisit: Callable[[Any], None]) -> None:
    """Call ``fvisit`` on every node under ``node``, children first (TVM's helper)."""

    class _PostOrder(IRVisitor):
        def visit(self, child: Any) -> None:
            super().visit(child)
            fvisit(child)

    _PostOrder().visit(node)


class _Substitute(IRMutator):
    def __init__(self, vmap: Mapping[Var, PrimExpr]) -> None:
        self.vmap = vmap

    def visit_Var(self, node: Var) -> PrimExpr:
        return self.vmap.get(node, node)

    def visit_IterVar(self, node: IterVar) -> IterVar:
        return node  # an axis declaration is not a use of its variable


def substitute(node: Any, vmap: Mapping[Var, PrimExpr]) -> Any:
    """``node`` with every use of a variable in ``vmap`` replaced by its value."""
    if not vmap:
        return node
    return _Substitute(vmap).visit(node)
