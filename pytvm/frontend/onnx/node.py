"""``NodeContext``: what a converter sees of one ONNX node, and how it builds graph calls.

A converter reads the node's attributes (``ctx.attr``), its inputs as graph expressions
(``ctx.expr``) or, where ONNX passes shapes, axes or pads as tensors, as values known at import
time (``ctx.value``); it builds calls with ``ctx.call``, which evaluates a call whose arguments
are all constants at once with FoldConstant's :func:`~pytvm.graph.transform.fold_constant.fold_call`
(shape arithmetic folds to constants, so reshapes get static shapes), and makes an empty result
(a dimension of 0) a constant whatever its arguments.

Every constant a converter makes at import (a folded call, a shape filled, a range, a mask) is
checked against ``max_constant_bytes`` before it is allocated (``ctx.check_constant``), so a
model of a few bytes cannot make the importer allocate gigabytes.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from ...graph import Call, Constant, Expr, Tuple, TupleGetItem, call, const
from ...graph.transform.fold_constant import DEFAULT_MAX_CONSTANT_BYTES, fold_call
from ...graph.ty import TensorType
from .errors import ConstantSizeError, DynamicValueError, OnnxImportError

if TYPE_CHECKING:
    import onnx

__all__ = ["Converter", "ConverterTable", "NodeContext", "SubgraphRunner"]


class NodeContext:
    """One node being converted: attributes, inputs, and helpers to build folded calls."""

    def __init__(
        self,
        node: onnx.NodeProto,
        name: str,
        opset: int,
        attrs: dict[str, Any],
        inputs: Sequence[Callable[[], Expr] | None],
        values: Sequence[Callable[[], np.ndarray | None]],
        sources: Sequence[Collection[str]],
        max_constant_bytes: int = DEFAULT_MAX_CONSTANT_BYTES,
        config: Mapping[str, Any] | None = None,
        subgraph: SubgraphRunner | None = None,
    ) -> None:
        self.node = node
        self._subgraph = subgraph
        #: The import's ``convert_config`` (``importer.CONVERT_CONFIG`` lists the options).
        self.config: Mapping[str, Any] = dict(config or {})
        self.opset = opset
        self.op_type = node.op_type
        self.name = name  # the node's name, or ``<op_type>_<index>`` for an unnamed node
        self.attrs = attrs
        self._inputs = list(inputs)
        self._values = list(values)
        self._sources = list(sources)
        self._exprs: dict[int, Expr] = {}
        self.max_constant_bytes = max_constant_bytes

    # ------------------------------------------------------------------ attributes

    def attr(self, name: str, default: Any = None) -> Any:
        """Attribute ``name`` (ints, floats, strings, lists, numpy arrays), or ``default``."""
        return self.attrs.get(name, default)

    def require(self, name: str) -> Any:
        """Attribute ``name``, which the node must have."""
        if name not in self.attrs:
            raise self.error(f"the required attribute {name!r} is missing")
        return self.attrs[name]

    # ------------------------------------------------------------------ inputs

    @property
    def num_inputs(self) -> int:
        """The number of input slots (omitted optional inputs included)."""
        return len(self._inputs)

    @property
    def num_outputs(self) -> int:
        """The number of outputs the node declares."""
        return len(self.node.output)

    def output_used(self, i: int) -> bool:
        """Whether output ``i`` exists and has a name (an omitted output has none)."""
        return i < len(self.node.output) and self.node.output[i] != ""

    def has(self, i: int) -> bool:
        """Whether optional input ``i`` is given."""
        return i < len(self._inputs) and self._inputs[i] is not None

    def expr(self, i: int) -> Expr:
        """Input ``i`` as a graph expression."""
        if not self.has(i):
            raise self.error(f"input {i} is required but not given")
        if i not in self._exprs:
            make = self._inputs[i]
            assert make is not None
            self._exprs[i] = make()
        return self._exprs[i]

    def exprs(self) -> list[Expr]:
        """Every given input as an expression."""
        return [self.expr(i) for i in range(self.num_inputs) if self.has(i)]

    def type(self, i: int) -> TensorType:
        """The type of input ``i``."""
        ty = self.expr(i).checked_type
        if not isinstance(ty, TensorType):
            raise self.error(f"input {i} is a tuple, expected a tensor")
        return ty

    def shape(self, i: int) -> tuple[int, ...]:
        """The static shape of input ``i``."""
        return self.type(i).shape

    def dtype(self, i: int) -> str:
        """The element type of input ``i``."""
        return self.type(i).dtype

    def ndim(self, i: int) -> int:
        """The rank of input ``i``."""
        return len(self.shape(i))

    def value(self, i: int, what: str = "") -> np.ndarray:
        """The value of input ``i``, which must be known at import time (a constant)."""
        if not self.has(i):
            raise self.error(f"input {i} ({what or 'a value'}) is required but not given")
        got = self._values[i]()
        if got is None:
            label = what or f"input {i}"
            name = self.node.input[i]
            raise DynamicValueError(
                f"{self.where()}: {label} ({name!r}) must be known at import time, but it is "
                f"computed from the graph input(s) {sorted(self._sources[i])}; make them "
                "initializers (constants) of the model",
                self._sources[i],
            )
        return got

    def optional_value(self, i: int, what: str = "") -> np.ndarray | None:
        """The value of optional input ``i`` (None when not given or empty)."""
        if not self.has(i):
            return None
        v = self.value(i, what)
        return None if v.size == 0 and v.ndim == 1 else v

    def known_value(self, i: int) -> np.ndarray | None:
        """The value of input ``i`` when it is known at import time, else None (also when the
        input is not given): for converters with a special case of constant inputs.
        """
        return self._values[i]() if self.has(i) else None

    def sources(self, i: int) -> frozenset[str]:
        """The graph inputs input ``i``'s value is computed from (empty: a constant)."""
        return frozenset(self._sources[i]) if self.has(i) else frozenset()

    def subgraph(
        self, graph: onnx.GraphProto, inputs: Sequence[tuple[Expr, frozenset[str]]]
    ) -> list[tuple[Expr, frozenset[str]]]:
        """The outputs of subgraph ``graph`` (an ``If`` branch, a ``Loop`` body), each with
        the graph inputs it is computed from, given its inputs as ``(expr, sources)``; the
        subgraph also reads values of the enclosing graphs by name.
        """
        if self._subgraph is None:
            raise self.error("subgraphs are not supported here")
        return self._subgraph(graph, inputs, self.name)

    def ints(self, i: int, what: str = "") -> list[int]:
        """Input ``i``'s value as a list of ints."""
        return [int(v) for v in np.asarray(self.value(i, what)).reshape(-1)]

    # ------------------------------------------------------------------ building

    def call(self, op: str, *args: Expr, **attrs: Any) -> Expr:
        """``op(*args, **attrs)`` named after the node, evaluated now if its arguments are
        constants (and its result within ``max_constant_bytes``: larger raises); an empty
        result is a constant whatever its arguments.
        """
        expr = call(op, *args, name=self.name, **attrs)
        ty = expr.checked_type
        if isinstance(ty, TensorType) and ty.size == 0:
            return Constant(np.zeros(ty.shape, dtype=ty.dtype))
        folded = fold_call(expr, self.max_constant_bytes, self._too_large)
        return expr if folded is None else folded

    def check_constant(self, shape: Sequence[int], dtype: str, what: str) -> None:
        """Raise naming the node unless a constant of ``shape`` and ``dtype`` may be made:
        no negative dimension, at most ``max_constant_bytes``. Call it before allocating.
        """
        dims = [int(d) for d in shape]
        if any(d < 0 for d in dims):
            raise self.error(f"{what} would have shape {dims}, which has a negative dimension")
        nbytes = math.prod(dims) * np.dtype(dtype).itemsize
        if nbytes > self.max_constant_bytes:
            where, limit = self.where(), self.max_constant_bytes
            raise ConstantSizeError(where, what, f"{dims} ({dtype})", nbytes, limit)

    def _too_large(self, expr: Call, nbytes: int) -> None:
        ty = expr.checked_type
        shape = f"{list(ty.shape)} ({ty.dtype})" if isinstance(ty, TensorType) else str(ty)
        where, what = self.where(), f"the result of {expr.op}"
        raise ConstantSizeError(where, what, shape, nbytes, self.max_constant_bytes)

    def const(self, value: Any, dtype: str | None = None) -> Constant:
        """A constant (of ``dtype``, default: the value's own)."""
        return const(value, dtype)

    def item(self, tup: Expr, i: int) -> Expr:
        """Field ``i`` of a tuple-valued expression."""
        if isinstance(tup, Tuple):
            return tup.fields[i]
        return TupleGetItem(tup, i)

    # ------------------------------------------------------------------ errors

    def where(self) -> str:
        """``node 'name' (OpType, opset N)``."""
        return f"ONNX node {self.name!r} ({self.op_type}, opset {self.opset})"

    def error(self, message: str) -> OnnxImportError:
        """An import error naming this node."""
        return OnnxImportError(f"{self.where()}: {message}")


#: Runs a subgraph: ``(graph, [(input expr, its sources)], reader) -> [(output, sources)]``.
SubgraphRunner = Callable[
    ["onnx.GraphProto", Sequence[tuple[Expr, frozenset[str]]], str],
    list[tuple[Expr, frozenset[str]]],
]

#: A converter: the node's context to its output expression (or one per output).
Converter = Callable[[NodeContext], "Expr | Sequence[Expr]"]

#: A table of converters, ``{op_type: (first opset, converter)}``.
ConverterTable = dict[str, tuple[int, Callable[[NodeContext], Any]]]
