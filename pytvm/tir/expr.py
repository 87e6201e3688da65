"""Expressions of the loop IR: constants, variables, arithmetic, loads, calls, vectors, reductions.

Every node is a frozen dataclass. Python operators build expressions, as in TVM: ``i * 4 + j``
is an ``Add`` of a ``Mul``, and ``i == j`` an ``EQ`` (whose truth value is "the same node", so
nodes can key dicts). Nodes therefore compare by identity; structural comparison is
:func:`pytvm.tir.structural_equal`. Mixed operand types follow TVM's rules: a Python number takes
the other side's type, an integer meets a float by becoming a float, and a narrower integer
widens (see :func:`binary`).

The nodes Python's operators build, and :func:`binary`, :func:`const` and :func:`convert`, are in
``expr_operators``; the type-string helpers are in ``dtype``; this module holds variables, string
constants, selects, lets, calls, ramps, buffers and loads, ranges, axes and reductions, and
exports them all.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar

from ..ffi.errors import TVMTypeError, TVMValueError
from .dtype import canonical, is_float, is_int, lanes_of, scalar_of, with_lanes
from .expr_operators import (
    _MIN_LANES,
    EQ,
    GE,
    GT,
    LE,
    LT,
    NE,
    Add,
    And,
    BinaryOp,
    Broadcast,
    Cast,
    CmpOp,
    DataProducer,
    Div,
    ExprLike,
    ExprOp,
    FloatImm,
    FloorDiv,
    FloorMod,
    IntImm,
    Max,
    Min,
    Mod,
    Mul,
    Not,
    Or,
    PrimExpr,
    Sub,
    binary,
    const,
    convert,
    match_types,
    set_text_hook,
)
from .intrinsic import Op

__all__ = [
    "EQ",
    "GE",
    "GT",
    "LE",
    "LT",
    "NE",
    "Add",
    "And",
    "BinaryOp",
    "Broadcast",
    "Buffer",
    "BufferLoad",
    "Call",
    "Cast",
    "CmpOp",
    "CommReducer",
    "DataProducer",
    "Div",
    "ExprLike",
    "ExprOp",
    "FloatImm",
    "FloorDiv",
    "FloorMod",
    "IntImm",
    "IterVar",
    "IterVarType",
    "Let",
    "Max",
    "Min",
    "Mod",
    "Mul",
    "Not",
    "Or",
    "PrimExpr",
    "ProducerLoad",
    "Ramp",
    "Range",
    "Reduce",
    "Select",
    "StringImm",
    "Sub",
    "Var",
    "binary",
    "const",
    "convert",
    "is_float",
    "is_int",
    "lanes_of",
    "match_types",
    "scalar_of",
    "set_text_hook",
    "with_lanes",
]


# ----------------------------------------------------------------------------- leaves


@dataclass(frozen=True, slots=True, eq=False)
class Var(PrimExpr):
    """A variable: a loop index, a symbolic shape dimension, a buffer's data pointer."""

    name: str
    dtype: str = "int32"

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", canonical(self.dtype))


@dataclass(frozen=True, slots=True, eq=False)
class StringImm(PrimExpr):
    """A string constant (an argument of intrinsic calls)."""

    value: str
    dtype: str = "handle"


# ----------------------------------------------------------------------------- choices and calls


@dataclass(frozen=True, slots=True, eq=False)
class Select(PrimExpr):
    """``condition ? true_value : false_value`` (both sides may be evaluated)."""

    condition: PrimExpr
    true_value: PrimExpr
    false_value: PrimExpr
    dtype: str = ""

    def __post_init__(self) -> None:
        if self.true_value.dtype != self.false_value.dtype:
            raise TVMTypeError(
                f"Select of mismatched types {self.true_value.dtype} and {self.false_value.dtype}"
            )
        object.__setattr__(self, "dtype", self.true_value.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class Let(PrimExpr):
    """``body`` with ``var`` bound to ``value``."""

    var: Var
    value: PrimExpr
    body: PrimExpr
    dtype: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", self.body.dtype)


@dataclass(frozen=True, slots=True, eq=False)
class Call(PrimExpr):
    """A call of an intrinsic (``"tir.exp"``, ``"tir.if_then_else"``, ...) or extern function.

    ``op`` is an :class:`~pytvm.tir.intrinsic.Op` (a name given as a string becomes one), so
    ``call.op.name`` and ``call.op == "tir.exp"`` both work.
    """

    dtype: str
    op: str
    args: tuple[PrimExpr, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.op, str):
            raise TVMTypeError(f"Call: op must be an Op or its name, got {self.op!r}")
        if not isinstance(self.op, Op):
            object.__setattr__(self, "op", Op(self.op))
        object.__setattr__(self, "dtype", canonical(self.dtype))
        object.__setattr__(self, "args", tuple(self.args))


# ----------------------------------------------------------------------------- vectors


@dataclass(frozen=True, slots=True, eq=False)
class Ramp(PrimExpr):
    """The vector ``base, base + stride, ..., base + (lanes - 1) * stride``."""

    base: PrimExpr
    stride: PrimExpr
    lanes: int
    dtype: str = ""

    def __post_init__(self) -> None:
        if self.lanes < _MIN_LANES:
            raise TVMValueError(f"Ramp needs at least 2 lanes, got {self.lanes}")
        object.__setattr__(self, "dtype", with_lanes(self.base.dtype, self.lanes))


# ----------------------------------------------------------------------------- memory


@dataclass(frozen=True, slots=True, eq=False)
class Buffer:
    """Memory holding ``shape`` elements of ``dtype`` at ``data`` (strides empty: compact).

    ``scope`` is ``"global"`` for arguments and heap workspaces, ``"local"`` for small buffers
    a kernel keeps on its stack. ``data_alignment`` is in bytes; ``elem_offset`` (in elements)
    is a multiple of ``offset_factor`` when that is not 0. ``buffer_type`` is ``""`` or
    ``"auto_broadcast"`` (a dimension of extent 1 reads index 0).
    """

    data: Var
    dtype: str
    shape: tuple[PrimExpr, ...]
    name: str
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr | None = None
    scope: str = "global"
    data_alignment: int = 64
    offset_factor: int = 0
    buffer_type: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "shape", tuple(self.shape))
        object.__setattr__(self, "strides", tuple(self.strides))
        if self.strides and len(self.strides) != len(self.shape):
            raise TVMValueError(
                f"buffer {self.name}: {len(self.strides)} strides for {len(self.shape)} dims"
            )
        if self.data.dtype != "handle":
            raise TVMValueError(f"buffer {self.name}: data var must be a handle")

    @property
    def ndim(self) -> int:
        """Number of dimensions."""
        return len(self.shape)

    def vload(self, indices: Sequence[ExprLike]) -> PrimExpr:
        """A load of ``self[indices]``."""
        return BufferLoad(self, tuple(convert(i) for i in indices))

    def __str__(self) -> str:
        return self.name

    __repr__ = __str__


