"""``tir.x86.dot_u8s8_s32`` in LLVM: ``llvm.x86.avx512.vpdpbusd.{128,256,512}`` for 4, 8 or 16
lanes (LLVM encodes the 128/256-bit forms as AVX-VNNI or AVX-512 VNNI, whichever the machine
has), plain integer arithmetic on bytes otherwise. The operator library emits the call only for
targets with the instruction; an ``acc + dot(0, a, b)`` (a reduction's update) becomes one
instruction on ``acc``.
"""

from __future__ import annotations

from llvmlite import ir  # type: ignore[import-untyped]

from ...tir import expr as E
from ...tir.dot_product import is_dot_u8s8_s32

__all__ = ["emit_dot_u8s8_s32", "fused_dot_add"]

_VNNI_LANES = (4, 8, 16)
I8 = ir.IntType(8)
I32 = ir.IntType(32)


def _is_zero(e: E.PrimExpr) -> bool:
    if isinstance(e, E.Broadcast):
        return _is_zero(e.value)
    return isinstance(e, E.IntImm) and e.value == 0


def fused_dot_add(e: E.PrimExpr) -> tuple[E.PrimExpr, E.Call] | None:
    """``(acc, dot)`` when ``e`` is ``acc + dot_u8s8_s32(0, a, b)`` (either order)."""
    if not isinstance(e, E.Add):
        return None
    for acc, dot in ((e.a, e.b), (e.b, e.a)):
        if isinstance(dot, E.Call) and is_dot_u8s8_s32(dot) and _is_zero(dot.args[0]):
            return acc, dot
    return None


def emit_dot_u8s8_s32(
    builder: ir.IRBuilder,
    module: ir.Module,
    acc: ir.Value,
    a: ir.Value,
    b: ir.Value,
    lanes: int,
) -> ir.Value:
    """``acc + dot4(a, b)`` per int32 lane of ``lanes``-wide values."""
    if lanes in _VNNI_LANES:
        vec = ir.VectorType(I32, lanes)
        name = f"llvm.x86.avx512.vpdpbusd.{lanes * 32}"
        fn = module.globals.get(name)
        if fn is None:
            fn = ir.Function(module, ir.FunctionType(vec, [vec, vec, vec]), name=name)
        return builder.call(fn, [acc, a, b])
    return _portable(builder, acc, a, b, lanes)


def _portable(
    builder: ir.IRBuilder, acc: ir.Value, a: ir.Value, b: ir.Value, lanes: int
) -> ir.Value:
    """Byte products summed in plain IR: zero-/sign-extended bytes of each lane, multiplied,
    and the four products of a lane added to it.
    """
    wide = ir.VectorType(I32, 4 * lanes)
    data = builder.zext(builder.bitcast(a, ir.VectorType(I8, 4 * lanes)), wide)
    weight = builder.sext(builder.bitcast(b, ir.VectorType(I8, 4 * lanes)), wide)
    products = builder.mul(data, weight)
    total = acc
    for k in range(4):
        if lanes == 1:
            picked = builder.extract_element(products, ir.Constant(I32, k))
        else:
            index = ir.Constant(ir.VectorType(I32, lanes), [4 * i + k for i in range(lanes)])
            picked = builder.shuffle_vector(products, ir.Constant(wide, ir.Undefined), index)
        total = builder.add(total, picked)
    return total
