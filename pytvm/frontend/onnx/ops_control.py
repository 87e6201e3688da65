"""Converters of ONNX's control flow: ``If`` and ``Loop``, resolved at import.

``If``: a condition known at import (a constant, or folded from constants) selects its branch,
the only one imported. Otherwise both branches are imported and each output is
``where(cond, then, else)``, which needs the two branches' outputs to agree in shape and type
(ONNX's branches have no side effects, so computing both is safe); where they differ, the
condition must be known at import: a condition computed from graph inputs makes the model import
per the values given at each call (:mod:`.specialize`), others are refused naming the node.

``Loop``: unrolled. The trip count ``M`` and the condition must be known at import, and so must
the condition the body computes after each iteration (a ``M`` computed from graph inputs, as in
``Range`` expanded into a ``Loop``, imports per the values given at each call); at most
:data:`MAX_UNROLLED_ITERATIONS` iterations. Loop-carried values may change shape between
iterations; the scan outputs are the per-iteration values stacked on a new first axis.
Sequence and optional values are not supported.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from ...graph import Constant, Expr, Tuple
from ...graph.ty import TensorType
from .errors import DynamicValueError
from .node import ConverterTable, NodeContext

if TYPE_CHECKING:
    import onnx

__all__ = ["CONTROL_CONVERTERS", "MAX_UNROLLED_ITERATIONS"]

#: The most iterations a ``Loop`` is unrolled to.
MAX_UNROLLED_ITERATIONS = 4096

Value = tuple[Expr, frozenset[str]]


def _graph(ctx: NodeContext, name: str) -> onnx.GraphProto:
    attr = ctx.require(name)
    graph = getattr(attr, "g", None)
    if graph is None:
        raise ctx.error(f"attribute {name!r} is not a graph")
    return graph  # type: ignore[no-any-return]


def _tensor_type(ctx: NodeContext, expr: Expr, what: str) -> TensorType:
    ty = expr.checked_type
    if not isinstance(ty, TensorType):
        raise ctx.error(f"{what} is {ty}; only tensor values are supported (no sequences)")
    return ty


def _flag(ctx: NodeContext, value: np.ndarray, what: str) -> bool:
    if value.size != 1:
        raise ctx.error(f"{what} has {value.size} elements; expected one boolean")
    return bool(value.reshape(-1)[0])


def _if(ctx: NodeContext) -> list[Expr]:
    then_graph, else_graph = _graph(ctx, "then_branch"), _graph(ctx, "else_branch")
    known = ctx.known_value(0)
    if known is not None:
        chosen = then_graph if _flag(ctx, known, "the condition") else else_graph
        return [expr for expr, _ in ctx.subgraph(chosen, [])]
    then_out = ctx.subgraph(then_graph, [])
    else_out = ctx.subgraph(else_graph, [])
    if len(then_out) != len(else_out):
        raise ctx.error(
            f"then_branch has {len(then_out)} outputs and else_branch {len(else_out)}; "
            "expected as many"
        )
    if ctx.shape(0) not in ((), (1,)):
        raise ctx.error(f"the condition has shape {list(ctx.shape(0))}; expected one boolean")
    cond = ctx.call("reshape", ctx.expr(0), newshape=())
    outs = []
    for k, ((a, _), (b, _)) in enumerate(zip(then_out, else_out, strict=True)):
        ta = _tensor_type(ctx, a, f"output {k} of then_branch")
        tb = _tensor_type(ctx, b, f"output {k} of else_branch")
        if ta != tb:
            ctx.value(
                0,
                f"the condition (output {k} is {ta} in then_branch and {tb} in else_branch, "
                "so it cannot be selected per element)",
            )
        outs.append(ctx.call("where", cond, a, b))
    return outs


def _stacked(ctx: NodeContext, values: Sequence[Expr]) -> Expr:
    rows = [ctx.call("expand_dims", v, axis=0, num_newaxis=1) for v in values]
    return rows[0] if len(rows) == 1 else ctx.call("concatenate", Tuple(tuple(rows)), axis=0)


def _empty_scan(ctx: NodeContext, body: onnx.GraphProto, index: int) -> Expr:
    """Scan output ``index`` of a loop that ran no iteration: empty, if the body declares the
    output's shape and type.
    """
    from onnx import helper

    info = body.output[index]
    tensor = info.type.tensor_type
    dims = [d.dim_value if d.HasField("dim_value") else -1 for d in tensor.shape.dim]
    if not tensor.HasField("shape") or any(d < 0 for d in dims) or not tensor.elem_type:
        raise ctx.error(
            f"the loop runs no iteration and the body does not declare the static shape of "
            f"its scan output {info.name!r}, so the output's shape is unknown"
        )
    dtype = helper.tensor_dtype_to_np_dtype(tensor.elem_type)
    return ctx.const(np.zeros((0, *dims), dtype))


def _condition(ctx: NodeContext, value: Value, what: str) -> bool:
    expr, sources = value
    if not isinstance(expr, Constant):
        if sources:
            raise DynamicValueError(
                f"{ctx.where()}: {what} must be known at import time to unroll the loop, but "
                f"it is computed from the graph input(s) {sorted(sources)}",
                sources,
            )
        raise ctx.error(
            f"{what} is not known at import time (it is computed from the model's weights); "
            "loops are unrolled only where it folds to a constant: import with "
            "freeze_params=True to fold the weights"
        )
    return _flag(ctx, expr.data, what)


def _loop(ctx: NodeContext) -> list[Expr]:
    body = _graph(ctx, "body")
    carried: list[Value] = [(ctx.expr(i), ctx.sources(i)) for i in range(2, ctx.num_inputs)]
    num_scans = len(body.output) - 1 - len(carried)
    if num_scans < 0:
        raise ctx.error(
            f"the body has {len(body.output)} outputs for {len(carried)} loop-carried values; "
            "expected the condition, then each carried value, then the scan outputs"
        )
    trip = None
    if ctx.has(0):
        trip = int(ctx.value(0, "the trip count M").reshape(-1)[0])
    cond: Value = (ctx.const(np.array(True)), frozenset())
    if ctx.has(1):
        cond = (ctx.expr(1), ctx.sources(1))
    running = _condition(ctx, cond, "the loop condition")
    if trip is None and not ctx.has(1):
        raise ctx.error("the loop has neither a trip count nor a condition (it never ends)")
    scans: list[list[Expr]] = [[] for _ in range(num_scans)]
    i = 0
    while running and (trip is None or i < trip):
        if i >= MAX_UNROLLED_ITERATIONS:
            raise ctx.error(
                f"the loop runs more than {MAX_UNROLLED_ITERATIONS} iterations, the most that "
                "are unrolled at import"
            )
        step = (ctx.const(np.array(i, "int64")), frozenset[str]())
        outs = ctx.subgraph(body, [step, cond, *carried])
        cond, carried = outs[0], outs[1 : 1 + len(carried)]
        for k, (expr, _) in enumerate(outs[1 + len(carried) :]):
            scans[k].append(expr)
        running = _condition(ctx, cond, f"the condition the body computes at iteration {i}")
        i += 1
    finals = [expr for expr, _ in carried]
    first = 1 + len(carried)
    stacked = [
        _stacked(ctx, values) if values else _empty_scan(ctx, body, first + k)
        for k, values in enumerate(scans)
    ]
    return [*finals, *stacked]


CONTROL_CONVERTERS: ConverterTable = {"If": (1, _if), "Loop": (1, _loop)}
