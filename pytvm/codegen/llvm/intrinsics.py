"""Math intrinsics of the loop IR as LLVM calls, with the C path's floating-point semantics.

The C path compiles with ``-O3 -fno-math-errno`` and no ``-ffast-math``: IEEE results, math
functions without ``errno`` (so the compiler may treat them as pure), and multiply-adds
contracted into FMA instructions. Here: every float instruction carries the ``contract`` flag
(and nothing else), functions LLVM knows (``exp``, ``log``, ``sqrt``, ``floor`` ...) are its
intrinsics, which it lowers to instructions or to the same ``libm`` calls, and ``tanh``/``erf``
are ``libm`` declarations marked pure. A vector call of an intrinsic stays one call (LLVM
splits it as the target needs; one ``libm`` call per lane where the target has no instruction).
Float32 ``exp``, ``log``, ``tanh``, ``sigmoid``, ``erf`` and ``pow`` never get here: the
expression emitter computes them as arithmetic (:mod:`pytvm.codegen.vector_math`).
"""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]

from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir.expr import is_float, lanes_of, scalar_of
from ..libm import BIT_OPERATORS, FLOAT_CHECKS, LIBM_FUNCTIONS, LLVM_INTRINSICS
from .types import I1, I32, value_type

__all__ = ["FLOAT_FLAGS", "MathCalls"]

#: Fast-math flags of every float instruction: contraction into FMA only, as GCC's default.
FLOAT_FLAGS = ("contract",)

#: LLVM intrinsics ``llvm.<name>`` (``tir.fmod`` is an instruction, ``frem``).
_INTRINSICS = {op: name for op, name in LIBM_FUNCTIONS.items() if name in LLVM_INTRINSICS}
#: ``libm`` calls: the functions LLVM has no intrinsic for.
_LIBM = {
    op: name
    for op, name in LIBM_FUNCTIONS.items()
    if name not in LLVM_INTRINSICS and op != "tir.fmod"
}


def _suffix(dtype: str) -> str:
    scalar = "f32" if scalar_of(dtype) == "float32" else "f64"
    lanes = lanes_of(dtype)
    return f"v{lanes}{scalar}" if lanes > 1 else scalar


