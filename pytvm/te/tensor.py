"""Tensors and the operations that produce them: placeholders (inputs) and computations.

A ``Tensor`` is output ``value_index`` of an ``Operation``; indexing it (``A[i, j]``) gives a
``ProducerLoad`` expression, so tensor expressions are ordinary loop-IR expressions until a
schedule lowers them onto buffers.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..ffi.errors import TVMIndexError, TVMTypeError
from ..tir import generic as _generic
from ..tir.expr import (
    DataProducer,
    ExprLike,
    ExprOp,
    IterVar,
    PrimExpr,
    ProducerLoad,
    Reduce,
    const,
    convert,
)
from ..tir.functor import IRVisitor

__all__ = ["ComputeOp", "Operation", "PlaceholderOp", "Tensor", "TensorSlice"]


class Operation:
    """Base of operations: a name, a tag, attributes and ``num_outputs`` output tensors."""

    __slots__ = ()
    name: str
    tag: str
    attrs: Mapping[str, Any]

    @property
    def num_outputs(self) -> int:
        """How many tensors the operation produces."""
        return 1

    def output(self, index: int) -> Tensor:
        """Output tensor ``index``."""
        if not 0 <= index < self.num_outputs:
            raise TVMIndexError(
                f"operation {self.name} has {self.num_outputs} output(s); no output {index}"
            )
        return Tensor(self, index)

    @property
    def input_tensors(self) -> tuple[Tensor, ...]:
        """Tensors the operation reads, in order of first use."""
        return ()

    @property
    def axis(self) -> tuple[IterVar, ...]:
        """The data-parallel axes (none for an input)."""
        return ()

    @property
    def reduce_axis(self) -> tuple[IterVar, ...]:
        """The reduction axes (none for an input)."""
        return ()

    @property
    def body(self) -> tuple[PrimExpr, ...]:
        """What each output computes (nothing for an input)."""
        return ()

    def output_shape(self, index: int) -> tuple[PrimExpr, ...]:
        """Shape of output ``index``."""
        raise NotImplementedError

    def output_dtype(self, index: int) -> str:
        """Element type of output ``index``."""
        raise NotImplementedError

    def __str__(self) -> str:
        return f"{type(self).__name__}({self.name})"

    __repr__ = __str__

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle by fields (read-only attribute maps travel as dicts)."""
        assert dataclasses.is_dataclass(self), "operations are dataclasses"
        state = {
            f.name: dict(v) if isinstance(v, MappingProxyType) else v
            for f in dataclasses.fields(self)
            if f.init
            for v in (getattr(self, f.name),)
        }
        return (_rebuild_operation, (type(self), state))


def _rebuild_operation(cls: type[Operation], state: dict[str, Any]) -> Operation:
    """An unpickled operation."""
    return cls(**state)


@dataclass(frozen=True, slots=True, eq=False)
class PlaceholderOp(Operation):
    """An input: data the kernel receives."""

    name: str
    shape: tuple[PrimExpr, ...]
    dtype: str
    tag: str = ""
    attrs: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))

    def output_shape(self, index: int) -> tuple[PrimExpr, ...]:
        """The placeholder's shape."""
        return self.shape

    def output_dtype(self, index: int) -> str:
        """The placeholder's element type."""
        return self.dtype


@dataclass(frozen=True, slots=True, eq=False)
class ComputeOp(Operation):
    """``out[axis] = body`` for every point of ``axis`` (one body per output)."""

    name: str
    tag: str
    attrs: Mapping[str, Any]
    axis: tuple[IterVar, ...]
    body: tuple[PrimExpr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "attrs", MappingProxyType(dict(self.attrs)))

    @property
    def num_outputs(self) -> int:
        """One output per body expression."""
        return len(self.body)

    @property
    def reduce_axis(self) -> tuple[IterVar, ...]:
        """The reduction axes (empty when the body is not a reduction)."""
        first = self.body[0]
        return first.axis if isinstance(first, Reduce) else ()

    @property
    def input_tensors(self) -> tuple[Tensor, ...]:
        """Tensors read by the body."""
        return _tensors_read(self.body)

    def output_shape(self, index: int) -> tuple[PrimExpr, ...]:
        """Extents of the axes."""
        return tuple(iv.dom.extent for iv in self.axis if iv.dom is not None)

    def output_dtype(self, index: int) -> str:
        """Element type of body ``index``."""
        return self.body[index].dtype


