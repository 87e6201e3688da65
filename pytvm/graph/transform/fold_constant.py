"""FoldConstant: an operator call whose arguments are all constants becomes a constant."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..expr import Call, Constant, Expr, Tuple, TupleGetItem
from ..functor import rewrite_function
from ..interpreter import evaluate_call
from ..module import IRModule
from ..op import get_op
from .pass_infra import GraphPass, PassContext, map_functions

__all__ = ["FoldConstant", "fold_constant"]


def _fold(node: Expr) -> Expr | None:
    if isinstance(node, TupleGetItem) and isinstance(node.tuple_value, Tuple):
        return node.tuple_value.fields[node.index]
    if not isinstance(node, Call) or not isinstance(node.op, str):
        return None
    if not all(isinstance(a, Constant) for a in node.args):
        return None
    if get_op(node.op).evaluate is None:
        return None
    value = evaluate_call(node, [a.data for a in node.args])  # type: ignore[union-attr]
    if isinstance(value, tuple):
        return Tuple(tuple(Constant(_owned(v)) for v in value))
    return Constant(_owned(value.astype(node.checked_type.dtype, copy=False)))  # type: ignore[union-attr]


def _owned(value: np.ndarray[Any, Any]) -> np.ndarray[Any, Any]:
    """A folded value made read-only in place: the constant takes it without a copy (a
    parameter-sized copy per folded weight otherwise).
    """
    value = np.asarray(value)
    if value.flags.writeable and value.flags.owndata:
        value.flags.writeable = False
    return value


def fold_constant(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Evaluate every constant subexpression with the operators' reference implementations."""
    del ctx
    return map_functions(mod, lambda f: rewrite_function(f, _fold))


FoldConstant = GraphPass("FoldConstant", 2, fold_constant)
