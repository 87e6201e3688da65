"""``from_onnx``: an ONNX model to a graph ``IRModule`` and its parameters.

The importer walks the graph's nodes in order, converting each with the converter registered
for its operator and the model's opset (:mod:`.converters`). Values are named as in ONNX:

* a graph input without an initializer is a parameter of ``main`` (its dynamic dimensions
  fixed by ``shape_dict``);
* an initializer is a weight: a floating-point tensor of more than one element becomes a
  parameter (a ``Var``) with its array in ``params``; the others (shapes, axes, indices,
  scalars) become constants. A graph input that also has an initializer is the same weight
  (older exporters list weights among the inputs);
* a node's outputs are the expressions its converter returns; calls whose arguments are all
  constants are evaluated at once, so shape arithmetic folds to constants.

Before a node is converted it is checked against ONNX's own schemas (:mod:`.validation`: the
opset, the operator's version, attribute types, inputs sharing a type parameter, single
assignment). No constant made at import may exceed ``max_constant_bytes``
(``PassContext`` option ``graph.max_constant_bytes``, default 512 MiB), which is checked before
the constant is allocated.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from ...ffi.errors import TVMError
from ...graph import Constant, Expr, Function, IRModule, Tuple, Var
from ...graph.transform.fold_constant import max_constant_bytes as constant_limit
from ...graph.ty import MAX_ELEMENTS, TensorType
from . import validation
from .converters import CONVERTERS, DOMAIN_CONVERTERS
from .element_types import element_dtype, element_type_name
from .errors import (
    DynamicValueError,
    OnnxImportError,
    UnknownInputError,
    UnsupportedOperatorsError,
)
from .node import NodeContext
from .renamed_export import export_renamed_model
from .run_time_shapes import PartialTensorType, RunTimeVar, run_time_inputs
from .specialize import (
    Specializer,
    ValueSpecializedFunction,
    ValueSpecializedModule,
    intern_specializer,
)

__all__ = ["CONVERT_CONFIG", "from_onnx", "load_model"]

#: The options of ``from_onnx(convert_config=...)`` and their defaults (TVM's names):
#: ``use_nt_batch_matmul`` emits a batched MatMul as ``nn.batch_matmul`` with its second
#: operand transposed to (batch, N, K) (``transpose_b=True``); False keeps it (batch, K, N).
CONVERT_CONFIG: Mapping[str, Any] = {"use_nt_batch_matmul": True}

_ONNX_DOMAINS = ("", "ai.onnx")

#: ``_Importer``'s options after the model: shape_dict, dtype, opset, freeze_params,
#: max_constant_bytes, convert_config.
_Options = tuple[
    Mapping[str, Any] | None,
    str | Mapping[str, str],
    int | None,
    bool,
    int,
    Mapping[str, Any] | None,
]


def load_model(model: Any) -> Any:
    """``model`` as an ``onnx.ModelProto``: a ModelProto, a path to a file, or its bytes."""
    import onnx
    from google.protobuf.message import DecodeError  # type: ignore[import-untyped]

    if isinstance(model, onnx.ModelProto):
        return model
    if isinstance(model, (bytes, bytearray)):
        try:
            return onnx.load_from_string(bytes(model))
        except (DecodeError, ValueError) as err:
            raise OnnxImportError(f"the bytes given are not an ONNX model: {err}") from None
    if isinstance(model, (str, os.PathLike)):
        path = Path(model)
        if not path.is_file():
            raise OnnxImportError(f"no ONNX file at {str(path)!r}")
        try:
            loaded = onnx.load(str(path))
        except (DecodeError, ValueError, RuntimeError) as err:
            raise OnnxImportError(
                f"{str(path)!r} does not parse as an ONNX model (a protobuf ModelProto): {err}"
            ) from None
        except (onnx.checker.ValidationError, OSError) as err:  # its external data
            raise OnnxImportError(
                f"{str(path)!r}: the external data of its tensors cannot be loaded: {err}"
            ) from None
        if not loaded.graph.node and not loaded.graph.output:
            raise OnnxImportError(f"{str(path)!r} holds no ONNX graph (is it an ONNX model?)")
        return loaded
    raise OnnxImportError(
        f"from_onnx: expected an onnx.ModelProto, a path or bytes, got {type(model).__name__}"
    )


def _model_opset(model: Any) -> int:
    for entry in model.opset_import:
        if entry.domain in _ONNX_DOMAINS:
            return int(entry.version)
    return 1


def _np_dtype(elem_type: int, what: str) -> str:
    dtype = element_dtype(elem_type)
    if dtype is None:
        name = element_type_name(elem_type)
        raise OnnxImportError(f"{what} has element type {name}, which is not supported")
    return dtype


def _tensor_array(tensor: Any, what: str) -> np.ndarray:
    """A ``TensorProto``'s array; a clear error if its data does not fill its dims."""
    from onnx import TensorProto, numpy_helper

    _np_dtype(tensor.data_type, what)
    if tensor.data_location == TensorProto.EXTERNAL:
        location = {e.key: e.value for e in tensor.external_data}.get("location", "")
        raise OnnxImportError(
            f"{what} keeps its data in the external file {location!r}, which was not loaded "
            "(and is not read from the current directory); give from_onnx the model's path, "
            "or load it with onnx.load(path), which reads external data beside the file"
        )
    try:
        return numpy_helper.to_array(tensor)
    except Exception as err:
        dims = list(tensor.dims)
        count = int(np.prod(dims, dtype=object)) if dims else 1
        raise OnnxImportError(
            f"{what} cannot be read: it declares dims {dims} ({count} elements), and its data "
            f"does not match ({err}); the file is damaged or was written wrongly"
        ) from None