@dataclass(frozen=True, slots=True, eq=False)
class Tensor(DataProducer):
    """Output ``value_index`` of ``op``; ``A[i, j]`` reads one element.

    Two tensors are equal when they are the same output of the same operation
    (``T.op.output(0) == T``), and hash alike then. Python's arithmetic operators combine a
    tensor with a number, an expression or another tensor into a new elementwise or
    broadcasting compute, through :mod:`pytvm.tir.generic` as bound by ``pytvm.topi``.
    """

    op: Operation
    value_index: int = 0

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Tensor):
            return NotImplemented
        return self is other or (self.op is other.op and self.value_index == other.value_index)

    def __ne__(self, other: object) -> bool:
        if not isinstance(other, Tensor):
            return NotImplemented
        return not self == other

    def __hash__(self) -> int:
        return hash((self.op, self.value_index))

    def same_as(self, other: object) -> bool:
        """Whether ``other`` is this very object."""
        return self is other

    # Python operators build computes, as TVM's tensor overloads do.
    def __add__(self, other: Any) -> Any:
        return _arith("add", self, other)

    def __radd__(self, other: Any) -> Any:
        return _arith("add", other, self)

    def __sub__(self, other: Any) -> Any:
        return _arith("subtract", self, other)

    def __rsub__(self, other: Any) -> Any:
        return _arith("subtract", other, self)

    def __mul__(self, other: Any) -> Any:
        return _arith("multiply", self, other)

    def __rmul__(self, other: Any) -> Any:
        return _arith("multiply", other, self)

    def __truediv__(self, other: Any) -> Any:
        return _arith("divide", self, other)

    def __rtruediv__(self, other: Any) -> Any:
        return _arith("divide", other, self)

    def __floordiv__(self, other: Any) -> Any:
        return _arith("floordiv", self, other)

    def __rfloordiv__(self, other: Any) -> Any:
        return _arith("floordiv", other, self)

    def __neg__(self) -> Any:
        return _arith("multiply", self, const(-1, self.dtype))

    def astype(self, dtype: str) -> Any:
        """The tensor converted elementwise to ``dtype`` (a new compute)."""
        _require_tensor_ops("astype")
        return _generic.cast(self, dtype)

    @property
    def shape(self) -> tuple[PrimExpr, ...]:
        """Extent of each dimension."""
        return self.op.output_shape(self.value_index)

    @property
    def dtype(self) -> str:
        """Element type."""
        return self.op.output_dtype(self.value_index)

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    @property
    def name(self) -> str:
        """The operation's name (with ``.v<index>`` for outputs past the first)."""
        return self.op.name if self.value_index == 0 else f"{self.op.name}.v{self.value_index}"

    def __getitem__(self, indices: Any) -> Any:
        if not isinstance(indices, tuple):
            indices = (indices,)
        return TensorSlice(self, ()).__getitem__(indices)

    def __call__(self, *indices: ExprLike) -> PrimExpr:
        """``A(i, j)`` is ``A[i, j]``."""
        return self[indices]  # type: ignore[no-any-return]

    def __str__(self) -> str:
        shape = ", ".join(str(s) for s in self.shape)
        return f"Tensor(shape=[{shape}], op.name={self.op.name})"

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False)
class TensorSlice(ExprOp):
    """A partly indexed tensor (``A[i]`` of a 2-d ``A``); a full index gives an expression."""

    tensor: Tensor
    indices: tuple[PrimExpr, ...]

    def __getitem__(self, indices: Any) -> Any:
        if not isinstance(indices, tuple):
            indices = (indices,)
        if any(isinstance(i, slice) for i in indices):
            raise TVMTypeError(
                f"{self.tensor.name}[...]: slices are not supported, index with axes"
            )
        full = self.indices + tuple(convert(i) for i in indices)
        ndim = self.tensor.ndim
        if len(full) > ndim:
            raise TVMIndexError(
                f"{self.tensor.name} has {ndim} dimension(s), indexed with {len(full)} indices"
            )
        if len(full) < ndim:
            return TensorSlice(self.tensor, full)
        return ProducerLoad(self.tensor, full)

    def asobject(self) -> PrimExpr:
        """The load this slice stands for (only when fully indexed)."""
        if len(self.indices) != self.tensor.ndim:
            raise TVMIndexError(
                f"{self.tensor.name} has {self.tensor.ndim} dimension(s); {len(self.indices)} given"
            )
        return ProducerLoad(self.tensor, self.indices)

    @property
    def dtype(self) -> str:
        """The tensor's element type."""
        return self.tensor.dtype

    __hash__ = object.__hash__


def _require_tensor_ops(what: str) -> None:
    if _generic.__op_priority__ == 0:
        raise TVMTypeError(
            f"te.Tensor {what}: arithmetic on tensors builds topi computes; import pytvm.topi "
            "first (or write the te.compute yourself)"
        )


def _arith(name: str, lhs: Any, rhs: Any) -> Any:
    """``generic.<name>(lhs, rhs)`` once a layer has taught it tensors."""
    _require_tensor_ops(name)
    return getattr(_generic, name)(lhs, rhs)


class _TensorCollector(IRVisitor):
    def __init__(self) -> None:
        self.found: dict[Tensor, None] = {}  # insertion-ordered set

    def visit_ProducerLoad(self, node: ProducerLoad) -> None:
        self.found.setdefault(node.producer)
        self.generic_visit(node)


def _tensors_read(body: Sequence[PrimExpr]) -> tuple[Tensor, ...]:
    collector = _TensorCollector()
    for expr in body:
        collector.visit(expr)
    return tuple(collector.found)
