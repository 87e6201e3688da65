"""TVM's ``relay`` names over the graph compiler, for code written against TVM up to 0.18.

``from tvm import relay`` code runs with ``import pytvm as tvm``::

    mod, params = relay.frontend.from_onnx(model, shape_dict)
    with tvm.transform.PassContext(opt_level=3):
        lib = relay.build(mod, target="llvm", params=params)
    m = graph_executor.GraphModule(lib["default"](tvm.cpu()))

The graph IR nodes (``relay.var``, ``relay.Function``, ...) are :mod:`pytvm.graph`'s.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .. import frontend
from ..ffi.errors import TVMValueError
from ..graph import (
    Call,
    Constant,
    Function,
    IRModule,
    TensorType,
    Tuple,
    TupleGetItem,
    TupleType,
    Var,
    const,
    transform,
)
from ..graph import build as _graph_build
from ..runtime.graph_executor import GraphExecutorFactoryModule

__all__ = [
    "Call",
    "Constant",
    "Function",
    "IRModule",
    "TensorType",
    "Tuple",
    "TupleGetItem",
    "TupleType",
    "Var",
    "build",
    "const",
    "frontend",
    "transform",
    "var",
]


def var(
    name_hint: str, shape: Any = (), dtype: str = "float32", type_annotation: Any = None
) -> Var:
    """A graph input: ``relay.var("x", shape=(1, 3, 224, 224))``."""
    ty = type_annotation if type_annotation is not None else TensorType(tuple(shape), dtype)
    return Var(name_hint, ty)


def build(
    ir_mod: Any,
    target: Any = None,
    target_host: Any = None,
    executor: Any = None,
    runtime: Any = None,
    params: Mapping[str, Any] | None = None,
    mod_name: str = "default",
) -> GraphExecutorFactoryModule:
    """TVM's ``relay.build``: compile ``ir_mod`` for the graph executor (see
    :func:`pytvm.graph.build`). ``target_host`` may only name the host the target already is;
    ``executor`` and ``runtime`` may only be the graph executor and the C++-free runtime.
    """
    for name, value, allowed in (
        ("executor", executor, ("graph",)),
        ("runtime", runtime, ("cpp", "crt")),
    ):
        kind = getattr(value, "name", value)
        if value is not None and str(kind) not in allowed:
            raise TVMValueError(
                f"relay.build: {name}={kind!r} is not supported; use {allowed[0]!r}"
            )
    if isinstance(target, dict):
        if len(target) != 1:
            raise TVMValueError("relay.build: heterogeneous targets by dict are not supported")
        (target,) = target.values()
    del target_host  # kernels are built for the host the target names
    return _graph_build(ir_mod, target=target, params=params, mod_name=mod_name)
