"""TVM's ``relay.analysis`` names over the graph IR."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..graph import Function, Var
from ..graph.functor import free_vars as _free_vars
from .expr_functor import ExprVisitor

__all__ = ["free_vars", "post_order_visit"]


class _PostOrder(ExprVisitor):
    def __init__(self, fvisit: Callable[[Any], None]) -> None:
        super().__init__()
        self.fvisit = fvisit

    def visit(self, expr: Any) -> Any:
        if id(expr) in self.memo_map:
            return None
        super().visit(expr)
        self.fvisit(expr)
        return None


def post_order_visit(expr: Any, fvisit: Callable[[Any], None]) -> None:
    """Call ``fvisit`` on every node reachable from ``expr``, each once, children first."""
    _PostOrder(fvisit).visit(expr)


def free_vars(expr: Any) -> list[Var]:
    """The variables ``expr`` reads that it does not bind (a function's are its body's minus
    its parameters), in the order they are first read.
    """
    if isinstance(expr, Function):
        bound = {id(p) for p in expr.params}
        return [v for v in _free_vars(expr.body) if id(v) not in bound]
    return _free_vars(expr)