@dataclass(frozen=True, slots=True, eq=False)
class BufferLoad(PrimExpr):
    """``buffer[indices]``; a Ramp index loads a vector."""

    buffer: Buffer
    indices: tuple[PrimExpr, ...]
    dtype: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", tuple(self.indices))
        lanes = max((lanes_of(i.dtype) for i in self.indices), default=1)
        object.__setattr__(self, "dtype", with_lanes(self.buffer.dtype, lanes))


@dataclass(frozen=True, slots=True, eq=False)
class ProducerLoad(PrimExpr):
    """``tensor[indices]`` of a tensor expression, before lowering gives it a buffer."""

    producer: Any  # a te.Tensor: tensor expressions sit above this layer
    indices: tuple[PrimExpr, ...]
    dtype: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "indices", tuple(self.indices))
        object.__setattr__(self, "dtype", canonical(self.producer.dtype))


# ----------------------------------------------------------------------------- iteration


@dataclass(frozen=True, slots=True, eq=False)
class Range:
    """The half-open interval ``[min, min + extent)``."""

    min: PrimExpr
    extent: PrimExpr

    @staticmethod
    def from_min_extent(min_value: ExprLike, extent: ExprLike) -> Range:
        """A range from its start and length (TVM's name)."""
        return Range(convert(min_value), convert(extent))

    def __str__(self) -> str:
        return f"range(min={self.min}, ext={self.extent})"


class IterVarType(IntEnum):
    """What an iteration variable iterates over (TVM's numbering)."""

    DATA_PAR = 0
    THREAD_INDEX = 1
    COMM_REDUCE = 2
    ORDERED = 3
    OPAQUE = 4
    UNROLLED = 5
    VECTORIZED = 6
    PARALLELIZED = 7
    TENSORIZED = 8


@dataclass(frozen=True, slots=True, eq=False)
class IterVar(ExprOp):
    """A loop axis: a variable, its range and its kind; used as an expression, it is its var.

    The kinds are also class constants under TVM's names (``IterVar.DataPar``,
    ``IterVar.Vectorized``, ...).
    """

    dom: Range | None
    var: Var
    iter_type: IterVarType = IterVarType.DATA_PAR
    thread_tag: str = ""

    DataPar: ClassVar[IterVarType] = IterVarType.DATA_PAR
    ThreadIndex: ClassVar[IterVarType] = IterVarType.THREAD_INDEX
    CommReduce: ClassVar[IterVarType] = IterVarType.COMM_REDUCE
    Ordered: ClassVar[IterVarType] = IterVarType.ORDERED
    DimInfo: ClassVar[IterVarType] = IterVarType.OPAQUE
    Unrolled: ClassVar[IterVarType] = IterVarType.UNROLLED
    Vectorized: ClassVar[IterVarType] = IterVarType.VECTORIZED
    Parallelized: ClassVar[IterVarType] = IterVarType.PARALLELIZED
    Tensorized: ClassVar[IterVarType] = IterVarType.TENSORIZED

    def __str__(self) -> str:
        return f"iter_var({self.var.name}, {self.dom})"

    __repr__ = __str__

    @property
    def dtype(self) -> str:
        """The type of the axis variable."""
        return self.var.dtype

    def _as_expr(self) -> PrimExpr:
        return self.var


@dataclass(frozen=True, slots=True, eq=False)
class CommReducer:
    """A commutative reduction ``result(lhs, rhs)`` with an identity element, per value slot."""

    lhs: tuple[Var, ...]
    rhs: tuple[Var, ...]
    result: tuple[PrimExpr, ...]
    identity_element: tuple[PrimExpr, ...]
    name: str = "reduce"

    def __post_init__(self) -> None:
        n = len(self.result)
        if not (len(self.lhs) == len(self.rhs) == len(self.identity_element) == n) or n == 0:
            raise TVMValueError(
                "comm_reducer: lhs, rhs, result and identity must have the same (non-zero) length"
            )


@dataclass(frozen=True, slots=True, eq=False)
class Reduce(PrimExpr):
    """Slot ``value_index`` of ``combiner`` folded over ``axis`` (where ``condition`` holds)."""

    combiner: CommReducer
    source: tuple[PrimExpr, ...]
    axis: tuple[IterVar, ...]
    condition: PrimExpr
    value_index: int = 0
    init: tuple[PrimExpr, ...] = field(default=())
    dtype: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", self.source[self.value_index].dtype)
