"""Checks of an ONNX model against ONNX's own rules, made before its nodes are converted.

* the opset of the default domain is one the installed onnx knows (1 to
  ``onnx.defs.onnx_opset_version()``);
* a node of a model older than opset :data:`OLDEST_OPSET` uses the same definition of its
  operator as opset :data:`OLDEST_OPSET` (older definitions, with ``consumed_inputs`` and
  ``broadcast``/``axis`` broadcasting, are not what the converters implement);
* every attribute has the type the operator's schema declares (an INT where a FLOAT is
  declared is taken, as ONNX Runtime takes it);
* inputs that share a type parameter of the schema (``T`` of ``Add``'s ``A`` and ``B``, of
  ``Concat``'s inputs, ``Where``'s ``X`` and ``Y``, ...) have one element type;
* every value is written once (single static assignment): no two nodes write the same name,
  and no node writes a graph input or an initializer.

The rules are read from onnx's operator schemas (``onnx.defs``), so they follow the installed
onnx; an operator onnx has no schema for is left to its converter.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from .errors import OnnxImportError

__all__ = [
    "OLDEST_OPSET",
    "check_attribute_types",
    "check_operator_version",
    "check_opset",
    "check_shared_types",
    "check_single_assignment",
    "newest_opset",
    "schema_of",
]

#: The oldest opset whose operator definitions the importer reads (``consumed_inputs`` and
#: the legacy ``broadcast`` attribute went away at opset 6 and 7).
OLDEST_OPSET = 6

#: Attribute types taken where the schema declares another: ``{(given, declared)}``.
_WIDENED = {("INT", "FLOAT"), ("INTS", "FLOATS")}


def newest_opset() -> int:
    """The newest opset of the default domain the installed onnx knows."""
    import onnx.defs

    return int(onnx.defs.onnx_opset_version())


def check_opset(opset: int, source: str) -> None:
    """Raise unless the default-domain ``opset`` (from ``source``: the model, or an argument)
    is one onnx knows.
    """
    import onnx

    newest = newest_opset()
    if not 1 <= opset <= newest:
        raise OnnxImportError(
            f"{source} gives ONNX opset {opset} (default domain), which the installed onnx "
            f"{onnx.__version__} does not know: it knows opsets 1 to {newest}. The importer "
            f"reads opsets {OLDEST_OPSET} to {newest} (and older models whose operators did "
            f"not change by opset {OLDEST_OPSET}); re-export the model with one of them"
        )


@cache
def schema_of(op_type: str, opset: int) -> Any:
    """``onnx.defs``' schema of ``op_type`` at ``opset`` (default domain), or None."""
    import onnx.defs

    try:
        return onnx.defs.get_schema(op_type, opset, "")
    except onnx.defs.SchemaError:
        return None


def check_operator_version(op_type: str, opset: int, where: str) -> None:
    """Raise if a node of a model at ``opset`` uses an older definition of ``op_type`` than
    the one in force at :data:`OLDEST_OPSET`.
    """
    if opset >= OLDEST_OPSET:
        return
    used, oldest = schema_of(op_type, opset), schema_of(op_type, OLDEST_OPSET)
    if used is None or oldest is None or used.since_version == oldest.since_version:
        return
    raise OnnxImportError(
        f"{where}: the model uses {op_type}-{used.since_version}, the definition of {op_type} "
        f"at opset {opset}, and the importer reads the definitions from opset {OLDEST_OPSET} "
        f"on ({op_type}-{oldest.since_version} and later); upgrade the model, e.g. "
        "onnx.version_converter.convert_version(model, 13)"
    )


def _attribute_text(attribute: Any) -> str:
    from onnx import helper

    try:
        value = helper.get_attribute_value(attribute)
    except Exception:  # an undefined type: nothing to show
        return ""
    text = repr(value if not isinstance(value, list) else list(value))
    return f" ({text[:60]}{'...' if len(text) > 60 else ''})"  # noqa: PLR2004


def check_attribute_types(node: Any, schema: Any, where: str) -> None:
    """Raise if an attribute of ``node`` has another type than ``schema`` declares."""
    from onnx import AttributeProto

    if schema is None:
        return
    for attribute in node.attribute:
        declared = schema.attributes.get(attribute.name)
        if declared is None:
            continue
        want = declared.type.name
        got = AttributeProto.AttributeType.Name(attribute.type)
        if got == want or (got, want) in _WIDENED:
            continue
        raise OnnxImportError(
            f"{where}: attribute {attribute.name!r} is of type {got}{_attribute_text(attribute)}, "
            f"but {node.op_type}'s schema declares {want}; write it as {want} (onnx.helper."
            "make_attribute infers the type from the Python value: ints for INTS)"
        )


def check_shared_types(node: Any, schema: Any, dtypes: Sequence[str | None], where: str) -> None:
    """Raise if two inputs of ``node`` that share a type parameter of ``schema`` differ in
    element type; ``dtypes`` holds each input's element type (None: absent or not a tensor).
    """
    if schema is None or not schema.inputs:
        return
    params = {c.type_param_str for c in schema.type_constraints}
    formals = list(schema.inputs)
    variadic = formals[-1].option.name == "Variadic"
    seen: dict[str, tuple[str, str]] = {}  # type parameter -> (input name, element type)
    for i, (name, dtype) in enumerate(zip(node.input, dtypes, strict=True)):
        if dtype is None:
            continue
        if i >= len(formals) and not variadic:
            break
        formal = formals[min(i, len(formals) - 1)]
        if formal.type_str not in params:
            continue
        if i >= len(formals) - 1 and variadic and not formal.is_homogeneous:
            continue
        first = seen.setdefault(formal.type_str, (name, dtype))
        if first[1] != dtype:
            raise OnnxImportError(
                f"{where}: inputs {first[0]!r} ({first[1]}) and {name!r} ({dtype}) must have "
                f"the same element type (they share the type parameter {formal.type_str} of "
                f"{node.op_type}); make them match, e.g. with a Cast node"
            )


def check_single_assignment(graph: Any) -> None:
    """Raise if two nodes of ``graph`` write the same value, or a node writes a graph input
    or an initializer.
    """
    given = {i.name: "a graph input" for i in graph.input}
    given.update({t.name: "an initializer" for t in graph.initializer})
    writer: dict[str, str] = {}
    for k, node in enumerate(graph.node):
        label = f"{node.name or f'{node.op_type}_{k}'!r} ({node.op_type})"
        for name in node.output:
            if not name:
                continue
            if name in given:
                raise OnnxImportError(
                    f"ONNX node {label} writes {name!r}, which is {given[name]}; an ONNX graph "
                    "writes each value once (single static assignment): rename the output"
                )
            if writer.get(name) == label:
                raise OnnxImportError(f"ONNX node {label} writes {name!r} twice")
            if name in writer:
                raise OnnxImportError(
                    f"ONNX nodes {writer[name]} and {label} both write {name!r}; an ONNX graph "
                    "writes each value once (single static assignment): rename one output"
                )
            writer[name] = label