class MathCalls:
    """Declares the intrinsics and ``libm`` functions a module calls, and emits the calls."""

    def __init__(self, module: ir.Module) -> None:
        self.module = module
        self._functions: dict[str, ir.Function] = {}

    def _function(self, name: str, ret: ir.Type, args: list[ir.Type], pure: bool) -> ir.Function:
        fn = self._functions.get(name)
        if fn is None:
            existing = self.module.globals.get(name)
            fn = existing or ir.Function(self.module, ir.FunctionType(ret, args), name=name)
            if pure and existing is None:
                fn.attributes.add("nounwind")
                fn.attributes.add("readnone")
            self._functions[name] = fn
        return fn

    def expect_true(self, builder: ir.IRBuilder, cond: ir.Value) -> ir.Value:
        """``cond``, marked as likely true (``llvm.expect``), for a scalar condition."""
        if cond.type != I1:
            return cond
        fn = self._function("llvm.expect.i1", I1, [I1, I1], pure=False)
        return builder.call(fn, [cond, ir.Constant(I1, 1)])

    def assume(self, builder: ir.IRBuilder, cond: ir.Value) -> None:
        """Tell LLVM that the i1 ``cond`` holds (``llvm.assume``): facts it cannot derive."""
        fn = self._function("llvm.assume", ir.VoidType(), [I1], pure=False)
        builder.call(fn, [cond])

    def call(self, builder: ir.IRBuilder, op: str, dtype: str, args: list[ir.Value]) -> ir.Value:
        """The value of intrinsic ``op`` of result type ``dtype`` on ``args``."""
        if not dtype.startswith("float"):
            raise TVMValueError(f"the LLVM code generator has no {op} for {dtype}")
        ty = value_type(dtype)
        if op == "tir.fmod":
            return builder.frem(args[0], args[1], flags=FLOAT_FLAGS)
        if op == "tir.sigmoid":
            one = _splat(ty, 1.0)
            exp = self.call(builder, "tir.exp", dtype, [builder.fneg(args[0], flags=FLOAT_FLAGS)])
            return builder.fdiv(one, builder.fadd(one, exp, flags=FLOAT_FLAGS), flags=FLOAT_FLAGS)
        if op == "tir.rsqrt":
            root = self.call(builder, "tir.sqrt", dtype, args)
            return builder.fdiv(_splat(ty, 1.0), root, flags=FLOAT_FLAGS)
        base = _INTRINSICS.get(op)
        if base is not None:
            fn = self._function(f"llvm.{base}.{_suffix(dtype)}", ty, [ty] * len(args), pure=False)
            return builder.call(fn, args, fastmath=FLOAT_FLAGS)
        base = _LIBM.get(op)
        if base is None:
            raise TVMValueError(f"the LLVM code generator has no function for intrinsic {op}")
        return self._libm(builder, base, dtype, args)

    @staticmethod
    def calls_libm(op: str) -> bool:
        """Whether intrinsic ``op`` is a ``libm`` call (float16 is computed in float64 for it,
        as the C path does).
        """
        return op in _LIBM

    def _libm(self, builder: ir.IRBuilder, base: str, dtype: str, args: list[ir.Value]) -> ir.Value:
        """A ``libm`` call per lane: ``<base>f`` for float32, ``<base>`` (in double) otherwise,
        as the C path calls it; ``ldexp``'s exponent is an ``int``.
        """
        single = scalar_of(dtype) == "float32"
        name = base + ("f" if single else "")
        real = ir.FloatType() if single else ir.DoubleType()
        params = [real, I32] if base == "ldexp" else [real] * len(args)
        fn = self._function(name, real, params, pure=True)
        scalar = value_type(scalar_of(dtype))

        def one(parts: list[ir.Value]) -> ir.Value:
            converted = [_convert(builder, v, t) for v, t in zip(parts, params, strict=True)]
            return _convert(builder, builder.call(fn, converted), scalar)

        lanes = lanes_of(dtype)
        if lanes == 1:
            return one(args)
        result: ir.Value = ir.Constant(value_type(dtype), ir.Undefined)
        for lane in range(lanes):
            index = ir.Constant(I32, lane)
            parts = [builder.extract_element(a, index) for a in args]
            result = builder.insert_element(result, one(parts), index)
        return result

    def inline(self, builder: ir.IRBuilder, e: E.Call, args: list[ir.Value]) -> ir.Value:  # noqa: PLR0911
        """A classification (``tir.isnan`` ...), bit operation or bit count (``libm.py``)."""
        op, x = e.op, args[0]
        src = e.args[0].dtype
        if op in FLOAT_CHECKS:
            if not is_float(src):
                return _splat(value_type(e.dtype), int(FLOAT_CHECKS[op]))
            if op == "tir.isnan":
                return builder.fcmp_unordered("uno", x, x)
            magnitude = self.call(builder, "tir.fabs", src, [x])
            inf = _splat(x.type, float("inf"))
            if op == "tir.isinf":
                return builder.fcmp_ordered("==", magnitude, inf)
            return builder.fcmp_ordered("<", magnitude, inf)
        signed = not scalar_of(src).startswith("uint")
        if op == "tir.bitwise_not":
            return builder.not_(x)
        if op in BIT_OPERATORS:
            y = args[1]
            emit = {
                "tir.bitwise_and": builder.and_,
                "tir.bitwise_or": builder.or_,
                "tir.bitwise_xor": builder.xor,
                "tir.shift_left": builder.shl,
                "tir.shift_right": builder.ashr if signed else builder.lshr,
            }[op]
            return emit(x, y)
        name = "ctlz" if op == "tir.clz" else "ctpop"
        suffix = _suffix_int(x.type)
        if name == "ctlz":
            fn = self._function(f"llvm.ctlz.{suffix}", x.type, [x.type, I1], pure=False)
            count = builder.call(fn, [x, ir.Constant(I1, 0)])  # clz(0) is the width
        else:
            fn = self._function(f"llvm.ctpop.{suffix}", x.type, [x.type], pure=False)
            count = builder.call(fn, [x])
        return _convert(builder, count, value_type(e.dtype), signed=False)


def _suffix_int(ty: ir.Type) -> str:
    if isinstance(ty, ir.VectorType):
        return f"v{ty.count}i{ty.element.width}"
    return f"i{ty.width}"


def _convert(builder: ir.IRBuilder, v: ir.Value, ty: ir.Type, signed: bool = True) -> ir.Value:
    """``v`` as a value of ``ty`` (float widths, int widths, int to float: as C converts)."""
    src = v.type
    if src == ty:
        return v
    floats = (ir.HalfType, ir.FloatType, ir.DoubleType)
    src_float, dst_float = isinstance(src, floats), isinstance(ty, floats)
    if src_float and dst_float:
        widen = _float_bits(src) < _float_bits(ty)
        return builder.fpext(v, ty) if widen else builder.fptrunc(v, ty)
    if dst_float:
        return builder.sitofp(v, ty) if signed else builder.uitofp(v, ty)
    if src_float:
        return builder.fptosi(v, ty)
    if _int_bits(src) < _int_bits(ty):
        return builder.sext(v, ty) if signed else builder.zext(v, ty)
    return builder.trunc(v, ty)


def _float_bits(ty: ir.Type) -> int:
    return {ir.HalfType: 16, ir.FloatType: 32, ir.DoubleType: 64}[type(ty)]


def _int_bits(ty: ir.Type) -> int:
    return int(ty.element.width if isinstance(ty, ir.VectorType) else ty.width)


def _splat(ty: ir.Type, value: float) -> ir.Constant:
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)