def _attributes(node: Any, where: str) -> dict[str, Any]:
    from onnx import AttributeProto, helper

    out: dict[str, Any] = {}
    for a in node.attribute:
        if a.type in (AttributeProto.GRAPH, AttributeProto.GRAPHS):
            out[a.name] = a  # subgraphs (If, Loop): their converters import them
            continue
        what = f"{where}: attribute {a.name!r}"
        try:
            value = helper.get_attribute_value(a)
            if isinstance(value, bytes):
                value = value.decode("utf-8")
            elif a.type == AttributeProto.TENSOR:
                value = _tensor_array(value, what)
            elif a.type == AttributeProto.STRINGS:
                value = [v.decode("utf-8") for v in value]
            elif isinstance(value, list):
                value = list(value)
        except OnnxImportError:
            raise
        except (ValueError, TypeError, UnicodeDecodeError) as err:
            raise OnnxImportError(f"{what} cannot be read: {err}") from None
        out[a.name] = value
    return out


class _Importer:
    def __init__(
        self,
        model: Any,
        shape_dict: Mapping[str, Any] | None,
        dtype: str | Mapping[str, str],
        opset: int | None,
        freeze_params: bool,
        max_constant_bytes: int,
        config: Mapping[str, Any] | None = None,
        bound: Mapping[str, np.ndarray] | None = None,
    ) -> None:
        self.graph = model.graph
        self.config = _convert_config(config)
        self.opset = int(opset) if opset is not None else _model_opset(model)
        validation.check_opset(self.opset, "the model" if opset is None else "from_onnx(opset=...)")
        self.max_constant_bytes = max_constant_bytes
        self.shape_dict = dict(shape_dict or {})
        self.dtype = dtype
        self.freeze_params = freeze_params
        #: Graph inputs bound to values (value specialization): constants, not parameters.
        self.bound = dict(bound or {})
        self.initializers: dict[str, np.ndarray] = {}
        for init in self.graph.initializer:
            self.initializers[init.name] = _tensor_array(init, f"initializer {init.name!r}")
        self.exprs: dict[str, Expr] = {}
        self.sources: dict[str, frozenset[str]] = {}
        self.inputs: list[Var] = []
        self.weights: dict[str, Var] = {}

    # ------------------------------------------------------------------ inputs

    def input_dtype(self, info: Any) -> str:
        """The element type of graph input ``info``: the model's, else ``dtype``'s."""
        name = info.name
        if not info.type.HasField("tensor_type"):
            raise OnnxImportError(f"graph input {name!r} is not a tensor ({info.type})")
        tensor = info.type.tensor_type
        if tensor.elem_type:
            return _np_dtype(tensor.elem_type, f"graph input {name!r}")
        if isinstance(self.dtype, Mapping):
            return self.dtype.get(name, "float32")
        return self.dtype

    def _input_type(self, info: Any) -> TensorType:
        name = info.name
        dtype = self.input_dtype(info)
        tensor = info.type.tensor_type
        if name in self.shape_dict:
            return _checked_type(name, self.shape_dict[name], dtype, "shape_dict gives")
        if not tensor.HasField("shape"):
            raise OnnxImportError(
                f"graph input {name!r} has no shape in the model; give it in shape_dict, "
                f"e.g. shape_dict={{{name!r}: (1, 3, 224, 224)}}"
            )
        dims = []
        for k, d in enumerate(tensor.shape.dim):
            if d.HasField("dim_value") and d.dim_value >= 0:
                dims.append(int(d.dim_value))
                continue
            label = f" ({d.dim_param!r})" if d.dim_param else ""
            raise OnnxImportError(
                f"graph input {name!r} has a dynamic dimension {k}{label} in shape "
                f"{[x.dim_value if x.HasField('dim_value') else x.dim_param or '?' for x in tensor.shape.dim]}; "  # noqa: E501
                f"give the input's static shape in shape_dict, e.g. shape_dict={{{name!r}: (...)}}"
            )
        return _checked_type(name, dims, dtype, "the model declares")

    def _declare_inputs(self) -> None:
        declared = [info.name for info in self.graph.input]
        unknown = [name for name in self.shape_dict if name not in declared]
        if unknown:
            raise UnknownInputError(unknown, declared)
        for info in self.graph.input:
            self.sources[info.name] = frozenset()
            if info.name in self.initializers:
                continue  # a weight listed among the inputs (older exporters)
            if info.name in self.bound:
                self.exprs[info.name] = self._bound_constant(info)
                continue
            var = Var(info.name, self._input_type(info))
            self.inputs.append(var)
            self.exprs[info.name] = var
            self.sources[info.name] = frozenset({info.name})
        for name in self.initializers:
            self.sources[name] = frozenset()

    def _bound_constant(self, info: Any) -> Constant:
        ty = self._input_type(info)
        value = np.asarray(self.bound[info.name])
        if tuple(value.shape) != ty.shape or str(value.dtype) != ty.dtype:
            raise OnnxImportError(
                f"graph input {info.name!r} is bound to a {value.dtype} value of shape "
                f"{tuple(value.shape)}; the input is {ty}"
            )
        return Constant(value)

    def _is_weight(self, name: str) -> bool:
        """Whether initializer ``name`` is a parameter of ``main`` (else a constant)."""
        value = self.initializers[name]
        return value.dtype.kind == "f" and value.size > 1 and not self.freeze_params

    def weight_vars(self) -> list[Var]:
        """The weights the graph reads (those made so far, then the rest in model order)."""
        read = {n for node in _all_nodes(self.graph) for n in node.input} | {
            o.name for o in self.graph.output
        }
        for name in self.initializers:
            if name in read and name not in self.weights and self._is_weight(name):
                value = self.initializers[name]
                self.weights[name] = Var(name, TensorType(value.shape, str(value.dtype)))
        return list(self.weights.values())

    def _initializer_expr(self, name: str) -> Expr:
        value = self.initializers[name]
        if value.dtype.kind in "OSU" or str(value.dtype) == "bfloat16":
            raise OnnxImportError(f"initializer {name!r} has unsupported type {value.dtype}")
        if not self._is_weight(name):
            return Constant(value)
        if name in self.weights:  # made for a subgraph that read it first
            return self.weights[name]
        var = Var(name, TensorType(value.shape, str(value.dtype)))
        self.weights[name] = var
        return var

    def _expr_of(self, name: str, reader: str) -> Expr:
        if name not in self.exprs:
            if name not in self.initializers:
                raise OnnxImportError(
                    f"ONNX node {reader!r} reads {name!r}, which no earlier node, graph input "
                    "or initializer defines (are the nodes in topological order?)"
                )
            self.exprs[name] = self._initializer_expr(name)
        return self.exprs[name]

    def _value_of(self, name: str) -> np.ndarray | None:
        if name in self.initializers:
            return self.initializers[name]
        expr = self.exprs.get(name)
        return expr.data if isinstance(expr, Constant) else None

    # ------------------------------------------------------------------ nodes

    def _check_supported(self) -> None:
        missing = []
        for node, name in _named_nodes(self.graph):
            if node.domain not in _ONNX_DOMAINS:
                if node.op_type not in DOMAIN_CONVERTERS.get(node.domain, {}):
                    missing.append((f"{node.domain}.{node.op_type}", name, self.opset))
                continue
            entry = CONVERTERS.get(node.op_type)
            if entry is None or self.opset < entry[0]:
                missing.append((node.op_type, name, self.opset))
        if missing:
            raise UnsupportedOperatorsError(missing)

    def _dtype_of(self, name: str) -> str | None:
        """The element type of value ``name`` (None: absent, unknown or a tuple)."""
        if name in self.exprs:
            ty = self.exprs[name].checked_type
            return ty.dtype if isinstance(ty, TensorType) else None
        value = self.initializers.get(name)
        return None if value is None else str(value.dtype)

    def _validate(self, node: Any, where: str) -> None:
        if node.domain not in _ONNX_DOMAINS:
            return  # onnx has no schemas of other domains' operators
        validation.check_operator_version(node.op_type, self.opset, where)
        schema = validation.schema_of(node.op_type, self.opset)
        validation.check_attribute_types(node, schema, where)
        dtypes = [self._dtype_of(n) if n else None for n in node.input]
        validation.check_shared_types(node, schema, dtypes, where)

    def _context(self, node: Any, index: int) -> NodeContext:
        reader = node.name or f"{node.op_type}_{index}"
        makers: list[Callable[[], Expr] | None] = []
        values: list[Callable[[], np.ndarray | None]] = []
        sources: list[frozenset[str]] = []
        for name in node.input:
            if name == "":
                makers.append(None)
                values.append(lambda: None)
                sources.append(frozenset())
                continue
            if name not in self.exprs and name not in self.initializers:
                self._expr_of(name, reader)  # raises: nothing defines it
            makers.append(partial(self._expr_of, name, reader))
            values.append(partial(self._value_of, name))
            sources.append(self.sources.get(name, frozenset()))
        where = f"ONNX node {reader!r} ({node.op_type}, opset {self.opset})"
        self._validate(node, where)
        attrs = _attributes(node, where)
        return NodeContext(
            node,
            reader,
            self.opset,
            attrs,
            makers,
            values,
            sources,
            self.max_constant_bytes,
            self.config,
            self._run_subgraph,
        )

    def _run_subgraph(
        self, graph: Any, inputs: Sequence[tuple[Expr, frozenset[str]]], reader: str
    ) -> list[tuple[Expr, frozenset[str]]]:
        """Convert subgraph ``graph`` of node ``reader`` with its inputs bound to ``inputs``
        (each an expression and the graph inputs it comes from): its nodes read its own values
        and, by name, those of the enclosing graphs. Returns its outputs with their sources.
        """
        if len(inputs) != len(graph.input):
            raise OnnxImportError(
                f"ONNX node {reader!r}: its subgraph {graph.name!r} declares "
                f"{len(graph.input)} inputs, {len(inputs)} given"
            )
        validation.check_single_assignment(graph)
        for init in graph.initializer:
            if init.name not in self.initializers:
                what = f"initializer {init.name!r} of subgraph {graph.name!r}"
                self.initializers[init.name] = _tensor_array(init, what)
        outer = (self.graph, self.exprs, self.sources)
        self.exprs, self.sources = dict(self.exprs), dict(self.sources)
        for info, (expr, src) in zip(graph.input, inputs, strict=True):
            self.exprs[info.name], self.sources[info.name] = expr, src
        self.graph = graph
        try:
            for k, node in enumerate(graph.node):
                self._convert(node, k)
            where = f"output of the subgraph {graph.name!r} of node {reader!r}"
            return [
                (self._expr_of(o.name, where), self.sources.get(o.name, frozenset()))
                for o in graph.output
            ]
        finally:
            self.graph, self.exprs, self.sources = outer

    def _convert(self, node: Any, index: int) -> None:
        ctx = self._context(node, index)
        try:
            table = CONVERTERS if node.domain in _ONNX_DOMAINS else DOMAIN_CONVERTERS[node.domain]
            result = table[node.op_type][1](ctx)
        except (OnnxImportError, DynamicValueError):
            raise
        except (
            TVMError,
            ValueError,
            TypeError,
            KeyError,
            IndexError,
            ArithmeticError,
            MemoryError,
        ) as err:
            raise OnnxImportError(f"{ctx.where()}: {err}") from err
        outputs = [result] if not isinstance(result, (list, tuple)) else list(result)
        deps = frozenset().union(*(self.sources.get(n, frozenset()) for n in node.input if n))
        for k, name in enumerate(node.output):
            if not name:
                continue
            if k >= len(outputs) or outputs[k] is None:
                raise ctx.error(f"output {k} ({name!r}) is not supported by the importer")
            self.exprs[name] = outputs[k]
            self.sources[name] = deps

    def check(self) -> None:
        """Check what needs no conversion: single assignment, supported operators."""
        validation.check_single_assignment(self.graph)
        self._check_supported()

    def input_vars(self, run_time: Mapping[str, PartialTensorType]) -> list[Var | RunTimeVar]:
        """The graph inputs as parameters: those in ``run_time`` (dimensions known only at run
        time) typed by it, the others statically.
        """
        out: list[Var | RunTimeVar] = []
        for info in self.graph.input:
            if info.name in run_time:
                out.append(RunTimeVar(info.name, run_time[info.name]))
            elif info.name not in self.initializers:
                out.append(Var(info.name, self._input_type(info)))
        return out

    def run(self) -> tuple[IRModule, dict[str, np.ndarray]]:
        self.check()
        self._declare_inputs()
        for k, node in enumerate(self.graph.node):
            self._convert(node, k)
        outs = [self._expr_of(o.name, "graph output") for o in self.graph.output]
        if not outs:
            raise OnnxImportError("the ONNX graph has no outputs")
        body = outs[0] if len(outs) == 1 else Tuple(tuple(outs))
        func = Function((*self.inputs, *self.weights.values()), body)
        params = {name: self.initializers[name] for name in self.weights}
        return IRModule.from_expr(func), params


