"""Graph IR nodes: variables, constants, operator calls, tuples and functions.

Nodes are frozen and typed when built: a ``Call`` runs its operator's type relation at
construction, so every node carries ``checked_type`` and a bad shape fails where it arises.
Equality is identity; structural comparison is in :mod:`pytvm.graph.structural`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..ffi.errors import TVMTypeError, TVMValueError
from .attrs import Attrs
from .op import get_op
from .ty import TensorType, TupleType, Type, tensor_type_of

__all__ = [
    "Call",
    "Constant",
    "Expr",
    "Function",
    "Tuple",
    "TupleGetItem",
    "Var",
    "call",
    "const",
]


@dataclass(frozen=True, slots=True, eq=False)
class Var:
    """A function parameter: a graph input or a weight bound as a parameter."""

    name: str
    type_annotation: Type

    @property
    def checked_type(self) -> Type:
        """The declared type."""
        return self.type_annotation


@dataclass(frozen=True, slots=True, eq=False)
class Constant:
    """A constant tensor (weights after binding, folded values); its array is read-only."""

    data: np.ndarray
    checked_type: TensorType = field(init=False)

    def __post_init__(self) -> None:
        data = np.array(self.data, copy=True) if self.data.flags.writeable else self.data
        data.flags.writeable = False
        object.__setattr__(self, "data", data)
        object.__setattr__(self, "checked_type", tensor_type_of(data))


@dataclass(frozen=True, slots=True, eq=False)
class Call:
    """``op(args..., attrs)``; ``name`` is the source node's name (for messages and tables)."""

    op: str | Function
    args: Sequence[Expr]
    attrs: Attrs = field(default_factory=Attrs)
    name: str = ""
    checked_type: Type = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "args", tuple(self.args))
        for i, arg in enumerate(self.args):
            if not isinstance(arg, (Var, Constant, Call, Tuple, TupleGetItem)):
                raise TVMTypeError(f"{self.op_name}: argument {i} is {type(arg).__name__}")
        if isinstance(self.op, Function):
            object.__setattr__(self, "checked_type", self._call_function(self.op))
            return
        opdef = get_op(self.op)
        where = self.op + (f" (node {self.name!r})" if self.name else "")
        if opdef.num_inputs >= 0 and len(self.args) != opdef.num_inputs:
            raise TVMValueError(
                f"{where}: takes {opdef.num_inputs} argument(s), got {len(self.args)}"
            )
        try:
            ty = opdef.infer([a.checked_type for a in self.args], self.attrs)
        except (TVMValueError, TVMTypeError) as err:
            args = ", ".join(str(a.checked_type) for a in self.args)
            attrs = f"; {self.attrs}" if len(self.attrs) else ""
            raise type(err)(f"{where}: {err} (arguments: {args}{attrs})") from None
        object.__setattr__(self, "checked_type", ty)

    @property
    def op_name(self) -> str:
        """The operator's name, or ``fn:<name>`` for a call of a function."""
        if isinstance(self.op, Function):
            return "fn:" + str(self.op.attrs.get("global_symbol", "") or self.name or "anonymous")
        return self.op

    def _call_function(self, func: Function) -> Type:
        if len(func.params) != len(self.args):
            raise TVMValueError(
                f"{self.op_name}: the function takes {len(func.params)} argument(s), "
                f"got {len(self.args)}"
            )
        for p, a in zip(func.params, self.args, strict=True):
            if p.checked_type != a.checked_type:
                raise TVMTypeError(
                    f"{self.op_name}: parameter {p.name} has type {p.checked_type}, "
                    f"the argument {a.checked_type}"
                )
        return func.body.checked_type


@dataclass(frozen=True, slots=True, eq=False)
class Tuple:
    """A tuple of values (several outputs of a function, the inputs of ``concatenate``)."""

    fields: Sequence[Expr]
    checked_type: TupleType = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "fields", tuple(self.fields))
        object.__setattr__(
            self, "checked_type", TupleType(tuple(f.checked_type for f in self.fields))
        )


@dataclass(frozen=True, slots=True, eq=False)
class TupleGetItem:
    """Field ``index`` of a tuple-valued expression."""

    tuple_value: Expr
    index: int
    checked_type: Type = field(init=False)

    def __post_init__(self) -> None:
        ty = self.tuple_value.checked_type
        if not isinstance(ty, TupleType):
            raise TVMTypeError(f"TupleGetItem: the value has type {ty}, not a tuple")
        if not 0 <= self.index < len(ty.fields):
            raise TVMValueError(f"TupleGetItem: index {self.index} out of range for {ty}")
        object.__setattr__(self, "checked_type", ty.fields[self.index])


Expr = Var | Constant | Call | Tuple | TupleGetItem


@dataclass(frozen=True, slots=True, eq=False)
class Function:
    """``fn(params) { body }``; ``attrs`` mark primitive (fused) and external functions."""

    params: Sequence[Var]
    body: Expr
    attrs: Attrs = field(default_factory=Attrs)

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", tuple(self.params))

    @property
    def checked_type(self) -> Type:
        """The type of the result."""
        return self.body.checked_type

    def with_attr(self, **kwargs: Any) -> Function:
        """A copy with ``kwargs`` added to the attributes."""
        return Function(self.params, self.body, self.attrs.with_values(**kwargs))


def call(op: str, *args: Expr, name: str = "", **attrs: Any) -> Call:
    """Build ``op(*args)`` with keyword attributes: ``call("nn.relu", x)``."""
    return Call(op, args, Attrs.of(attrs), name)


def const(value: Any, dtype: str | None = None) -> Constant:
    """A constant from a number, list or array (``const(1.0)``, ``const([2, 3], "int64")``)."""
    return Constant(np.asarray(value, dtype=dtype))
