"""C expressions of the loop IR: scalars directly, vectors as GCC/Clang vector-extension values.

Vector loads and stores of unit-stride ramps, vector arithmetic, broadcasts and casts map to
vector extensions (the C compiler emits SIMD instructions of the host: AVX2, AVX-512, NEON).
Selects of vector comparisons are a blend of masks, bit operations of integer vectors their C
operators, a ``Let`` of a vector a temporary, and a vector call of ``exp``, ``log``, ``tanh``,
``sigmoid``, ``erf`` or ``pow`` the arithmetic expression of :mod:`pytvm.codegen.vector_math`
(as are scalar calls but ``pow``, so that the C compiler vectorizes their loops).
Any other vector expression is computed lane by lane into a temporary, which the compiler
vectorizes when it can; so every expression the passes produce has a correct translation.
"""

from __future__ import annotations

import math
from collections.abc import Callable

from ...ffi.dtype import DataType, DataTypeCode
from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir.dot_product import is_dot_u8s8_s32
from ...tir.expr import is_float, lanes_of, scalar_of
from ..libm import BIT_COUNTS, BIT_OPERATORS, FLOAT_CHECKS, LIBM_FUNCTIONS
from ..speculation import speculatable
from ..vector_math import expand as expand_vector_math
from .calls import CALL_OPS, c_string, print_call
from .types import c_scalar_type, c_vector_type

__all__ = ["ExprPrinter", "has_vector_type"]

_VECTOR_BINARY = (E.Add, E.Sub, E.Mul, E.Div)
_NUMERIC = (DataTypeCode.INT, DataTypeCode.UINT, DataTypeCode.FLOAT)