def from_onnx(
    model: Any,
    shape_dict: Mapping[str, Any] | None = None,
    dtype: str | Mapping[str, str] = "float32",
    opset: int | None = None,
    freeze_params: bool = False,
    convert_config: Mapping[str, Any] | None = None,
    export_node_renamed_model_path: str | os.PathLike[str] | None = None,
    *,
    shape: Mapping[str, Any] | None = None,
    max_constant_bytes: int | None = None,
) -> tuple[Any, dict[str, np.ndarray]]:
    """Import an ONNX model: ``(mod, params)`` with ``mod["main"]`` the model as a graph
    function and ``params`` its weights by name (TVM's ``relay.frontend.from_onnx``).

    ``model`` is an ``onnx.ModelProto``, a path or the file's bytes. ``shape_dict`` (or
    ``shape``, TVM's keyword) fixes the shapes of inputs with dynamic dimensions; ``dtype``
    is the type of inputs the model leaves untyped (one for all, or by name); ``opset``
    overrides the model's opset. ``convert_config`` sets options of the conversion
    (:data:`CONVERT_CONFIG` lists them with their defaults). With
    ``export_node_renamed_model_path``, a copy of the model whose unnamed nodes are named
    ``<op_type>_<k>`` is saved into that folder (TVM's ``tvm_exported_model_<time>.onnx``).
    With ``freeze_params`` every weight becomes a constant of the graph and ``params`` is
    empty. ``max_constant_bytes`` bounds each constant the import makes (a shape filled, a
    range, folded shape arithmetic; default: ``PassContext`` option
    ``graph.max_constant_bytes``, else 512 MiB): a larger one raises
    :class:`ConstantSizeError` before it is allocated. The model's opset must be one onnx
    knows; nodes are checked against onnx's schemas (attribute types, inputs sharing a type).
    Unsupported operators raise one :class:`UnsupportedOperatorsError` listing each with its
    node name and opset; a ``shape_dict`` name the graph has no input of raises
    :class:`UnknownInputError`.

    A model whose shapes or attributes are computed from the *values* of graph inputs
    (``Reshape``'s ``shape``, ``ReduceSum``'s ``axes`` given as inputs) imports as a
    :class:`~.specialize.ValueSpecializedModule`: ``mod["main"].params`` are typed as
    usual, and an executor (``relay.create_executor("vm", mod).evaluate()(*inputs)``)
    imports and compiles the model for the values of those inputs at each call, cached by
    the values; ``relay.build`` needs their values in ``params``
    (:mod:`.specialize`). ``mod`` is therefore typed ``Any``: an ``IRModule`` or a
    ``ValueSpecializedModule``.

    Examples
    --------
    >>> from onnx import TensorProto, helper
    >>> node = helper.make_node("Relu", ["x"], ["y"])
    >>> graph = helper.make_graph(
    ...     [node], "g",
    ...     [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
    ...     [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    >>> mod, params = from_onnx(helper.make_model(graph))
    >>> str(mod["main"].checked_type), params
    ('Tensor[(1, 4), float32]', {})
    """
    if shape is not None:
        if shape_dict is not None:
            raise OnnxImportError("from_onnx: give input shapes as shape_dict or shape, not both")
        shape_dict = shape
    proto = load_model(model)
    if proto.functions:  # model-local functions: their bodies replace their calls
        from onnx.inliner import inline_local_functions

        proto = inline_local_functions(proto)
    if export_node_renamed_model_path is not None:
        export_renamed_model(proto, export_node_renamed_model_path)
    limit = constant_limit(given=max_constant_bytes)
    options: _Options = (shape_dict, dtype, opset, freeze_params, limit, convert_config)
    importer = _Importer(proto, *options)
    run_time = run_time_inputs(
        importer.graph, importer.shape_dict, importer.initializers, importer.input_dtype
    )
    if run_time:  # shapes known only at run time: import per the shapes each call gives
        importer.check()
        dims = ", ".join(f"{n!r}: {ty}" for n, ty in run_time.items())
        inputs = importer.input_vars(run_time)
        return _specialized(proto, options, importer, inputs, [], list(run_time), dims)
    try:
        return importer.run()
    except DynamicValueError as err:
        names = {v.name for v in importer.inputs}
        if not err.graph_inputs or not set(err.graph_inputs) <= names:
            raise  # the values come from elsewhere (a weight): nothing to specialize on
        reason = str(err).split("; make them initializers")[0]
        return _specialized(proto, options, importer, importer.inputs, err.graph_inputs, [], reason)


