"""Python operators on loop-IR expressions and the nodes they build.

``ExprOp`` gives expressions (and iteration axes) Python's operators; ``i * 4 + j`` builds a
``Mul`` and an ``Add`` through :func:`binary`, which matches the operand types (TVM's rules: a
Python number takes the other side's type, an integer meets a float by becoming a float, a
narrower integer widens, a scalar meets a vector by broadcasting) and folds constants. The nodes
those rules build live here: ``PrimExpr``, integer and float constants, arithmetic, comparisons,
logic, casts and lane broadcasts. ``pytvm.tir.expr`` exports all of them with the other nodes.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, Union

from ..ffi.dtype import DataType, DataTypeCode
from ..ffi.errors import TVMTypeError, TVMValueError
from .dtype import canonical, is_float, is_int, lanes_of, scalar_of, with_lanes

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
    "Cast",
    "CmpOp",
    "DataProducer",
    "Div",
    "ExprLike",
    "ExprOp",
    "FloatImm",
    "FloorDiv",
    "FloorMod",
    "IntImm",
    "Max",
    "Min",
    "Mod",
    "Mul",
    "Not",
    "Or",
    "PrimExpr",
    "Sub",
    "binary",
    "const",
    "convert",
    "match_types",
    "set_text_hook",
]


# ----------------------------------------------------------------------------- operators


class DataProducer:
    """Base of values that produce data but are not expressions (TVM's ``tir.DataProducer``).

    A ``te.Tensor`` is one: an expression's operators give way to its own (``n + A`` of a
    tensor ``A`` builds a compute, not an expression).
    """

    __slots__ = ()


class ExprOp:
    """Python operators that build expressions (shared by expressions and iteration vars)."""

    __slots__ = ()

    def __add__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Add, self, other)

    def __radd__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Add, other, self)

    def __sub__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Sub, self, other)

    def __rsub__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Sub, other, self)

    def __mul__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Mul, self, other)

    def __rmul__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Mul, other, self)

    def __truediv__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Div, self, other)

    def __rtruediv__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Div, other, self)

    def __floordiv__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(FloorDiv, self, other)

    def __rfloordiv__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(FloorDiv, other, self)

    def __mod__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(FloorMod, self, other)

    def __rmod__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(FloorMod, other, self)

    def __neg__(self) -> PrimExpr:
        value = convert(self)
        return binary(Sub, const(0, value.dtype), value)

    def __lt__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(LT, self, other)

    def __le__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(LE, self, other)

    def __gt__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(GT, self, other)

    def __ge__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
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
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(And, self, other)

    def __rand__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(And, other, self)

    def __or__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Or, self, other)

    def __ror__(self, other: ExprLike) -> PrimExpr:
        if isinstance(other, DataProducer):
            return NotImplemented
        return binary(Or, other, self)

    def __invert__(self) -> PrimExpr:
        return Not(convert(self))

    __hash__ = object.__hash__

    def _as_expr(self) -> PrimExpr:
        """The expression this operand stands for (an axis stands for its variable)."""
        raise NotImplementedError(type(self).__name__)

    def __bool__(self) -> bool:
        raise TVMValueError(
            f"cannot use the symbolic expression {self} as a Python bool; use "
            "te.if_then_else / tir.Select for a data-dependent choice, or compare "
            "nodes with tir.structural_equal"
        )

    def astype(self, dtype: str) -> PrimExpr:
        """The expression cast to ``dtype``."""
        value = convert(self)
        return value if value.dtype == canonical(dtype) else Cast(canonical(dtype), value)


class PrimExpr(ExprOp):
    """Base of every expression node; ``dtype`` is its TVM type string."""

    __slots__ = ()
    dtype: str

    def __str__(self) -> str:
        return _TEXT[0](self)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self})"

    def _as_expr(self) -> PrimExpr:
        return self


ExprLike = Union["ExprOp", int, float, bool]

#: How expressions print; the printer module installs itself here when ``pytvm.tir`` loads.
_TEXT: list[Callable[[Any], str]] = [lambda expr: type(expr).__name__]


def set_text_hook(render: Callable[[Any], str]) -> None:
    """Install the function that renders an expression as text (used by ``str``)."""
    _TEXT[0] = render


# ----------------------------------------------------------------------------- constants


@dataclass(frozen=True, slots=True, eq=False)
class IntImm(PrimExpr):
    """An integer (or bool) constant."""

    dtype: str
    value: int

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", canonical(self.dtype))
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
        object.__setattr__(self, "dtype", canonical(self.dtype))
        object.__setattr__(self, "value", float(self.value))

    def __float__(self) -> float:
        return self.value


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
class Cast(PrimExpr):
    """``value`` converted to ``dtype``."""

    dtype: str
    value: PrimExpr

    def __post_init__(self) -> None:
        object.__setattr__(self, "dtype", canonical(self.dtype))


# ----------------------------------------------------------------------------- vectors

#: A vector has at least two lanes (one lane is a scalar).
_MIN_LANES = 2


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
    dtype = canonical(dtype)
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
    if isinstance(value, ExprOp):  # an axis (IterVar)
        return value._as_expr()
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
    ta, tb = DataType.parse(a.dtype), DataType.parse(b.dtype)
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
