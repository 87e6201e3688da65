"""Math intrinsics of the loop IR as LLVM calls, with the C path's floating-point semantics.

The C path compiles with ``-O3 -fno-math-errno`` and no ``-ffast-math``: IEEE results, math
functions without ``errno`` (so the compiler may treat them as pure), and multiply-adds
contracted into FMA instructions. Here: every float instruction carries the ``contract`` flag
(and nothing else), functions LLVM knows (``exp``, ``log``, ``sqrt``, ``floor`` ...) are its
intrinsics, which it lowers to instructions or to the same ``libm`` calls, and ``tanh``/``erf``
are ``libm`` declarations marked pure. A vector call of an intrinsic stays one call (LLVM
splits it as the target needs); a vector ``tanh``/``erf`` calls ``libm`` once per lane.
"""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]

from ...ffi.errors import TVMValueError
from ...tir.expr import lanes_of, scalar_of
from ..libm import LIBM_FUNCTIONS
from .types import I1, I32, value_type

__all__ = ["FLOAT_FLAGS", "MathCalls"]

#: Fast-math flags of every float instruction: contraction into FMA only, as GCC's default.
FLOAT_FLAGS = ("contract",)

#: ``libm`` calls: LLVM has no intrinsic for these.
_LIBM = {op: LIBM_FUNCTIONS[op] for op in ("tir.tanh", "tir.erf")}
#: LLVM intrinsics ``llvm.<name>`` (``tir.fmod`` is an instruction, ``frem``).
_INTRINSICS = {
    op: name for op, name in LIBM_FUNCTIONS.items() if op not in _LIBM and op != "tir.fmod"
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
        name = base + ("f" if scalar_of(dtype) == "float32" else "")
        scalar = value_type(scalar_of(dtype))
        fn = self._function(name, scalar, [scalar] * len(args), pure=True)
        lanes = lanes_of(dtype)
        if lanes == 1:
            return builder.call(fn, args)
        result: ir.Value = ir.Constant(ty, ir.Undefined)
        for lane in range(lanes):
            index = ir.Constant(I32, lane)
            parts = [builder.extract_element(a, index) for a in args]
            result = builder.insert_element(result, builder.call(fn, parts), index)
        return result


def _splat(ty: ir.Type, value: float) -> ir.Constant:
    if isinstance(ty, ir.VectorType):
        return ir.Constant(ty, [value] * ty.count)
    return ir.Constant(ty, value)