def _specialized(
    proto: Any,
    options: _Options,
    importer: _Importer,
    inputs: Sequence[Var | RunTimeVar],
    value_inputs: Sequence[str],
    shape_inputs: Sequence[str],
    reason: str,
) -> tuple[ValueSpecializedModule, dict[str, np.ndarray]]:
    """The model as a :class:`ValueSpecializedModule` imported per the values of
    ``value_inputs`` and the shapes of ``shape_inputs`` at each call.
    """
    weights = importer.weight_vars()
    params_in = (*inputs, *weights)
    model = type(proto)()
    model.CopyFrom(proto)  # the caller's model may change after the import; this one does not
    shape_dict, rest = dict(options[0] or {}), options[1:]

    def import_bound(
        bound: Mapping[str, np.ndarray], shapes: Mapping[str, tuple[int, ...]]
    ) -> tuple[IRModule, dict[str, np.ndarray]]:
        return _Importer(model, {**shape_dict, **shapes}, *rest, bound=bound).run()

    def make() -> Specializer:
        return Specializer(import_bound, params_in, value_inputs, reason, shape_inputs)

    digest = hashlib.sha256(model.SerializeToString()).hexdigest()
    specializer = intern_specializer((digest, repr(options)), make)
    func = ValueSpecializedFunction(params_in, specializer)
    params = {w.name: importer.initializers[w.name] for w in weights}
    return ValueSpecializedModule({"main": func}), params


