"""The reference interpreter: runs graph IR with each operator's numpy ``evaluate``.

It is the numerical reference of operator tests and what constant folding evaluates with.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ..ffi.errors import TVMValueError
from .expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from .functor import post_order
from .op.registry import get_op

__all__ = ["evaluate_call", "interpret"]


def evaluate_call(call: Call, args: list[Any]) -> Any:
    """``call`` applied to numpy ``args`` (a tuple-typed result is a tuple of arrays)."""
    if isinstance(call.op, Function):
        return interpret(call.op, dict(zip((p.name for p in call.op.params), args, strict=True)))
    opdef = get_op(call.op)
    if opdef.evaluate is None:
        raise TVMValueError(f"{call.op}: the operator has no reference implementation")
    out = opdef.evaluate(args, call.attrs)
    if isinstance(out, (list, tuple)):
        return tuple(np.asarray(o) for o in out)
    return np.asarray(out)


def interpret(func: Function, inputs: Mapping[str, Any]) -> Any:
    """Run ``func`` on numpy ``inputs`` (by parameter name); returns an array or a tuple."""
    missing = [p.name for p in func.params if p.name not in inputs]
    if missing:
        raise TVMValueError(f"interpret: no value for input(s) {missing}")
    values: dict[int, Any] = {}
    for p in func.params:
        values[id(p)] = np.asarray(inputs[p.name], dtype=p.type_annotation.dtype)  # type: ignore[union-attr]
    node: Expr
    for node in post_order(func.body):
        if id(node) in values:
            continue
        if isinstance(node, Var):
            raise TVMValueError(f"interpret: free variable {node.name}")
        if isinstance(node, Constant):
            values[id(node)] = node.data
        elif isinstance(node, Call):
            values[id(node)] = evaluate_call(node, [values[id(a)] for a in node.args])
        elif isinstance(node, Tuple):
            values[id(node)] = tuple(values[id(f)] for f in node.fields)
        else:
            assert isinstance(node, TupleGetItem)
            values[id(node)] = values[id(node.tuple_value)][node.index]
    return values[id(func.body)]
