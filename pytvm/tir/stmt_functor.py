"""TVM's ``tir.stmt_functor``: walk and rewrite loop IR with plain callbacks.

``post_order_visit`` and ``pre_order_visit`` call a function on every node; ``ir_transform``
rewrites nodes with a pre-order and a post-order callback; ``substitute`` replaces variables.

Examples
--------
>>> from pytvm import tir
>>> from pytvm.tir import stmt_functor
>>> x, y = tir.Var("x"), tir.Var("y")
>>> seen = []
>>> stmt_functor.post_order_visit(x * 2 + y, lambda n: seen.append(type(n).__name__))
>>> seen
['Var', 'IntImm', 'Mul', 'Var', 'Add']
>>> print(stmt_functor.substitute(x + y, {y: x}))
(x + x)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .expr import PrimExpr, Var, convert
from .functor import IRMutator, IRVisitor, post_order_visit
from .functor import substitute as _substitute_map
from .stmt import Stmt

__all__ = ["ir_transform", "post_order_visit", "pre_order_visit", "substitute"]


def _type_key(node: Any) -> str:
    """TVM's type key of a node (``tir.For``)."""
    return f"tir.{type(node).__name__}"


class _PreOrder(IRVisitor):
    def __init__(self, fvisit: Callable[[Any], Any]) -> None:
        self.fvisit = fvisit

    def visit(self, node: Any) -> None:
        if self.fvisit(node) is False:
            return
        super().visit(node)


def pre_order_visit(node: Any, fvisit: Callable[[Any], Any]) -> None:
    """Call ``fvisit`` on every node, parents first; a ``False`` result skips the children."""
    _PreOrder(fvisit).visit(node)


class _Transform(IRMutator):
    def __init__(
        self,
        preorder: Callable[[Any], Any] | None,
        postorder: Callable[[Any], Any] | None,
        only_enable: frozenset[str] | None,
    ) -> None:
        self.preorder = preorder
        self.postorder = postorder
        self.only_enable = only_enable

    def _enabled(self, node: Any) -> bool:
        if not isinstance(node, (PrimExpr, Stmt)):
            return False
        return self.only_enable is None or _type_key(node) in self.only_enable

    def visit(self, node: Any) -> Any:
        enabled = self._enabled(node)
        if enabled and self.preorder is not None:
            replaced = self.preorder(node)
            if replaced is not None:
                return replaced
        new = super().visit(node)  # buffers and variables are kept, other nodes rebuilt
        if enabled and self.postorder is not None:
            replaced = self.postorder(new)
            if replaced is not None:
                return replaced
        return new


def ir_transform(
    stmt: Any,
    preorder: Callable[[Any], Any] | None,
    postorder: Callable[[Any], Any] | None,
    only_enable: Sequence[str] | None = None,
) -> Any:
    """Rewrite ``stmt`` with callbacks (TVM's ``tir.stmt_functor.ir_transform``).

    For each node of a type in ``only_enable`` (type keys such as ``"tir.For"``; all nodes when
    None): ``preorder(node)``, if it returns a node, replaces the node without visiting its
    children; otherwise the children are rewritten and ``postorder(new_node)``, if it returns a
    node, replaces it.
    """
    enable = None if only_enable is None else frozenset(only_enable)
    return _Transform(preorder, postorder, enable).visit(stmt)


def substitute(node: Any, vmap: Mapping[Var, Any] | Callable[[Var], PrimExpr | None]) -> Any:
    """``node`` with each variable in ``vmap`` replaced (``vmap`` may be a function of the var
    returning its replacement or None to keep it).
    """
    if callable(vmap) and not isinstance(vmap, Mapping):
        fmap = vmap
        found: dict[Var, PrimExpr] = {}

        class _Collect(IRVisitor):
            def visit_Var(self, var: Var) -> None:
                if var not in found:
                    value = fmap(var)
                    if value is not None:
                        found[var] = value

        _Collect().visit(node)
        return _substitute_map(node, found)
    return _substitute_map(node, {k: convert(v) for k, v in vmap.items()})
