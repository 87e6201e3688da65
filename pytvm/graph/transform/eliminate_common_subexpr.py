"""EliminateCommonSubexpr: calls of one operator on the same arguments with the same
attributes are computed once; equal small constants are shared.
"""

from __future__ import annotations

from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..functor import rewrite_function
from ..module import IRModule

__all__ = ["EliminateCommonSubexpr", "eliminate_common_subexpr"]

_SHARED_CONSTANT_BYTES = 1 << 16  # larger constants are compared by identity only


def _key(node: Expr) -> Any:
    if isinstance(node, Call) and isinstance(node.op, str):
        return ("call", node.op, tuple(id(a) for a in node.args), node.attrs.items_)
    if isinstance(node, Tuple):
        return ("tuple", tuple(id(f) for f in node.fields))
    if isinstance(node, TupleGetItem):
        return ("get", id(node.tuple_value), node.index)
    if isinstance(node, Constant) and node.data.nbytes <= _SHARED_CONSTANT_BYTES:
        return ("const", str(node.data.dtype), node.data.shape, node.data.tobytes())
    return None


def _eliminate(func: Any) -> Any:
    seen: dict[Any, Expr] = {}

    def visit(node: Expr) -> Expr | None:
        key = _key(node)
        if key is None:
            return None
        first = seen.setdefault(key, node)
        return None if first is node else first

    return rewrite_function(func, visit)


def eliminate_common_subexpr(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Share repeated computations (arguments are compared after their own sharing)."""
    del ctx
    return map_functions(mod, _eliminate)


EliminateCommonSubexpr = Pass("EliminateCommonSubexpr", 2, eliminate_common_subexpr)