class ExprPrinter:
    """Prints expressions; ``emit`` receives temporaries that must precede the statement."""

    def __init__(self, names: Callable[[E.Var], str], emit: Callable[[str], None]) -> None:
        self.name = names
        self.emit = emit
        self.vector_types: set[str] = set()
        self.minmax_types: set[str] = set()
        #: Prototypes of the extern C functions called (``calls``), by name.
        self.extern_decls: dict[str, str] = {}
        #: A statement leaving the function with rc = -1 (None: calls out are refused).
        self.fail: Callable[[], str] | None = None
        #: The C expression of the kernel's device id (arrays built for packed calls).
        self.dev_id = "0"
        #: Written before each braced group in an expression (GNU's ``({ ... })``, which a
        #: ``Let`` and a few intrinsics print): ``"__extension__ "`` keeps ``-pedantic`` quiet.
        self.group_prefix = ""
        self._temps = 0

    def new_temp(self) -> int:
        """A number for the names of a new temporary."""
        self._temps += 1
        return self._temps

    # ------------------------------------------------------------------ scalars

    def scalar(self, e: E.PrimExpr) -> str:  # noqa: PLR0911, PLR0912 - one case per node
        """The C expression of the scalar expression ``e`` (vectors go to :meth:`vector`)."""
        if lanes_of(e.dtype) > 1:
            return self.vector(e)
        if isinstance(e, _LaneVar):
            return e.name
        if isinstance(e, E.Var):
            return self.name(e)
        if isinstance(e, E.IntImm):
            return _int_literal(e)
        if isinstance(e, E.FloatImm):
            return _float_literal(e)
        if isinstance(e, E.StringImm):
            return c_string(e.value)
        if isinstance(e, E.Cast):
            return self._cast(e)
        if isinstance(e, (E.FloorDiv, E.FloorMod)):
            return self._floor_op(e)
        if isinstance(e, (E.Min, E.Max)):
            kind = "min" if isinstance(e, E.Min) else "max"
            self.minmax_types.add(e.dtype)
            return f"pytvm_{kind}_{e.dtype}({self.scalar(e.a)}, {self.scalar(e.b)})"
        if isinstance(e, E.Mod) and is_float(e.dtype):
            return f"{_libm('fmod', e.dtype)}({self.scalar(e.a)}, {self.scalar(e.b)})"
        if isinstance(e, E.BinaryOp):
            return f"({self.scalar(e.a)} {e.symbol} {self.scalar(e.b)})"
        if isinstance(e, E.Not):
            return f"(!{self.scalar(e.a)})"
        if isinstance(e, E.Select):
            c, t, f = (self.scalar(x) for x in (e.condition, e.true_value, e.false_value))
            return f"({c} ? {t} : {f})"
        if isinstance(e, E.Let):
            var = self.name(e.var)
            value = self.scalar(e.value)
            body = self.scalar(e.body)
            return (
                f"{self.group_prefix}({{ {c_scalar_type(e.var.dtype)} {var} = {value}; {body}; }})"
            )
        if isinstance(e, E.Call):
            # a scalar pow stays powf: GCC keeps the loop of its expression scalar (and slower)
            expanded = expand_vector_math(e) if e.op != "tir.pow" else None
            return self._call(e, self.scalar) if expanded is None else self.scalar(expanded)
        if isinstance(e, E.BufferLoad):
            (index,) = e.indices
            return f"{self._pointer(e.buffer)}[{self.scalar(index)}]"
        raise TVMValueError(f"the C code generator cannot print {type(e).__name__} {e}")

    def _pointer(self, buffer: E.Buffer) -> str:
        return f"(({c_scalar_type(buffer.dtype)}*){self.name(buffer.data)})"

    def _cast(self, e: E.Cast) -> str:
        value = self.scalar(e.value)
        if e.dtype == "bool":
            return f"({value} != 0)"
        return f"(({c_scalar_type(e.dtype)}){value})"

    def _floor_op(self, e: E.FloorDiv | E.FloorMod) -> str:
        a, b = self.scalar(e.a), self.scalar(e.b)
        if is_float(e.dtype):
            floor = _libm("floor", e.dtype)
            if isinstance(e, E.FloorDiv):
                return f"{floor}({a} / {b})"
            return f"({a} - {floor}({a} / {b}) * {b})"
        bits = "64" if e.dtype in ("int64", "uint64") else "32"
        kind = "floordiv" if isinstance(e, E.FloorDiv) else "floormod"
        if e.dtype.startswith("uint"):
            return f"({a} {'/' if kind == 'floordiv' else '%'} {b})"
        return f"pytvm_{kind}_i{bits}({a}, {b})"

    def _call(self, e: E.Call, arg: Callable[[E.PrimExpr], str]) -> str:  # noqa: PLR0911
        op = e.op
        if op in CALL_OPS:
            return print_call(self, e, arg)
        if op == "tir.if_then_else":
            c, t, f = (arg(a) for a in e.args)
            return f"({c} ? {t} : {f})"
        if op == "tir.likely":
            return f"__builtin_expect(!!({arg(e.args[0])}), 1)"
        if op == "tir.reinterpret":  # a union compound literal: C99, no aliasing question
            src, dst = c_scalar_type(e.args[0].dtype), c_scalar_type(e.dtype)
            # the value in a register first: a select stored into the union would be a branch
            value = f"pytvm_r{self.new_temp()}"
            union = f"((union {{ {src} from; {dst} to; }}){{ .from = {value} }}).to"
            return f"{self.group_prefix}({{ {src} {value} = {arg(e.args[0])}; {union}; }})"
        if is_dot_u8s8_s32(e):  # portable: four byte products (VNNI in the LLVM path)
            acc, a, b = (arg(x) for x in e.args)
            n = self.new_temp()
            terms = " + ".join(
                f"(int32_t)(uint8_t)(pytvm_a{n} >> {8 * k}) * "
                f"(int32_t)(int8_t)(pytvm_b{n} >> {8 * k})"
                for k in range(4)
            )
            return (
                f"{self.group_prefix}({{ uint32_t pytvm_a{n} = {a}; "
                f"uint32_t pytvm_b{n} = (uint32_t){b}; (int32_t)({acc} + {terms}); }})"
            )
        if op == "tir.sigmoid":
            one = "1.0f" if scalar_of(e.dtype) == "float32" else "1.0"
            return f"({one} / ({one} + {_libm('exp', e.dtype)}(-{arg(e.args[0])})))"
        if op == "tir.rsqrt":
            one = "1.0f" if scalar_of(e.dtype) == "float32" else "1.0"
            return f"({one} / {_libm('sqrt', e.dtype)}({arg(e.args[0])}))"
        if op in FLOAT_CHECKS or op in BIT_OPERATORS or op in BIT_COUNTS or op == "tir.bitwise_not":
            return _inline_intrinsic(e, arg)
        base = LIBM_FUNCTIONS.get(op)
        if base is None:
            raise TVMValueError(f"the C code generator has no function for intrinsic {op}")
        return f"{_libm(base, e.dtype)}({', '.join(arg(a) for a in e.args)})"

    # ------------------------------------------------------------------ vectors

    def vector(self, e: E.PrimExpr) -> str:  # noqa: PLR0911 - one case per node kind
        """A C expression of vector type for the vector expression ``e``."""
        if not has_vector_type(e.dtype):
            raise TVMValueError(f"no C vector type for {e.dtype} (lanes not a power of two)")
        self.vector_types.add(e.dtype)
        vtype = c_vector_type(e.dtype)
        if isinstance(e, E.Broadcast):
            return f"pytvm_bcast_{e.dtype}({self.scalar(e.value)})"
        if isinstance(e, E.BufferLoad) and _unit_ramp(e.indices[0]) is not None:
            base = _unit_ramp(e.indices[0])
            assert base is not None
            return f"pytvm_vload_{e.dtype}({self._pointer(e.buffer)} + {self.scalar(base)})"
        if isinstance(e, _VECTOR_BINARY) and not (isinstance(e, E.Div) and not is_float(e.dtype)):
            return f"({self.vector(e.a)} {e.symbol} {self.vector(e.b)})"
        if isinstance(e, (E.Min, E.Max)) and not scalar_of(e.dtype).startswith("bool"):
            kind = "min" if isinstance(e, E.Min) else "max"
            return f"pytvm_v{kind}_{e.dtype}({self.vector(e.a)}, {self.vector(e.b)})"
        if isinstance(e, E.Cast) and e.dtype != "bool" and not e.value.dtype.startswith("bool"):
            return f"__builtin_convertvector({self.vector(e.value)}, {vtype})"
        if isinstance(e, E.Call) and e.op == "tir.reinterpret":  # same size: a bit cast
            return f"(({vtype})({self.vector(e.args[0])}))"
        if isinstance(e, E.Call) and e.op in BIT_OPERATORS and _integer_vector(e.dtype):
            a, b = (self.vector(x) for x in e.args)
            return f"({a} {BIT_OPERATORS[e.op]} {b})"
        if isinstance(e, E.Call) and (expanded := expand_vector_math(e)) is not None:
            return self.vector(expanded)
        if isinstance(e, E.Let):
            value = self.vector(e.value) if lanes_of(e.value.dtype) > 1 else self.scalar(e.value)
            ctype = c_vector_type(e.var.dtype) if lanes_of(e.var.dtype) > 1 else None
            self.emit(f"{ctype or c_scalar_type(e.var.dtype)} {self.name(e.var)} = {value};")
            return self.vector(e.body)
        if (
            isinstance(e, E.Select)
            and speculatable(e.true_value)
            and speculatable(e.false_value)
            and (mask := self._mask(e.condition, e.dtype)) is not None
        ):
            return self._blend(e, mask)
        if isinstance(e, E.Var):
            return self.name(e)
        return self._lanewise(e)

    def _mask(self, cond: E.PrimExpr, dtype: str) -> str | None:
        """``cond`` as a mask vector of ``dtype``'s lane width (all ones where it holds), or
        None where it is not a comparison of vectors or a logical combination of those.
        """
        mtype = f"pytvm_mask_{dtype}"
        if isinstance(cond, E.CmpOp) and _numeric_vector(cond.a.dtype):
            test = f"({self.vector(cond.a)} {cond.symbol} {self.vector(cond.b)})"
            same = DataType(cond.a.dtype).bits == DataType(dtype).bits
            return f"(({mtype}){test})" if same else f"__builtin_convertvector({test}, {mtype})"
        if isinstance(cond, (E.And, E.Or)):
            a, b = self._mask(cond.a, dtype), self._mask(cond.b, dtype)
            if a is None or b is None:
                return None
            return f"({a} {'&' if isinstance(cond, E.And) else '|'} {b})"
        if isinstance(cond, E.Not):
            inner = self._mask(cond.a, dtype)
            return None if inner is None else f"(~{inner})"
        return None

    def _blend(self, e: E.Select, mask: str) -> str:
        """A vector select as bit operations on the mask ``mask`` (kept in a temporary)."""
        mtype, vtype = f"pytvm_mask_{e.dtype}", c_vector_type(e.dtype)
        name = f"pytvm_m{self.new_temp()}"
        self.emit(f"{mtype} {name} = {mask};")
        t, f = self.vector(e.true_value), self.vector(e.false_value)
        return f"(({vtype})(({name} & ({mtype})({t})) | (~{name} & ({mtype})({f}))))"

    def _lanewise(self, e: E.PrimExpr) -> str:
        """Compute ``e`` lane by lane into a new temporary; return its name."""
        k = self.new_temp()
        temp, lane = f"pytvm_v{k}", f"pytvm_l{k}"
        lanes = lanes_of(e.dtype)
        value = self.lane(e, lane)
        self.emit(f"{c_vector_type(e.dtype)} {temp};")
        self.emit(f"for (int {lane} = 0; {lane} < {lanes}; ++{lane}) {temp}[{lane}] = {value};")
        return temp

    def lane(self, e: E.PrimExpr, lane: str) -> str:  # noqa: PLR0911, PLR0912 - one case per node
        """The scalar C expression of lane ``lane`` (a C int expression) of ``e``."""
        if lanes_of(e.dtype) == 1:
            return self.scalar(e)
        if isinstance(e, E.Ramp):
            return f"({self.scalar(e.base)} + {self.scalar(e.stride)} * {lane})"
        if isinstance(e, E.Broadcast):
            return self.scalar(e.value)
        if isinstance(e, E.BufferLoad):
            (index,) = e.indices
            return f"{self._pointer(e.buffer)}[{self.lane(index, lane)}]"
        if isinstance(e, (E.Min, E.Max)):
            kind = "min" if isinstance(e, E.Min) else "max"
            scalar = scalar_of(e.dtype)
            self.minmax_types.add(scalar)
            return f"pytvm_{kind}_{scalar}({self.lane(e.a, lane)}, {self.lane(e.b, lane)})"
        if isinstance(e, (E.FloorDiv, E.FloorMod)):
            scalar_node = type(e)(
                _LaneVar(self.lane(e.a, lane), scalar_of(e.dtype)),
                _LaneVar(self.lane(e.b, lane), scalar_of(e.dtype)),
            )
            return self.scalar(scalar_node)
        if isinstance(e, E.BinaryOp):
            if isinstance(e, E.Mod) and is_float(e.dtype):
                fmod = _libm("fmod", e.dtype)
                return f"{fmod}({self.lane(e.a, lane)}, {self.lane(e.b, lane)})"
            return f"({self.lane(e.a, lane)} {e.symbol} {self.lane(e.b, lane)})"
        if isinstance(e, E.Not):
            return f"(!{self.lane(e.a, lane)})"
        if isinstance(e, E.Select):
            c, t, f = (self.lane(x, lane) for x in (e.condition, e.true_value, e.false_value))
            return f"({c} ? {t} : {f})"
        if isinstance(e, E.Cast):
            if scalar_of(e.dtype) == "bool":
                return f"({self.lane(e.value, lane)} != 0)"
            return f"(({c_scalar_type(e.dtype)}){self.lane(e.value, lane)})"
        vector_call = isinstance(e, E.Call) and expand_vector_math(e) is not None
        if isinstance(e, E.Call) and not (vector_call and speculatable(e)):
            return self._call(e, lambda a: self.lane(a, lane))
        if isinstance(e, E.Call):  # computed once as a vector, outside the loop over lanes
            temp = f"pytvm_v{self.new_temp()}"
            self.emit(f"{c_vector_type(e.dtype)} {temp} = {self.vector(e)};")
            return f"{temp}[{lane}]"
        return f"({self.vector(e)})[{lane}]"


