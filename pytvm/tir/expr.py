"""Expressions of the loop IR: constants, variables, arithmetic, loads, calls, vectors, reductions.

Every node is a frozen dataclass. Python operators build expressions, as in TVM: ``i * 4 + j``
is an ``Add`` of a ``Mul``, and ``i == j`` an ``EQ`` (whose truth value is "the same node", so
nodes can key dicts). Nodes therefore compare by identity; structural comparison is
:func:`pytvm.tir.structural_equal`. Mixed operand types follow TVM's rules: a Python number takes
the other side's type, an integer meets a float by becoming a float, and a narrower integer
widens (see :func:`binary`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any, ClassVar, Union

from ..ffi.dtype import DataType, DataTypeCode
from ..ffi.errors import TVMTypeError, TVMValueError

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


# ----------------------------------------------------------------------------- data types


def _dtype(text: str) -> DataType:
    return DataType.parse(text)


def is_float(dtype: str) -> bool:
    """Whether ``dtype`` is a floating-point type (any width, any lanes)."""
    return _dtype(dtype).code in (DataTypeCode.FLOAT, DataTypeCode.BFLOAT)


def is_int(dtype: str) -> bool:
    """Whether ``dtype`` is a signed or unsigned integer type."""
    return _dtype(dtype).code in (DataTypeCode.INT, DataTypeCode.UINT)


def lanes_of(dtype: str) -> int:
    """Vector lanes of ``dtype`` (1 for a scalar)."""
    return _dtype(dtype).lanes


def scalar_of(dtype: str) -> str:
    """The element type of ``dtype`` (``"float32x8"`` → ``"float32"``)."""
    return str(_dtype(dtype).with_lanes(1))


def with_lanes(dtype: str, lanes: int) -> str:
    """``dtype`` with ``lanes`` lanes."""
    return str(_dtype(dtype).with_lanes(lanes))


def _canonical(dtype: str) -> str:
    try:
        return str(_dtype(dtype))
    except (TVMValueError, TVMTypeError) as err:
        raise TVMValueError(f"bad data type in the loop IR: {err}") from None


# ----------------------------------------------------------------------------- operators


class ExprOp:
    """Python operators that build expressions (shared by expressions and iteration vars)."""

    __slots__ = ()

    def __add__(self, other: ExprLike) -> PrimExpr:
        return binary(Add, self, other)

    def __radd__(self, other: ExprLike) -> PrimExpr:
        return binary(Add, other, self)

    def __sub__(self, other: ExprLike) -> PrimExpr:
        return binary(Sub, self, other)

    def __rsub__(self, other: ExprLike) -> PrimExpr:
        return binary(Sub, other, self)

    def __mul__(self, other: ExprLike) -> PrimExpr:
        return binary(Mul, self, other)

    def __rmul__(self, other: ExprLike) -> PrimExpr:
        return binary(Mul, other, self)

    def __truediv__(self, other: ExprLike) -> PrimExpr:
        return binary(Div, self, other)

    def __rtruediv__(self, other: ExprLike) -> PrimExpr:
        return binary(Div, other, self)

    def __floordiv__(self, other: ExprLike) -> PrimExpr:
        return binary(FloorDiv, self, other)

    def __rfloordiv__(self, other: ExprLike) -> PrimExpr:
        return binary(FloorDiv, other, self)

    def __mod__(self, other: ExprLike) -> PrimExpr:
        return binary(FloorMod, self, other)

    def __rmod__(self, other: ExprLike) -> PrimExpr:
        return binary(FloorMod, other, self)

    def __neg__(self) -> PrimExpr:
        value = convert(self)
        return binary(Sub, const(0, value.dtype), value)

    def __lt__(self, other: ExprLike) -> PrimExpr:
        return binary(LT, self, other)

    def __le__(self, other: ExprLike) -> PrimExpr:
        return binary(LE, self, other)

    def __gt__(self, other: ExprLike) -> PrimExpr:
        return binary(GT, self, other)

    def __ge__(self, other: ExprLike) -> PrimExpr:
        return binary(GE, self, other)

    def __eq__(self, other: object) -> Any:  # builds an EQ, as TVM's PrimExpr does
        if not isinstance(other, (ExprOp, int, float)):
            return NotImplemented
        return binary(EQ, self, other)

    def __ne__(self, other: object) -> Any:
        if not isinstance(other, (ExprOp, int, float)):
            return NotImplemented
        return binary(NE, self, other)

    def __and__(self, other: ExprLike) -> PrimExpr:
        return binary(And, self, other)

    def __rand__(self, other: ExprLike) -> PrimExpr:
        return binary(And, other, self)

    def __or__(self, other: ExprLike) -> PrimExpr:
        return binary(Or, self, other)

    def __ror__(self, other: ExprLike) -> PrimExpr:
        return binary(Or, other, self)

    def __invert__(self) -> PrimExpr:
        return Not(convert(self))

    __hash__ = object.__hash__

    def __bool__(self) -> bool:
        raise TVMValueError(
            f"cannot use the symbolic expression {self} as a Python bool; use "
            "te.if_then_else / tir.Select for a data-dependent choice, or compare "
            "nodes with tir.structural_equal"
        )

    def astype(self, dtype: str) -> PrimExpr:
        """The expression cast to ``dtype``."""
        value = convert(self)
        return value if value.dtype == _canonical(dtype) else Cast(_canonical(dtype), value)


class PrimExpr(ExprOp):
    """Base of every expression node; ``dtype`` is its TVM type string."""

    __slots__ = ()
    dtype: str

    def __str__(self) -> str:
        return _TEXT[0](self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"


ExprLike = Union["ExprOp", int, float, bool]

#: How expressions print; the printer module installs itself here when ``pytvm.tir`` loads.
_TEXT: list[Callable[[Any], str]] = [lambda expr: type(expr).__name__]


def set_text_hook(render: Callable[[Any], str]) -> None:
    """Install the function that renders an expression as text (used by ``str``)."""
    _TEXT[0] = render


# ----------------------------------------------------------------------------- leaves


@dataclass(frozen=True, slots=True, eq=False)
class Var(PrimExpr):
    """A variable: a loop index, a symbolic shape dimension, a buffer's data pointer."""

    name: str
    dtype: str = "int32"

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _canonical(self.dtype))


