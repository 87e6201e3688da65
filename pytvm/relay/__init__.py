"""TVM's ``relay`` names over the graph compiler, for code written against TVM up to 0.18.

``from tvm import relay`` code runs with ``import pytvm as tvm``::

    mod, params = relay.frontend.from_onnx(model, shape_dict)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))

or, to run a function from Python at once,
``relay.create_executor("graph", mod, tvm.cpu(), "llvm").evaluate()(x, **params)``.

The graph IR nodes (``relay.var``, ``relay.Function``, ...) are :mod:`pytvm.graph`'s; the
operator functions are in :mod:`.op` (``relay.add``, ...) and :mod:`.nn` (``relay.nn.conv2d``).
"""

from __future__ import annotations

from typing import Any as _AnyType

from ..graph import (
    Call,
    Constant,
    Expr,
    Function,
    IRModule,
    Tuple,
    TupleGetItem,
    Type,
    Var,
    astext,
    const,
    transform,
)
from ..ir.span import SourceName, Span
from . import analysis, backend, build_module, expr, expr_functor, frontend, nn, op, testing
from .build_module import bind_params_by_name, build, create_executor
from .nn import TupleWrapper
from .op import (
    abs,
    add,
    cast,
    clip,
    concatenate,
    cos,
    divide,
    equal,
    exp,
    expand_dims,
    floor,
    greater,
    less,
    log,
    max,
    maximum,
    mean,
    min,
    minimum,
    multiply,
    negative,
    power,
    reshape,
    sigmoid,
    sin,
    sqrt,
    squeeze,
    subtract,
    sum,
    tanh,
    transpose,
    where,
)
from .ty import Any, TensorType, TupleType

__all__ = [
    "Any",
    "Call",
    "Constant",
    "Expr",
    "Function",
    "IRModule",
    "SourceName",
    "Span",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "TupleWrapper",
    "Type",
    "Var",
    "abs",
    "add",
    "analysis",
    "astext",
    "backend",
    "bind_params_by_name",
    "build",
    "build_module",
    "cast",
    "clip",
    "concatenate",
    "const",
    "cos",
    "create_executor",
    "divide",
    "equal",
    "exp",
    "expand_dims",
    "expr",
    "expr_functor",
    "floor",
    "frontend",
    "greater",
    "less",
    "log",
    "max",
    "maximum",
    "mean",
    "min",
    "minimum",
    "multiply",
    "negative",
    "nn",
    "op",
    "power",
    "reshape",
    "sigmoid",
    "sin",
    "sqrt",
    "squeeze",
    "subtract",
    "sum",
    "tanh",
    "testing",
    "transform",
    "transpose",
    "var",
    "where",
]


def var(
    name_hint: str,
    type_annotation: _AnyType = None,
    shape: _AnyType = None,
    dtype: str = "float32",
    span: Span | None = None,
) -> Var:
    """A graph input (TVM's signature): ``relay.var("x", shape=(1, 3, 224, 224))`` or
    ``relay.var("x", relay.TensorType((4,), "int32"))``; a shape with no type is a scalar.
    """
    del span  # graph nodes carry no spans
    if type_annotation is not None and shape is not None:
        raise TypeError("relay.var: give type_annotation or shape, not both")
    if isinstance(type_annotation, str):  # relay.var("x", "float32"): a scalar of that dtype
        type_annotation = TensorType((), type_annotation)
    ty = type_annotation if type_annotation is not None else TensorType(tuple(shape or ()), dtype)
    return Var(name_hint, ty)