class _LaneVar(E.Var):
    """A variable that prints as a given C expression (one lane of a vector operand)."""

    __slots__ = ()

    def __init__(self, text: str, dtype: str) -> None:
        object.__setattr__(self, "name", text)
        object.__setattr__(self, "dtype", dtype)


def _inline_intrinsic(e: E.Call, arg: Callable[[E.PrimExpr], str]) -> str:
    """A classification (``isnan`` ...), bit operation or bit count, as a C expression."""
    op, x = e.op, e.args[0]
    if op in FLOAT_CHECKS:
        if not is_float(x.dtype):
            return "1" if FLOAT_CHECKS[op] else "0"
        return f"({op.removeprefix('tir.')}({arg(x)}) != 0)"
    ctype = c_scalar_type(scalar_of(e.dtype))
    if op == "tir.bitwise_not":
        return f"(({ctype})(~{arg(x)}))"
    if op in BIT_OPERATORS:
        return f"(({ctype})({arg(x)} {BIT_OPERATORS[op]} {arg(e.args[1])}))"
    bits = DataType(scalar_of(x.dtype)).bits
    wide = f"(uint64_t)(uint{bits}_t)({arg(x)})"
    if op == "tir.popcount":
        return f"(({ctype})__builtin_popcountll({wide}))"
    return f"(({ctype})({wide} == 0 ? {bits} : __builtin_clzll({wide}) - {64 - bits}))"