@dataclass(frozen=True, slots=True, eq=False)
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    dtype: str
    value: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _canonical(self.dtype))
        if not isinstance(self.value, int):
            raise TVMTypeError(f"IntImm value must be an int, got {self.value!r}")

    def __int__(self) -> int:
        return self.value

    def __index__(self) -> int:
        return self.value

    def __bool__(self) -> bool:
        return bool(self.value)


@dataclass(frozen=True, slots=True, eq=False)
class FloatImm(PrimExpr):
    """A floating-point constant."""

    dtype: str
    value: float

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _canonical(self.dtype))
        object.__setattr__(self, "value", float(self.value))

    def __float__(self) -> float:
        return self.value


@dataclass(frozen=True, slots=True, eq=False)
class StringImm(PrimExpr):
    """A string constant (an argument of intrinsic calls)."""

    value: str
    dtype: str = "handle"


# ----------------------------------------------------------------------------- arithmetic


@dataclass(frozen=True, slots=True, eq=False)
class BinaryOp(PrimExpr):
    """Base of two-operand nodes; both operands have one type, checked on construction."""

    a: PrimExpr
    b: PrimExpr
    dtype: str = ""
    #: The C spelling of the operator (None where it is a call, e.g. min).
    symbol: ClassVar[str | None] = None

    def __post_init__(self) -> None:
        if self.a.dtype != self.b.dtype:
            raise TVMTypeError(
                f"{type(self).__name__} of mismatched types {self.a.dtype} and {self.b.dtype} "
                f"({self.a}, {self.b}); use tir.binary(...) to match them"
            )
        object.__setattr__(self, "dtype", self._result_dtype(self.a.dtype))

    @staticmethod
    def _result_dtype(operand: str) -> str:
        return operand


@dataclass(frozen=True, slots=True, eq=False)
class Add(BinaryOp):
    """``a + b``."""

    symbol: ClassVar[str | None] = "+"


@dataclass(frozen=True, slots=True, eq=False)
class Sub(BinaryOp):
    """``a - b``."""

    symbol: ClassVar[str | None] = "-"