def _named_nodes(graph: Any, within: str = "") -> list[tuple[Any, str]]:
    """The nodes of ``graph`` with their names (``<op_type>_<k>`` for an unnamed one) and,
    after each node, those of its subgraphs (``If``'s branches, ``Loop``'s body), recursively.
    """
    from onnx import AttributeProto

    out = []
    for k, node in enumerate(graph.node):
        out.append((node, (node.name or f"{node.op_type}_{k}") + within))
        for a in node.attribute:
            graphs = [a.g] if a.type == AttributeProto.GRAPH else list(a.graphs)
            for g in graphs:
                out.extend(_named_nodes(g, f" (in subgraph {g.name!r}){within}"))
    return out


def _all_nodes(graph: Any) -> list[Any]:
    """The nodes of ``graph`` and of its subgraphs, recursively."""
    return [node for node, _ in _named_nodes(graph)]


def _convert_config(config: Mapping[str, Any] | None) -> dict[str, Any]:
    """``config`` over :data:`CONVERT_CONFIG`'s defaults; an unknown option raises."""
    if config is None:
        return dict(CONVERT_CONFIG)
    if not isinstance(config, Mapping):
        raise OnnxImportError(
            f"from_onnx: convert_config must be a dict, got {type(config).__name__}"
        )
    unknown = sorted(set(config) - set(CONVERT_CONFIG))
    if unknown:
        raise OnnxImportError(
            f"from_onnx: unknown convert_config option(s) {unknown}; known: "
            f"{sorted(CONVERT_CONFIG)}"
        )
    return {**CONVERT_CONFIG, **config}


def _checked_type(name: str, dims: Any, dtype: str, source: str) -> TensorType:
    """Graph input ``name``'s type; an error naming it for a bad or too large shape (dimensions
    >= 0, at most ``MAX_ELEMENTS`` elements: ``TensorType``'s own checks).
    """
    try:
        return TensorType(tuple(int(d) for d in dims), dtype)
    except (TypeError, ValueError) as err:
        raise OnnxImportError(
            f"{source} graph input {name!r} the shape {dims!r}; expected a sequence of integers "
            f"(dimensions >= 0, at most {MAX_ELEMENTS} (2**63 - 1) elements in all): {err}"
        ) from None
