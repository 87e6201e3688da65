"""LLVM values of loop-IR expressions, scalars and vectors alike, with C's semantics.

Vectors are LLVM vector types, so the host's SIMD instructions come straight from the IR:
``Ramp`` and ``Broadcast`` build vectors, a load or store at a unit-stride ramp is one vector
access, and arithmetic, comparisons, selects and casts work on whole vectors. Any other vector
expression (a gather, a lazy ``if_then_else``) is computed lane by lane as scalars and packed.

Semantics follow the C code generator: signed integer arithmetic does not wrap (``nsw``),
division truncates, ``floordiv``/``floormod`` round toward negative infinity, ``min``/``max``
are ``a < b ? a : b``, float comparisons are ordered (``!=`` unordered), ``&&``/``||`` and
``if_then_else`` evaluate their second part only when needed (it may read past a buffer),
``Select`` evaluates both sides unless one of them reads memory or divides.
"""

from __future__ import annotations

from collections.abc import Callable

from llvmlite import ir  # type: ignore[import-untyped]

from ...ffi.dtype import DataType
from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir.dot_product import is_dot_u8s8_s32
from ...tir.expr import is_float, lanes_of, scalar_of, with_lanes
from ..abi import EXTERNAL_CALL_OPS
from ..libm import BIT_COUNTS, BIT_OPERATORS, FLOAT_CHECKS
from ..speculation import speculatable
from ..vector_math import expand as expand_vector_math
from .dot_product import emit_dot_u8s8_s32, fused_dot_add
from .intrinsics import FLOAT_FLAGS, MathCalls
from .types import I1, I32, PTR, const_int, element_bytes, is_signed, memory_type, value_type

__all__ = ["ExprEmitter", "lane_of", "unit_ramp_base"]

_CMP = {E.EQ: "==", E.NE: "!=", E.LT: "<", E.LE: "<=", E.GT: ">", E.GE: ">="}
_SIMPLE = (E.Add, E.Sub, E.Mul, E.Div, E.Mod)