@dataclass(frozen=True, slots=True, eq=False)
class Mul(BinaryOp):
    """``a * b``."""

    symbol: ClassVar[str | None] = "*"


@dataclass(frozen=True, slots=True, eq=False)
class Div(BinaryOp):
    """``a / b``: true division for floats, division rounding toward zero for integers (C)."""

    symbol: ClassVar[str | None] = "/"


@dataclass(frozen=True, slots=True, eq=False)
class Mod(BinaryOp):
    """``a % b`` with C's sign rule (remainder of :class:`Div`)."""

    symbol: ClassVar[str | None] = "%"


@dataclass(frozen=True, slots=True, eq=False)
class FloorDiv(BinaryOp):
    """Division rounding toward negative infinity (Python's ``//``)."""


@dataclass(frozen=True, slots=True, eq=False)
class FloorMod(BinaryOp):
    """The remainder of :class:`FloorDiv` (Python's ``%``)."""


@dataclass(frozen=True, slots=True, eq=False)
class Min(BinaryOp):
    """The smaller of two values."""


@dataclass(frozen=True, slots=True, eq=False)
class Max(BinaryOp):
    """The larger of two values."""


@dataclass(frozen=True, slots=True, eq=False)
class CmpOp(BinaryOp):
    """Base of comparisons; the result is ``bool`` with the operands' lanes."""

    @staticmethod
    def _result_dtype(operand: str) -> str:
        return with_lanes("bool", lanes_of(operand))


@dataclass(frozen=True, slots=True, eq=False)
class EQ(CmpOp):
    """``a == b``; as a Python bool, whether the two sides are the same node."""

    symbol: ClassVar[str | None] = "=="

    def __bool__(self) -> bool:
        return self.a is self.b or (_same_leaf(self.a, self.b))


@dataclass(frozen=True, slots=True, eq=False)
class NE(CmpOp):
    """``a != b``; as a Python bool, whether the two sides are different nodes."""

    symbol: ClassVar[str | None] = "!="

    def __bool__(self) -> bool:
        return not (self.a is self.b or _same_leaf(self.a, self.b))


@dataclass(frozen=True, slots=True, eq=False)
class LT(CmpOp):
    """``a < b``."""

    symbol: ClassVar[str | None] = "<"


@dataclass(frozen=True, slots=True, eq=False)
class LE(CmpOp):
    """``a <= b``."""

    symbol: ClassVar[str | None] = "<="


@dataclass(frozen=True, slots=True, eq=False)
class GT(CmpOp):
    """``a > b``."""

    symbol: ClassVar[str | None] = ">"


@dataclass(frozen=True, slots=True, eq=False)
class GE(CmpOp):
    """``a >= b``."""

    symbol: ClassVar[str | None] = ">="


@dataclass(frozen=True, slots=True, eq=False)
class And(BinaryOp):
    """Logical and of two booleans."""

    symbol: ClassVar[str | None] = "&&"


@dataclass(frozen=True, slots=True, eq=False)
class Or(BinaryOp):
    """Logical or of two booleans."""

    symbol: ClassVar[str | None] = "||"


@dataclass(frozen=True, slots=True, eq=False)
class Not(PrimExpr):
    """Logical negation."""

    a: PrimExpr
    dtype: str = ""

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", self.a.dtype)


def _same_leaf(a: PrimExpr, b: PrimExpr) -> bool:
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value == b.value and a.dtype == b.dtype
    return False


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
class Cast(PrimExpr):
    """``value`` converted to ``dtype``."""

    dtype: str
    value: PrimExpr

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _canonical(self.dtype))


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
    """A call of an intrinsic (``"tir.exp"``, ``"tir.if_then_else"``, ...) or extern function."""

    dtype: str
    op: str
    args: tuple[PrimExpr, ...]

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", _canonical(self.dtype))
        object.__setattr__(self, "args", tuple(self.args))


# ----------------------------------------------------------------------------- vectors

#: A vector has at least two lanes (one lane is a scalar).
_MIN_LANES = 2


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


