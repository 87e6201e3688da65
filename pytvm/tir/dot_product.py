"""The 8-bit dot-product intrinsic ``tir.x86.dot_u8s8_s32``: four u8 x s8 products per int32
lane, added to an int32 accumulator (x86 ``vpdpbusd``, AVX-512 VNNI / AVX-VNNI).

``dot_u8s8_s32(acc, a, b)``: each 32-bit lane of ``a`` (uint32) holds four unsigned bytes, each
lane of ``b`` (int32) four signed bytes, byte ``k`` of a lane at bits ``8k .. 8k + 7``; the
result is ``acc + sum_k a.byte[k] * b.byte[k]`` per lane, in int32 (wrapping, as the
instruction; no intermediate saturation). It is elementwise over lanes, so the vectorizer widens
it; the code generators emit the instruction where the lanes fill a vector register of a target
that has it (the operator library emits the call only for such targets) and plain integer
arithmetic otherwise.

Examples
--------
>>> from pytvm import tir
>>> from pytvm.tir.dot_product import dot_u8s8_s32
>>> a, b = tir.Var("a", "uint32"), tir.Var("b", "int32")
>>> dot_u8s8_s32(tir.const(0, "int32"), a, b).op.name
'tir.x86.dot_u8s8_s32'
"""

from __future__ import annotations

from ..ffi.errors import TVMTypeError
from .expr import Call, ExprLike, PrimExpr, convert, lanes_of, scalar_of, with_lanes
from .intrinsic import register_op

__all__ = ["DOT_U8S8_S32", "dot_u8s8_s32", "is_dot_u8s8_s32"]

#: The registered name of the intrinsic.
DOT_U8S8_S32 = register_op("tir.x86.dot_u8s8_s32").name


def dot_u8s8_s32(acc: ExprLike, a: ExprLike, b: ExprLike) -> PrimExpr:
    """``acc + dot4(a, b)`` per int32 lane (see the module docstring)."""
    acc_, a_, b_ = convert(acc), convert(a), convert(b)
    kinds = (scalar_of(acc_.dtype), scalar_of(a_.dtype), scalar_of(b_.dtype))
    if kinds != ("int32", "uint32", "int32"):
        raise TVMTypeError(
            f"dot_u8s8_s32: operands are {acc_.dtype}, {a_.dtype}, {b_.dtype}; expected an "
            "int32 accumulator, uint32 (four u8) and int32 (four s8) of the same lanes"
        )
    lanes = {lanes_of(acc_.dtype), lanes_of(a_.dtype), lanes_of(b_.dtype)}
    if len(lanes) != 1:
        raise TVMTypeError(f"dot_u8s8_s32: operand lanes differ ({sorted(lanes)})")
    return Call(with_lanes("int32", lanes.pop()), DOT_U8S8_S32, (acc_, a_, b_))


def is_dot_u8s8_s32(e: PrimExpr) -> bool:
    """Whether ``e`` is a call of the intrinsic."""
    return isinstance(e, Call) and e.op == DOT_U8S8_S32