def _numeric_vector(dtype: str) -> bool:
    """Whether ``dtype`` is a vector of numbers of at least 8 bits (C compares those)."""
    t = DataType(dtype)
    return t.lanes > 1 and t.code in _NUMERIC and t.bits >= 8  # noqa: PLR2004


def _integer_vector(dtype: str) -> bool:
    t = DataType(dtype)
    return t.lanes > 1 and t.code in (DataTypeCode.INT, DataTypeCode.UINT) and t.bits >= 8  # noqa: PLR2004


def has_vector_type(dtype: str) -> bool:
    """Whether ``dtype``'s lanes fit a GCC/Clang vector type (a power of two)."""
    lanes = lanes_of(dtype)
    return lanes & (lanes - 1) == 0


def _unit_ramp(index: E.PrimExpr) -> E.PrimExpr | None:
    if isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and index.stride.value == 1:
        return index.base
    return None


def _libm(base: str, dtype: str) -> str:
    return base + "f" if scalar_of(dtype) == "float32" else base


def _int_literal(e: E.IntImm) -> str:
    if e.dtype == "bool":
        return "1" if e.value else "0"
    if e.dtype in ("int64", "uint64"):
        suffix = "ULL" if e.dtype == "uint64" else "LL"
        if e.value == -(2**63):
            return "INT64_MIN"
        return f"(({c_scalar_type(e.dtype)}){e.value}{suffix})"
    if e.dtype == "int32" and e.value == -(2**31):
        return "INT32_MIN"
    text = str(e.value) + ("U" if e.dtype.startswith("uint") else "")
    return f"({text})" if e.value < 0 else text


def _float_literal(e: E.FloatImm) -> str:
    value = e.value
    single = e.dtype == "float32"
    if math.isnan(value):
        return "NAN" if single else "((double)NAN)"
    if math.isinf(value):
        text = "INFINITY" if single else "((double)INFINITY)"
        return text if value > 0 else f"(-{text})"
    text = repr(value)
    if "e" not in text and "." not in text:
        text += ".0"
    text += "f" if single else ""
    return f"({text})" if value < 0 else text
