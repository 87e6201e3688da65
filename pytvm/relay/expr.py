"""TVM's ``relay.expr`` path: the graph IR's expression nodes (:mod:`pytvm.graph.expr`)."""

from __future__ import annotations

from ..graph import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var, const
from .nn import TupleWrapper

__all__ = ["Call", "Constant", "Expr", "Function", "Tuple", "TupleGetItem", "TupleWrapper",
           "Var", "const"]  # fmt: skip
