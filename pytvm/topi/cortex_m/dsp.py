"""The Arm DSP extension's packed 16-bit arithmetic as extern C calls: ``pytvm_smlad``,
``pytvm_sxtb16`` and friends, and the C that defines them.

A kernel calls them with ``tir.call_pure_extern``; the C code generator prints, instead of a
prototype, the helper's definition from :data:`C_HELPERS` (before the kernels). On a target with
the extension (``__ARM_FEATURE_DSP``: Cortex-M4/M7/M33) each helper is one instruction (the
ACLE intrinsics of ``<arm_acle.h>``; the rotated byte extensions as ``sxtb16 rd, rn, ror #8``);
elsewhere (the host build that checks a kernel's numerics) a portable C function with the same
semantics. A 32-bit word of two int16 halves is ``int32``: the low half is bits 0-15.

- ``pytvm_sxtb16(x)``: bytes 0 and 2 of ``x`` sign-extended into the low and high halves.
- ``pytvm_uxtb16(x)``: bytes 0 and 2 zero-extended (``x & 0x00ff00ff``).
- ``pytvm_sxtb16_ror8(x)`` / ``pytvm_uxtb16_ror8(x)``: the same of bytes 1 and 3.
- ``pytvm_smlad(a, b, acc)``: ``acc + lo(a) * lo(b) + hi(a) * hi(b)`` (wrapping int32);
  ``pytvm_smuad(a, b)``: the same without ``acc``.

Examples
--------
>>> from pytvm import tir
>>> from pytvm.topi.cortex_m.dsp import dot4_u8s8
>>> a, w = tir.Var("a", "uint32"), tir.Var("w", "int32")
>>> dot4_u8s8(a, w).dtype
'int32'
"""

from __future__ import annotations

from ...tir.call_builtin import call_pure_extern
from ...tir.expr import PrimExpr

__all__ = [
    "C_HELPERS",
    "dot4_u8s8",
    "smlad",
    "smuad",
    "sxtb16",
    "sxtb16_ror8",
    "uxtb16",
    "uxtb16_ror8",
]

_ACLE = "#if defined(__ARM_FEATURE_DSP)\n#include <arm_acle.h>\n"


def _helper(name: str, params: str, dsp: str, portable: str) -> str:
    """A helper defined by ``dsp`` (statements) on a DSP target and by ``portable`` elsewhere."""
    head = f"PYTVM_INLINE int32_t {name}({params}) {{"
    return f"{_ACLE}{head} {dsp} }}\n#else\n{head} {portable} }}\n#endif"


def _rotated(name: str, insn: str, portable: str) -> str:
    asm = f'int32_t r; __asm__("{insn} %0, %1, ror #8" : "=r"(r) : "r"(x)); return r;'
    return _helper(name, "int32_t x", asm, portable)


#: ``x`` with bytes 0 and 2 (of ``u``, a ``uint32_t``) sign-extended into int16 halves.
_SXT = (
    "uint32_t lo = (uint32_t)(int32_t)(int8_t)(u & 0xffu) & 0xffffu; "
    "uint32_t hi = (uint32_t)(int32_t)(int8_t)((u >> 16) & 0xffu); "
    "return (int32_t)(lo | (hi << 16));"
)

#: Every helper's C definition, by the name a kernel calls.
C_HELPERS: dict[str, str] = {
    "pytvm_smlad": _helper(
        "pytvm_smlad",
        "int32_t a, int32_t b, int32_t acc",
        "return __smlad(a, b, acc);",
        "int32_t lo = (int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff); "
        "int32_t hi = (int32_t)(int16_t)((uint32_t)a >> 16) "
        "* (int32_t)(int16_t)((uint32_t)b >> 16); "
        "return (int32_t)((uint32_t)acc + (uint32_t)lo + (uint32_t)hi);",
    ),
    "pytvm_smuad": _helper(
        "pytvm_smuad",
        "int32_t a, int32_t b",
        "return __smuad(a, b);",
        "int32_t lo = (int32_t)(int16_t)(a & 0xffff) * (int32_t)(int16_t)(b & 0xffff); "
        "int32_t hi = (int32_t)(int16_t)((uint32_t)a >> 16) "
        "* (int32_t)(int16_t)((uint32_t)b >> 16); "
        "return (int32_t)((uint32_t)lo + (uint32_t)hi);",
    ),
    "pytvm_sxtb16": _helper(
        "pytvm_sxtb16", "int32_t x", "return __sxtb16(x);", "uint32_t u = (uint32_t)x; " + _SXT
    ),
    "pytvm_uxtb16": _helper(
        "pytvm_uxtb16",
        "int32_t x",
        "return (int32_t)__uxtb16((uint32_t)x);",
        "return (int32_t)((uint32_t)x & 0x00ff00ffu);",
    ),
    "pytvm_sxtb16_ror8": _rotated(
        "pytvm_sxtb16_ror8", "sxtb16", "uint32_t u = (uint32_t)x >> 8; " + _SXT
    ),
    "pytvm_uxtb16_ror8": _rotated(
        "pytvm_uxtb16_ror8", "uxtb16", "return (int32_t)(((uint32_t)x >> 8) & 0x00ff00ffu);"
    ),
}


def _as_int32(x: PrimExpr) -> PrimExpr:
    return x if x.dtype == "int32" else x.astype("int32")


def smlad(a: PrimExpr, b: PrimExpr, acc: PrimExpr) -> PrimExpr:
    """``acc + lo(a) * lo(b) + hi(a) * hi(b)`` of int16 halves (``__smlad``)."""
    return call_pure_extern("int32", "pytvm_smlad", _as_int32(a), _as_int32(b), _as_int32(acc))


def smuad(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    """``lo(a) * lo(b) + hi(a) * hi(b)`` of int16 halves (``__smuad``)."""
    return call_pure_extern("int32", "pytvm_smuad", _as_int32(a), _as_int32(b))


def sxtb16(x: PrimExpr) -> PrimExpr:
    """Bytes 0 and 2 of ``x`` sign-extended into int16 halves (``__sxtb16``)."""
    return call_pure_extern("int32", "pytvm_sxtb16", _as_int32(x))


def uxtb16(x: PrimExpr) -> PrimExpr:
    """Bytes 0 and 2 of ``x`` zero-extended into int16 halves (``__uxtb16``)."""
    return call_pure_extern("int32", "pytvm_uxtb16", _as_int32(x))


def sxtb16_ror8(x: PrimExpr) -> PrimExpr:
    """Bytes 1 and 3 of ``x`` sign-extended into int16 halves (``sxtb16 rd, rn, ror #8``)."""
    return call_pure_extern("int32", "pytvm_sxtb16_ror8", _as_int32(x))


def uxtb16_ror8(x: PrimExpr) -> PrimExpr:
    """Bytes 1 and 3 of ``x`` zero-extended into int16 halves (``uxtb16 rd, rn, ror #8``)."""
    return call_pure_extern("int32", "pytvm_uxtb16_ror8", _as_int32(x))


def dot4_u8s8(a: PrimExpr, w: PrimExpr) -> PrimExpr:
    """The four byte products of ``a`` (uint32: four unsigned bytes) and ``w`` (int32: four
    signed bytes), summed in int32: two ``SMLAD`` of the halves the byte extensions give.
    """
    inner = smuad(uxtb16_ror8(a), sxtb16_ror8(w))
    return smlad(uxtb16(a), sxtb16(w), inner)
