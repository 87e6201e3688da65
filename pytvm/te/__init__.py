"""Tensor expressions: declare what to compute (``placeholder``, ``compute``, reductions).

Examples
--------
>>> from pytvm import te
>>> n = te.var("n")
>>> A = te.placeholder((n,), name="A")
>>> B = te.compute((n,), lambda i: te.exp(A[i]), name="B")
>>> str(B.op.body[0]), B.shape[0] is n
('exp(A[i])', True)
"""

from __future__ import annotations

from ..tir.expr import IterVar, PrimExpr, Range, Var, const
from ..tir.op import (
    abs,
    all,
    any,
    ceil,
    div,
    erf,
    exp,
    floor,
    floordiv,
    floormod,
    fmod,
    if_then_else,
    indexdiv,
    indexmod,
    log,
    max_value,
    min_value,
    pow,
    round,
    rsqrt,
    sigmoid,
    sqrt,
    tanh,
    truncdiv,
    truncmod,
)
from . import hybrid
from .extern import ExternOp, extern
from .hybrid.op import HybridOp
from .lower_schedule import create_prim_func, lower_schedule
from .operation import compute, placeholder, reduce_axis, size_var, thread_axis, var
from .reduction import argmax, argmin, comm_reducer, max, min, sum
from .scan import ScanOp, scan
from .schedule import Schedule, Stage, create_schedule
from .schedule.layout_map import AXIS_SEPARATOR
from .tag import TagScope, tag_scope
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor, TensorSlice

__all__ = [
    "AXIS_SEPARATOR",
    "ComputeOp",
    "ExternOp",
    "HybridOp",
    "IterVar",
    "Operation",
    "PlaceholderOp",
    "PrimExpr",
    "Range",
    "ScanOp",
    "Schedule",
    "Stage",
    "TagScope",
    "Tensor",
    "TensorSlice",
    "Var",
    "abs",
    "all",
    "any",
    "argmax",
    "argmin",
    "ceil",
    "comm_reducer",
    "compute",
    "const",
    "create_prim_func",
    "create_schedule",
    "div",
    "erf",
    "exp",
    "extern",
    "floor",
    "floordiv",
    "floormod",
    "fmod",
    "hybrid",
    "if_then_else",
    "indexdiv",
    "indexmod",
    "log",
    "lower_schedule",
    "max",
    "max_value",
    "min",
    "min_value",
    "placeholder",
    "pow",
    "reduce_axis",
    "round",
    "rsqrt",
    "scan",
    "sigmoid",
    "size_var",
    "sqrt",
    "sum",
    "tag_scope",
    "tanh",
    "thread_axis",
    "truncdiv",
    "truncmod",
    "var",
]
