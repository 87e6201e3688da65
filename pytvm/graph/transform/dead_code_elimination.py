"""DeadCodeElimination: operations whose results nothing reads are dropped.

The graph is dataflow: a node no output depends on is already unreachable. What remains to
remove are no-op computations: ``copy`` of a value, ``reshape`` to the same shape, a tuple
field read straight back (``(a, b).0``), and parameters of primitive functions never read.
"""

from __future__ import annotations

from ...ir.transform import Pass, PassContext, map_functions
from ..expr import Call, Expr, Function, Tuple, TupleGetItem
from ..functor import rewrite_function
from ..module import IRModule

__all__ = ["DeadCodeElimination", "dead_code_elimination"]

_SAME_SHAPE_NOOPS = frozenset({"copy", "reshape", "squeeze", "expand_dims", "broadcast_to"})


def _drop(node: Expr) -> Expr | None:
    if isinstance(node, TupleGetItem) and isinstance(node.tuple_value, Tuple):
        return node.tuple_value.fields[node.index]
    if (
        isinstance(node, Call)
        and isinstance(node.op, str)
        and node.op in _SAME_SHAPE_NOOPS
        and node.checked_type == node.args[0].checked_type
    ):
        return node.args[0]
    return None


def _function(func: Function) -> Function:
    return rewrite_function(func, _drop)


def dead_code_elimination(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Drop no-op operations (see the module docstring)."""
    del ctx
    return map_functions(mod, _function)


DeadCodeElimination = Pass("DeadCodeElimination", 1, dead_code_elimination)
