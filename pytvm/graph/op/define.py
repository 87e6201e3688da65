"""``define_op``: register an operator from its tensor-expression lowering.

The type relation defaults to running the lowering on placeholders of the argument types and
reading the result's shape and dtype, so an operator's shape rules are written once (in
``pytvm.topi``) and a graph is typed exactly as it will be compiled.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from ... import te
from ...ffi.errors import TVMTypeError, TVMValueError
from ...topi._shape import const_int
from ..attrs import Attrs
from ..ty import TensorType, TupleType, Type
from .registry import Compute, Evaluate, OpDef, OpPattern, Relation, register_op

__all__ = ["define_op", "te_inputs", "type_of_tensors"]


def te_inputs(types: Sequence[Type], prefix: str = "p") -> list[Any]:
    """Placeholders for ``types`` (a tuple type becomes a list of placeholders)."""
    out: list[Any] = []
    for i, ty in enumerate(types):
        if isinstance(ty, TupleType):
            out.append(te_inputs(ty.fields, f"{prefix}{i}_"))
        else:
            out.append(te.placeholder(ty.shape, ty.dtype, f"{prefix}{i}"))
    return out


def _tensor_type(t: Any) -> TensorType:
    dims = []
    for d in t.shape:
        value = const_int(d)
        if value is None:
            raise TVMValueError(f"the output dimension {d} is not a constant")
        dims.append(value)
    return TensorType(tuple(dims), str(t.dtype))


def type_of_tensors(result: Any) -> Type:
    """The graph type of a lowering's result (a tensor, or a list of tensors: a tuple)."""
    if isinstance(result, (list, tuple)):
        return TupleType(tuple(_tensor_type(t) for t in result))
    return _tensor_type(result)


def _infer_from(compute: Compute) -> Relation:
    """The relation of ``compute``: its result's type on placeholders of the argument types,
    remembered per (argument types, attributes) since a model repeats its layer shapes.
    """

    @lru_cache(maxsize=4096)
    def typed(types: tuple[Type, ...], attrs: Attrs) -> Type:
        return type_of_tensors(compute(te_inputs(types), attrs, None))  # type: ignore[arg-type]

    def infer(types: Sequence[Type], attrs: Attrs) -> Type:
        return typed(tuple(types), attrs)

    return infer


def define_op(
    name: str,
    num_inputs: int,
    pattern: OpPattern,
    compute: Compute,
    evaluate: Evaluate | None = None,
    infer: Relation | None = None,
    doc: str = "",
) -> OpDef:
    """Register ``name`` lowered by ``compute``; its relation is ``infer`` or derived from it."""
    if not callable(compute):
        raise TVMTypeError(f"define_op({name!r}): compute must be callable")
    return register_op(
        name, num_inputs, infer or _infer_from(compute), pattern, evaluate, compute, doc
    )
