"""Checking graph operators, for tests: one call run by the interpreter and compiled to C.

A :class:`OpCase` is one call of a graph operator on numpy inputs with its expected value.
:func:`interpret_case` runs it through the operator's ``evaluate``; :func:`build_cases` lowers
every case's ``compute`` under ``topi.x86.schedule_default`` and builds them all into one C
module (one compiler run), and :func:`run_compiled` calls one case's kernel there.
:func:`onnx_node_reference` computes an expected value with ONNX Runtime on a one-node model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .. import graph as g
from .. import nd, te
from ..driver import build
from ..graph.interpreter import interpret
from ..graph.op import get_op
from ..graph.op.define import te_inputs
from ..graph.ty import TensorType, TupleType, Type
from ..tir import IRModule as TirModule
from ..topi.x86 import schedule_default

__all__ = [
    "OpCase",
    "build_cases",
    "interpret_case",
    "onnx_node_reference",
    "run_compiled",
]

Array = np.ndarray


@dataclass
class OpCase:
    """``op(*inputs, **attrs)`` and its expected value (an array, or a tuple of them).

    An input that is a list of arrays is passed as a graph ``Tuple`` (``concatenate``).
    ``expected`` is an array or a function of the inputs giving one.
    """

    name: str
    op: str
    inputs: list[Any]
    attrs: dict[str, Any] = field(default_factory=dict)
    expected: Any = None
    rtol: float = 1e-5
    atol: float = 1e-5

    def want(self) -> Any:
        """The expected value."""
        return self.expected(*self.inputs) if callable(self.expected) else self.expected

    def call(self) -> tuple[list[g.Var], g.Call]:
        """The graph call on fresh variables, and the variables."""
        params: list[g.Var] = []
        args: list[g.Expr] = []
        for i, x in enumerate(self.inputs):
            if isinstance(x, (list, tuple)):
                fields = [g.Var(f"x{i}_{k}", _type(v)) for k, v in enumerate(x)]
                params.extend(fields)
                args.append(g.Tuple(tuple(fields)))
            else:
                var = g.Var(f"x{i}", _type(x))
                params.append(var)
                args.append(var)
        return params, g.call(self.op, *args, name=self.name, **self.attrs)

    def flat_inputs(self) -> list[Array]:
        """The input arrays in parameter order (tuple fields in place)."""
        out: list[Array] = []
        for x in self.inputs:
            out.extend(x if isinstance(x, (list, tuple)) else [x])
        return out


def _type(x: Array) -> TensorType:
    return TensorType(tuple(x.shape), str(x.dtype))


def interpret_case(case: OpCase) -> Any:
    """The case's value computed by the reference interpreter."""
    params, body = case.call()
    values = dict(zip((p.name for p in params), case.flat_inputs(), strict=True))
    return interpret(g.Function(tuple(params), body), values)


def _flatten(items: Sequence[Any]) -> list[Any]:
    out: list[Any] = []
    for x in items:
        out.extend(_flatten(x) if isinstance(x, (list, tuple)) else [x])
    return out


def _symbol(case: OpCase) -> str:
    return "gop_" + re.sub(r"\W", "_", case.name)


def _lower(case: OpCase) -> Any:
    _, body = case.call()
    types: list[Type] = [
        TupleType(tuple(_type(v) for v in x)) if isinstance(x, (list, tuple)) else _type(x)
        for x in case.inputs
    ]
    placeholders = te_inputs(types)
    compute = get_op(case.op).compute
    assert compute is not None
    outs = compute(placeholders, body.attrs, body.checked_type)
    outs = list(outs) if isinstance(outs, (list, tuple)) else [outs]
    sch = schedule_default(outs)
    return te.lower_schedule(sch, [*_flatten(placeholders), *outs], _symbol(case))


def build_cases(cases: Sequence[OpCase]) -> tuple[Any, dict[str, BaseException]]:
    """Lower each case (keeping the error of those that fail) and build the rest in one module."""
    funcs: dict[str, Any] = {}
    errors: dict[str, BaseException] = {}
    for case in cases:
        try:
            funcs[_symbol(case)] = _lower(case)
        except Exception as err:  # reported by the case's own test
            errors[case.name] = err
    mod = build(TirModule(funcs), target="c") if funcs else None
    return mod, errors


def run_compiled(mod: Any, case: OpCase) -> Any:
    """The case's value computed by its compiled kernel in ``mod``."""
    _, body = case.call()
    ty = body.checked_type
    out_types = list(ty.fields) if isinstance(ty, TupleType) else [ty]
    args = [nd.array(np.ascontiguousarray(x)) for x in case.flat_inputs()]
    outs = [nd.empty(t.shape, t.dtype) for t in out_types if isinstance(t, TensorType)]
    mod[_symbol(case)](*args, *outs)
    values = [o.numpy() for o in outs]
    return tuple(values) if isinstance(ty, TupleType) else values[0]


def onnx_node_reference(
    op_type: str, inputs: Sequence[Array | None], opset: int = 17, outputs: int = 1, **attrs: Any
) -> Any:
    """The outputs of ONNX Runtime running one ``op_type`` node on ``inputs`` (each output
    of the first input's type; a None input is an omitted optional one).
    """
    import onnxruntime
    from onnx import helper

    names = ["" if x is None else f"in{i}" for i, x in enumerate(inputs)]
    given = {n: x for n, x in zip(names, inputs, strict=True) if x is not None}
    outs = [f"out{i}" for i in range(outputs)]
    node = helper.make_node(op_type, names, outs, **attrs)
    out_type = helper.np_dtype_to_tensor_dtype(given[names[0]].dtype)
    graph = helper.make_graph(
        [node],
        "reference",
        [
            helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(x.dtype), x.shape)
            for n, x in given.items()
        ],
        [helper.make_tensor_value_info(o, out_type, None) for o in outs],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    sess = onnxruntime.InferenceSession(
        model.SerializeToString(), providers=["CPUExecutionProvider"]
    )
    result = sess.run(None, given)
    return result[0] if outputs == 1 else tuple(result)