class ExprEmitter:
    """Emits expressions at ``builder``'s position; variables are looked up by identity."""

    def __init__(self, builder: ir.IRBuilder, math: MathCalls) -> None:
        self.builder = builder
        self.math = math
        self.values: dict[int, ir.Value] = {}
        #: Emits the calls out of the kernel (``EXTERNAL_CALL_OPS``; None: refused).
        self.calls: Callable[[ExprEmitter, E.Call], ir.Value] | None = None
        self._keep: list[E.Var] = []  # variables made here, so their ids stay unique

    def truth(self, e: E.PrimExpr) -> ir.Value:
        """``e`` as a condition (``i1``): C's ``e != 0`` for a number."""
        value = self(e)
        return value if scalar_of(e.dtype) == "bool" else self.cast(value, e.dtype, "bool")

    def typed(self, e: E.PrimExpr, dtype: str) -> ir.Value:
        """The value of ``e`` converted to ``dtype`` (as C converts)."""
        return self.cast(self(e), e.dtype, dtype)

    def bind(self, var: E.Var, value: ir.Value) -> None:
        """Make ``var`` stand for ``value``."""
        self.values[id(var)] = value
        self._keep.append(var)

    # ------------------------------------------------------------------ dispatch

    def __call__(self, e: E.PrimExpr) -> ir.Value:  # noqa: PLR0911, PLR0912 - one case per node
        """The value of ``e``."""
        b = self.builder
        if isinstance(e, E.Var):
            value = self.values.get(id(e))
            if value is None:
                raise TVMValueError(f"the LLVM code generator found unbound variable {e.name}")
            return value
        if isinstance(e, E.IntImm):
            return const_int(value_type(e.dtype), e.value)
        if isinstance(e, E.FloatImm):
            return ir.Constant(value_type(e.dtype), e.value)
        lanes = lanes_of(e.dtype)
        if isinstance(e, E.Broadcast):
            return self.splat(self(e.value), lanes)
        if isinstance(e, E.Ramp):
            return self._ramp(e)
        if isinstance(e, E.BufferLoad):
            return self._load(e)
        if isinstance(e, E.Cast):
            return self.cast(self(e.value), e.value.dtype, e.dtype)
        if isinstance(e, (E.And, E.Or)) and lanes == 1 and not speculatable(e.b):
            return self._short_circuit(e)
        if (fused := fused_dot_add(e)) is not None:  # a reduction's acc + dot(0, a, b)
            acc, dot = fused
            return self._dot(dot, self(acc))
        if isinstance(e, E.BinaryOp):
            return self.binary(type(e), self(e.a), self(e.b), e.a.dtype)
        if isinstance(e, E.Not):
            a = self(e.a)
            if scalar_of(e.dtype) == "bool":
                return b.xor(a, _splat_const(a.type, 1))
            return b.zext(b.icmp_unsigned("==", a, _splat_const(a.type, 0)), a.type)
        if isinstance(e, E.Select):
            return self._select(e, e.condition, e.true_value, e.false_value)
        if isinstance(e, E.Let):
            self.bind(e.var, self(e.value))
            return self(e.body)
        if isinstance(e, E.Call):
            return self._call(e)
        raise TVMValueError(f"the LLVM code generator cannot emit {type(e).__name__} {e}")

    # ------------------------------------------------------------------ vectors

    def splat(self, scalar: ir.Value, lanes: int) -> ir.Value:
        """A vector of ``lanes`` copies of ``scalar``."""
        ty = ir.VectorType(scalar.type, lanes)
        one = self.builder.insert_element(
            ir.Constant(ty, ir.Undefined), scalar, ir.Constant(I32, 0)
        )
        zeros = ir.Constant(ir.VectorType(I32, lanes), [0] * lanes)
        return self.builder.shuffle_vector(one, ir.Constant(ty, ir.Undefined), zeros)

    def _ramp(self, e: E.Ramp) -> ir.Value:
        base = self.splat(self(e.base), e.lanes)
        ty = value_type(e.dtype)
        if isinstance(e.stride, E.IntImm):
            steps = ir.Constant(ty, [e.stride.value * k for k in range(e.lanes)])
            return self.builder.add(base, steps, flags=_int_flags(e.dtype))
        offsets = ir.Constant(ty, list(range(e.lanes)))
        scaled = self.builder.mul(self.splat(self(e.stride), e.lanes), offsets)
        return self.builder.add(base, scaled, flags=_int_flags(e.dtype))

    def lanewise(self, e: E.PrimExpr) -> ir.Value:
        """``e`` computed one lane at a time (as scalar expressions) and packed into a vector."""
        result: ir.Value = ir.Constant(value_type(e.dtype), ir.Undefined)
        for lane in range(lanes_of(e.dtype)):
            scalar = self(lane_of(e, lane, self.vector_lane))
            result = self.builder.insert_element(result, scalar, ir.Constant(I32, lane))
        return result

    def vector_lane(self, var: E.Var, lane: int) -> E.Var:
        """A scalar variable bound to lane ``lane`` of the vector bound to ``var``."""
        scalar = E.Var(f"{var.name}_lane{lane}", scalar_of(var.dtype))
        self.bind(scalar, self.builder.extract_element(self(var), ir.Constant(I32, lane)))
        return scalar

    # ------------------------------------------------------------------ memory

    def address(self, buffer: E.Buffer, index: ir.Value) -> ir.Value:
        """The address of element ``index`` of ``buffer``."""
        elem = memory_type(scalar_of(buffer.dtype))
        return self.builder.gep(self(buffer.data), [index], inbounds=True, source_etype=elem)

    def _load(self, e: E.BufferLoad) -> ir.Value:
        (index,) = e.indices
        lanes = lanes_of(e.dtype)
        base = unit_ramp_base(index) if lanes > 1 else index
        if base is None:
            return self.lanewise(e)
        ptr = self.address(e.buffer, self(base))
        loaded = self.builder.load(ptr, typ=memory_type(e.dtype), align=element_bytes(e.dtype))
        if scalar_of(e.dtype) == "bool":
            return self.builder.icmp_unsigned("!=", loaded, _splat_const(loaded.type, 0))
        return loaded

    # ------------------------------------------------------------------ operators

    def binary(self, op: type, a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:  # noqa: PLR0911
        """``a op b`` for operands of ``dtype`` (``op`` a BinaryOp class)."""
        bld = self.builder
        if op in _CMP:
            sym = _CMP[op]
            if is_float(dtype):
                return (bld.fcmp_unordered if sym == "!=" else bld.fcmp_ordered)(sym, a, b)
            return (bld.icmp_signed if is_signed(dtype) else bld.icmp_unsigned)(sym, a, b)
        if op in (E.Min, E.Max):
            return bld.select(self.binary(E.LT if op is E.Min else E.GT, a, b, dtype), a, b)
        if op is E.And:
            return bld.and_(a, b)
        if op is E.Or:
            return bld.or_(a, b)
        if op in (E.FloorDiv, E.FloorMod):
            return self._floor_op(op, a, b, dtype)
        if op not in _SIMPLE:
            raise TVMValueError(f"the LLVM code generator cannot emit {op.__name__}")
        if is_float(dtype):
            emit = {E.Add: bld.fadd, E.Sub: bld.fsub, E.Mul: bld.fmul, E.Div: bld.fdiv}
            if op is E.Mod:
                return bld.frem(a, b, flags=FLOAT_FLAGS)
            return emit[op](a, b, flags=FLOAT_FLAGS)
        if op is E.Div:
            return (bld.sdiv if is_signed(dtype) else bld.udiv)(a, b)
        if op is E.Mod:
            return (bld.srem if is_signed(dtype) else bld.urem)(a, b)
        emit = {E.Add: bld.add, E.Sub: bld.sub, E.Mul: bld.mul}
        return emit[op](a, b, flags=_int_flags(dtype))

    def _floor_op(self, op: type, a: ir.Value, b: ir.Value, dtype: str) -> ir.Value:
        bld = self.builder
        if is_float(dtype):
            down = self.math.call(bld, "tir.floor", dtype, [bld.fdiv(a, b, flags=FLOAT_FLAGS)])
            if op is E.FloorDiv:
                return down
            return bld.fsub(a, bld.fmul(down, b, flags=FLOAT_FLAGS), flags=FLOAT_FLAGS)
        if not is_signed(dtype):
            return (bld.udiv if op is E.FloorDiv else bld.urem)(a, b)
        zero = _splat_const(a.type, 0)
        b_neg = bld.icmp_signed("<", b, zero)
        if op is E.FloorDiv:  # q - 1 when q * b != a and the signs of a and b differ
            q = bld.sdiv(a, b)
            inexact = bld.icmp_signed("!=", bld.mul(q, b), a)
            differ = bld.xor(bld.icmp_signed("<", a, zero), b_neg)
            fix = bld.and_(inexact, differ)
            return bld.select(fix, bld.sub(q, _splat_const(a.type, 1)), q)
        r = bld.srem(a, b)  # r + b when r != 0 and the signs of r and b differ
        nonzero = bld.icmp_signed("!=", r, zero)
        differ = bld.xor(bld.icmp_signed("<", r, zero), b_neg)
        return bld.select(bld.and_(nonzero, differ), bld.add(r, b), r)

    def _double_to_half(self, v: ir.Value, lanes: int) -> ir.Value:
        """float64 -> float16 rounded once, without the runtime's ``__truncdfhf2``: through a
        float32 rounded to odd (truncated toward zero, its last bit set when inexact), which
        float -> half then rounds to nearest-even exactly as a direct conversion would.
        """
        bld = self.builder

        def vec(t: ir.Type) -> ir.Type:
            return ir.VectorType(t, lanes) if lanes > 1 else t

        f32, i32 = vec(ir.FloatType()), vec(I32)
        single = bld.fptrunc(v, f32)
        back = bld.fpext(single, v.type)
        inexact = bld.fcmp_unordered("!=", back, v)  # NaN: its payload keeps it a NaN
        dtype = "float64" if lanes == 1 else f"float64x{lanes}"
        mag_back = self.math.call(bld, "tir.fabs", dtype, [back])
        mag_v = self.math.call(bld, "tir.fabs", dtype, [v])
        away = bld.fcmp_ordered(">", mag_back, mag_v)  # rounded away from zero: step back
        bits = bld.bitcast(single, i32)
        bits = bld.sub(bits, bld.zext(away, i32))
        bits = bld.or_(bits, bld.zext(inexact, i32))
        return bld.fptrunc(bld.bitcast(bits, f32), vec(ir.HalfType()))

    def cast(self, v: ir.Value, src: str, dst: str) -> ir.Value:  # noqa: PLR0911
        """``v`` of type ``src`` converted to ``dst`` as C converts."""
        bld = self.builder
        to = value_type(dst)
        if v.type == to:
            return v
        if scalar_of(dst) == "bool":
            if is_float(src):
                return bld.fcmp_unordered("!=", v, _splat_const(v.type, 0.0))
            return bld.icmp_unsigned("!=", v, _splat_const(v.type, 0))
        scalar_to = to.element if isinstance(to, ir.VectorType) else to
        scalar_from = v.type.element if isinstance(v.type, ir.VectorType) else v.type
        if PTR in (scalar_from, scalar_to):
            raise TVMValueError(f"the LLVM code generator cannot cast {src} to {dst}")
        if is_float(src):
            if is_float(dst):
                if DataType(src).bits == 64 and DataType(dst).bits == 16:  # noqa: PLR2004
                    return self._double_to_half(v, lanes_of(dst))
                wider = DataType(dst).bits > DataType(src).bits
                return (bld.fpext if wider else bld.fptrunc)(v, to)
            return (bld.fptosi if is_signed(dst) else bld.fptoui)(v, to)
        if is_float(dst):
            return (bld.sitofp if is_signed(src) else bld.uitofp)(v, to)
        src_bits, dst_bits = scalar_from.width, scalar_to.width
        if dst_bits < src_bits:
            return bld.trunc(v, to)
        if dst_bits > src_bits:
            return (bld.sext if is_signed(src) else bld.zext)(v, to)
        return v

    # ------------------------------------------------------------------ conditionals

    def conditional(
        self, cond: ir.Value, then: Callable[[], ir.Value], other: Callable[[], ir.Value]
    ) -> ir.Value:
        """``cond ? then() : other()``, each side computed only on its branch."""
        bld = self.builder
        fn = bld.function
        then_bb, else_bb, merge = (fn.append_basic_block(n) for n in ("then", "else", "merge"))
        bld.cbranch(cond, then_bb, else_bb)
        bld.position_at_end(then_bb)
        t = then()
        then_end = bld.block
        bld.branch(merge)
        bld.position_at_end(else_bb)
        f = other()
        else_end = bld.block
        bld.branch(merge)
        bld.position_at_end(merge)
        phi = bld.phi(t.type)
        phi.add_incoming(t, then_end)
        phi.add_incoming(f, else_end)
        return phi

    def _select(self, e: E.PrimExpr, cond: E.PrimExpr, t: E.PrimExpr, f: E.PrimExpr) -> ir.Value:
        if speculatable(t) and speculatable(f):
            return self.builder.select(self.truth(cond), self(t), self(f))
        if lanes_of(e.dtype) > 1:
            return self.lanewise(e)
        return self.conditional(self.truth(cond), lambda: self(t), lambda: self(f))

    def _short_circuit(self, e: E.And | E.Or) -> ir.Value:
        first = self.truth(e.a)
        if isinstance(e, E.And):
            return self.conditional(first, lambda: self.truth(e.b), lambda: ir.Constant(I1, 0))
        return self.conditional(first, lambda: ir.Constant(I1, 1), lambda: self.truth(e.b))

    def _call(self, e: E.Call) -> ir.Value:  # noqa: PLR0911 - one case per intrinsic kind
        if e.op in EXTERNAL_CALL_OPS:
            if self.calls is None:
                raise TVMValueError(f"the LLVM code generator cannot call {e.op} here")
            return self.calls(self, e)
        if e.op == "tir.if_then_else":
            cond, t, f = e.args
            return self._select(e, cond, t, f)
        if e.op == "tir.likely":
            return self.math.expect_true(self.builder, self(e.args[0]))
        if e.op == "tir.reinterpret":
            return self.builder.bitcast(self(e.args[0]), value_type(e.dtype))
        if is_dot_u8s8_s32(e):
            return self._dot(e, self(e.args[0]))
        if e.op in FLOAT_CHECKS or e.op in BIT_OPERATORS or e.op in BIT_COUNTS:
            return self.math.inline(self.builder, e, [self(a) for a in e.args])
        if e.op == "tir.bitwise_not":
            return self.math.inline(self.builder, e, [self(e.args[0])])
        expanded = expand_vector_math(e)  # a vector exp/log/tanh/...: arithmetic, not libm
        if expanded is not None:
            return self(expanded)
        if scalar_of(e.dtype) == "float16" and self.math.calls_libm(e.op):
            wide = with_lanes("float64", lanes_of(e.dtype))
            args = [self.typed(a, wide) if is_float(a.dtype) else self(a) for a in e.args]
            return self.cast(self.math.call(self.builder, e.op, wide, args), wide, e.dtype)
        return self.math.call(self.builder, e.op, e.dtype, [self(a) for a in e.args])

    def _dot(self, e: E.Call, acc: ir.Value) -> ir.Value:
        _, a, b = (self(x) for x in e.args)
        return emit_dot_u8s8_s32(self.builder, self.math.module, acc, a, b, lanes_of(e.dtype))


def unit_ramp_base(index: E.PrimExpr) -> E.PrimExpr | None:
    """The base of ``index`` if it is a ramp of stride 1, else None."""
    if isinstance(index, E.Ramp) and isinstance(index.stride, E.IntImm) and index.stride.value == 1:
        return index.base
    return None


def lane_of(  # noqa: PLR0911 - one case per node kind
    e: E.PrimExpr, lane: int, vector_var: Callable[[E.Var, int], E.Var]
) -> E.PrimExpr:
    """The scalar expression of lane ``lane`` of ``e``; ``vector_var`` gives a scalar variable
    for one lane of a vector variable bound outside ``e``.
    """
    if lanes_of(e.dtype) == 1:
        return e

    def sub(x: E.PrimExpr) -> E.PrimExpr:
        return lane_of(x, lane, vector_var)

    if isinstance(e, E.Var):
        return vector_var(e, lane)
    if isinstance(e, E.Ramp):
        return E.Add(e.base, E.Mul(e.stride, E.IntImm(e.stride.dtype, lane)))
    if isinstance(e, E.Broadcast):
        return e.value
    if isinstance(e, E.BufferLoad):
        return E.BufferLoad(e.buffer, tuple(sub(i) for i in e.indices))
    if isinstance(e, E.BinaryOp):
        return type(e)(sub(e.a), sub(e.b))
    if isinstance(e, E.Not):
        return E.Not(sub(e.a))
    if isinstance(e, E.Select):
        return E.Select(sub(e.condition), sub(e.true_value), sub(e.false_value))
    if isinstance(e, E.Cast):
        return E.Cast(scalar_of(e.dtype), sub(e.value))
    if isinstance(e, E.Call):
        return E.Call(scalar_of(e.dtype), e.op, tuple(sub(a) for a in e.args))
    if isinstance(e, E.Let):
        var = E.Var(f"{e.var.name}_lane{lane}", scalar_of(e.var.dtype))
        value = sub(e.value)

        def inner(v: E.Var, k: int) -> E.Var:
            return var if v is e.var else vector_var(v, k)

        return E.Let(var, value, lane_of(e.body, lane, inner))
    raise TVMValueError(f"the LLVM code generator cannot split {type(e).__name__} into lanes")


def _int_flags(dtype: str) -> tuple[str, ...]:
    return ("nsw",) if is_signed(scalar_of(dtype)) else ()


def _splat_const(ty: ir.Type, value: float) -> ir.Constant:
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)
