"""The operator registry: each graph operator's type relation, fusion pattern and lowering.

An operator is registered once with :func:`register_op`; its type relation runs when a
``Call`` is built (so a shape that cannot be inferred fails at the node that causes it), its
pattern drives operator fusion, its ``compute`` lowers it to tensor expressions (``pytvm.topi``)
and its ``evaluate`` (numpy) folds constants and serves as the reference interpreter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

import numpy as np

from ...ffi.errors import TVMKeyError, TVMValueError
from ..attrs import Attrs
from ..ty import Type

__all__ = ["OpDef", "OpPattern", "get_op", "list_ops", "register_op"]


class OpPattern(IntEnum):
    """How an operator fuses (TVM's ``OpPatternKind``; smaller fuses more freely)."""

    ELEMWISE = 0  # out[i] = f(in[i])
    BROADCAST = 1  # out[i] = f(in[broadcast(i)])
    INJECTIVE = 2  # each output element reads a few input elements (layout ops)
    COMM_REDUCE = 3  # a commutative reduction
    OUT_ELEMWISE_FUSABLE = 4  # conv, dense: elementwise ops on the output fuse into it
    TUPLE = 7  # makes a tuple
    OPAQUE = 8  # fuses with nothing


#: ``infer(arg_types, attrs) -> Type``: raises when the arguments do not fit the operator.
Relation = Callable[[Sequence[Type], Attrs], Type]
#: ``evaluate(arrays, attrs) -> array or tuple of arrays``: numpy semantics of the operator.
Evaluate = Callable[[Sequence[np.ndarray], Attrs], Any]
#: ``compute(te_tensors, attrs, out_type) -> te.Tensor or list``: the tensor-expression lowering.
Compute = Callable[[Sequence[Any], Attrs, Type], Any]


@dataclass(frozen=True, slots=True)
class OpDef:
    """One operator: its name, arity (``-1``: any), relation, pattern and implementations."""

    name: str
    num_inputs: int
    infer: Relation
    pattern: OpPattern
    evaluate: Evaluate | None = None
    compute: Compute | None = None
    doc: str = ""


_OPS: dict[str, OpDef] = {}


def register_op(
    name: str,
    num_inputs: int,
    infer: Relation,
    pattern: OpPattern,
    evaluate: Evaluate | None = None,
    compute: Compute | None = None,
    doc: str = "",
) -> OpDef:
    """Register operator ``name``; registering a name twice is an error."""
    if name in _OPS:
        raise TVMValueError(f"operator {name!r} is already registered")
    op = OpDef(name, num_inputs, infer, pattern, evaluate, compute, doc)
    _OPS[name] = op
    return op


def get_op(name: str) -> OpDef:
    """The operator registered as ``name``."""
    try:
        return _OPS[name]
    except KeyError:
        raise TVMKeyError(
            f"no graph operator {name!r}; registered operators: {', '.join(sorted(_OPS))}"
        ) from None


def list_ops() -> list[str]:
    """Names of all registered operators, sorted."""
    return sorted(_OPS)