@dataclass(frozen=True, slots=True, eq=False)
class Broadcast(PrimExpr):
    """``value`` repeated in every one of ``lanes`` lanes."""

    value: PrimExpr
    lanes: int
    dtype: str = ""

    def __post_init__(self) -> None:
        if self.lanes < _MIN_LANES:
            raise TVMValueError(f"Broadcast needs at least 2 lanes, got {self.lanes}")
        object.__setattr__(self, "dtype", with_lanes(self.value.dtype, self.lanes))


# ----------------------------------------------------------------------------- memory


@dataclass(frozen=True, slots=True, eq=False)
class Buffer:
    """Memory holding ``shape`` elements of ``dtype`` at ``data`` (strides empty: compact).

    ``scope`` is ``"global"`` for arguments and heap workspaces, ``"local"`` for small buffers
    a kernel keeps on its stack. ``data_alignment`` is in bytes.
    """

    data: Var
    dtype: str
    shape: tuple[PrimExpr, ...]
    name: str
    strides: tuple[PrimExpr, ...] = ()
    elem_offset: PrimExpr | None = None
    scope: str = "global"
    data_alignment: int = 64

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
        object.__setattr__(self, "dtype", _canonical(self.producer.dtype))


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


@dataclass(frozen=True, slots=True, eq=False)
class IterVar(ExprOp):
    """A loop axis: a variable, its range and its kind; used as an expression, it is its var."""

    dom: Range | None
    var: Var
    iter_type: IterVarType = IterVarType.DATA_PAR
    thread_tag: str = ""

    def __str__(self) -> str:
        return f"iter_var({self.var.name}, {self.dom})"

    __repr__ = __str__

    @property
    def dtype(self) -> str:
        """The type of the axis variable."""
        return self.var.dtype


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


# ----------------------------------------------------------------------------- building


def const(value: int | float | bool, dtype: str | None = None) -> PrimExpr:
    """A constant; the type defaults to ``int32``/``int64`` (by size), ``float32`` or ``bool``."""
    if dtype is None:
        if isinstance(value, bool):
            dtype = "bool"
        elif isinstance(value, int):
            dtype = "int32" if -(2**31) <= value < 2**31 else "int64"
        else:
            dtype = "float32"
    dtype = _canonical(dtype)
    lanes = lanes_of(dtype)
    if lanes > 1:
        return Broadcast(const(value, scalar_of(dtype)), lanes)
    if is_float(dtype):
        return FloatImm(dtype, float(value))
    if not isinstance(value, (int, bool)) and value != int(value):
        raise TVMValueError(f"const({value!r}, {dtype!r}): not an integer")
    return IntImm(dtype, int(value))


def convert(value: ExprLike) -> PrimExpr:
    """``value`` as an expression (numbers become constants, an axis becomes its var)."""
    if isinstance(value, PrimExpr):
        return value
    if isinstance(value, IterVar):
        return value.var
    if isinstance(value, (bool, int, float)):
        return const(value)
    if hasattr(value, "asobject"):  # a te tensor slice
        return convert(value.asobject())
    raise TVMTypeError(
        f"cannot use {type(value).__name__} {value!r} as an expression; expected a number, "
        "a variable, an axis or an expression"
    )


def _as_operand(value: ExprLike, other: ExprLike) -> PrimExpr:
    """``value`` as an expression; a Python number takes the type of ``other``."""
    if isinstance(value, (bool, int, float)) and not isinstance(value, ExprOp):
        other_type = convert(other).dtype if not isinstance(other, (int, float)) else None
        if other_type is not None:
            scalar = scalar_of(other_type)
            if isinstance(value, float) and not is_float(scalar):
                return const(value)
            if isinstance(value, bool) and scalar != "bool":
                return const(int(value), other_type)
            return const(value, other_type)
    return convert(value)


