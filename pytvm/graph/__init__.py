"""The graph compiler: dataflow IR of whole models, its passes, and the build to graph JSON."""

from __future__ import annotations

from . import aot, op, transform
from .aot import build_aot
from .attrs import Attrs
from .build_module import build, plan_memory
from .expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var, call, const
from .module import IRModule
from .printer import astext
from .ty import TensorType, TupleType, Type

__all__ = [
    "Attrs",
    "Call",
    "Constant",
    "Expr",
    "Function",
    "IRModule",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "Type",
    "Var",
    "aot",
    "astext",
    "build",
    "build_aot",
    "call",
    "const",
    "op",
    "plan_memory",
    "transform",
]
