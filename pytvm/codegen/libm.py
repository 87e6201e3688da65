"""The C math library (``libm``) function that computes each float intrinsic of the loop IR."""

from __future__ import annotations

__all__ = ["LIBM_FUNCTIONS"]

#: ``tir.<op>`` → the double-precision ``libm`` name (its float32 form adds ``f``). The C code
#: generator calls these; the LLVM one uses its intrinsic of the same name where LLVM has one.
LIBM_FUNCTIONS = {
    "tir.exp": "exp",
    "tir.exp2": "exp2",
    "tir.log": "log",
    "tir.log2": "log2",
    "tir.log10": "log10",
    "tir.sqrt": "sqrt",
    "tir.tanh": "tanh",
    "tir.erf": "erf",
    "tir.pow": "pow",
    "tir.fabs": "fabs",
    "tir.floor": "floor",
    "tir.ceil": "ceil",
    "tir.round": "nearbyint",
    "tir.trunc": "trunc",
    "tir.fmod": "fmod",
    "tir.sin": "sin",
    "tir.cos": "cos",
}