def _widen(a: PrimExpr, b: PrimExpr) -> tuple[PrimExpr, PrimExpr]:
    """TVM's BinaryOpMatchTypes: lanes broadcast, int meets float, narrow widens."""
    if a.dtype == b.dtype:
        return a, b
    la, lb = lanes_of(a.dtype), lanes_of(b.dtype)
    if la != lb:
        if la == 1:
            return _widen(Broadcast(a, lb), b)
        if lb == 1:
            return _widen(a, Broadcast(b, la))
        raise TVMTypeError(f"cannot combine vectors of {la} and {lb} lanes ({a}, {b})")
    ta, tb = _dtype(a.dtype), _dtype(b.dtype)
    if is_float(a.dtype) and not is_float(b.dtype):
        return a, Cast(a.dtype, b)
    if is_float(b.dtype) and not is_float(a.dtype):
        return Cast(b.dtype, a), b
    if ta.bits != tb.bits or ta.code != tb.code:
        wide = (
            a.dtype
            if (ta.bits, ta.code == DataTypeCode.INT) >= (tb.bits, tb.code == 0)
            else b.dtype
        )
        return (a if a.dtype == wide else Cast(wide, a)), (b if b.dtype == wide else Cast(wide, b))
    raise TVMTypeError(f"cannot combine {a.dtype} and {b.dtype} ({a}, {b})")


def match_types(a: ExprLike, b: ExprLike) -> tuple[PrimExpr, PrimExpr]:
    """Both operands as expressions of one type (TVM's ``BinaryOpMatchTypes``)."""
    return _widen(_as_operand(a, b), _as_operand(b, a))


def binary(cls: type[BinaryOp], a: ExprLike, b: ExprLike) -> PrimExpr:
    """``cls(a, b)`` after matching the operand types; folds two constants."""
    left, right = match_types(a, b)
    folded = _fold(cls, left, right)
    return folded if folded is not None else cls(left, right)


def _c_div(x: int, y: int) -> int:
    q = abs(x) // abs(y)
    return q if (x >= 0) == (y >= 0) else -q


_INT_FOLD: dict[type, Any] = {
    Add: lambda x, y: x + y,
    Sub: lambda x, y: x - y,
    Mul: lambda x, y: x * y,
    Div: _c_div,
    Mod: lambda x, y: x - _c_div(x, y) * y,
    FloorDiv: lambda x, y: x // y,
    FloorMod: lambda x, y: x % y,
    Min: min,
    Max: max,
    EQ: lambda x, y: x == y,
    NE: lambda x, y: x != y,
    LT: lambda x, y: x < y,
    LE: lambda x, y: x <= y,
    GT: lambda x, y: x > y,
    GE: lambda x, y: x >= y,
    And: lambda x, y: bool(x) and bool(y),
    Or: lambda x, y: bool(x) or bool(y),
}
_DIVISIONS = (Div, Mod, FloorDiv, FloorMod)


def _fold(cls: type[BinaryOp], a: PrimExpr, b: PrimExpr) -> PrimExpr | None:  # noqa: PLR0911, PLR0912 - one rule per case
    """Fold two constants, and the identities ``x+0, x-0, x*1, x*0, x//1, x%1``, as TVM does."""
    if isinstance(a, (IntImm, FloatImm)) and isinstance(b, (IntImm, FloatImm)):
        if cls in _DIVISIONS and b.value == 0:
            raise TVMValueError(f"division by zero in {a} {cls.__name__} {b}")
        fold = _INT_FOLD.get(cls)
        if fold is None:
            return None
        if isinstance(a, FloatImm) and cls in (Div,):
            value: Any = a.value / b.value
        elif isinstance(a, FloatImm) and cls in (Mod, FloorDiv, FloorMod):
            return None
        else:
            value = fold(a.value, b.value)
        if issubclass(cls, CmpOp) or cls in (And, Or):
            return IntImm("bool", int(bool(value)))
        return const(value, a.dtype)
    if (isinstance(b, IntImm) and is_int(a.dtype)) or isinstance(b, FloatImm):
        if b.value == 0 and cls in (Add, Sub):
            return a
        if b.value == 1 and cls in (Mul, FloorDiv, Div):
            return a
        if b.value == 1 and cls in (FloorMod, Mod) and isinstance(b, IntImm):
            return const(0, a.dtype)
        if b.value == 0 and cls is Mul and isinstance(b, IntImm):
            return b
    if (isinstance(a, IntImm) and is_int(b.dtype)) or isinstance(a, FloatImm):
        if a.value == 0 and cls is Add:
            return b
        if a.value == 1 and cls is Mul:
            return b
        if a.value == 0 and cls is Mul and isinstance(a, IntImm):
            return a
    return None
