"""The C math library (``libm``) function that computes each float intrinsic of the loop IR, and
the other intrinsics both code generators compute inline (classification, bit operations).
"""

from __future__ import annotations

__all__ = ["BIT_COUNTS", "BIT_OPERATORS", "FLOAT_CHECKS", "LIBM_FUNCTIONS", "LLVM_INTRINSICS"]

#: ``tir.<op>`` → the double-precision ``libm`` name (its float32 form adds ``f``). The C code
#: generator calls these; the LLVM one uses its intrinsic where ``LLVM_INTRINSICS`` has one.
LIBM_FUNCTIONS = {
    "tir.exp": "exp",
    "tir.exp2": "exp2",
    "tir.exp10": "exp10",
    "tir.log": "log",
    "tir.log2": "log2",
    "tir.log10": "log10",
    "tir.log1p": "log1p",
    "tir.sqrt": "sqrt",
    "tir.tanh": "tanh",
    "tir.erf": "erf",
    "tir.pow": "pow",
    "tir.fabs": "fabs",
    "tir.floor": "floor",
    "tir.ceil": "ceil",
    "tir.round": "nearbyint",
    "tir.nearbyint": "nearbyint",
    "tir.trunc": "trunc",
    "tir.fmod": "fmod",
    "tir.sin": "sin",
    "tir.cos": "cos",
    "tir.tan": "tan",
    "tir.asin": "asin",
    "tir.acos": "acos",
    "tir.atan": "atan",
    "tir.sinh": "sinh",
    "tir.cosh": "cosh",
    "tir.asinh": "asinh",
    "tir.acosh": "acosh",
    "tir.atanh": "atanh",
    "tir.atan2": "atan2",
    "tir.hypot": "hypot",
    "tir.copysign": "copysign",
    "tir.nextafter": "nextafter",
    "tir.ldexp": "ldexp",
}

#: The ``libm`` functions LLVM has intrinsics of (``llvm.<name>.f32`` ...), which it lowers to
#: instructions or to the same calls.
LLVM_INTRINSICS = frozenset(
    {
        "exp", "exp2", "log", "log2", "log10", "sqrt", "pow", "fabs", "floor", "ceil",
        "nearbyint", "trunc", "sin", "cos", "copysign",
    }
)  # fmt: skip

#: Classification of a float (a ``bool`` per lane; constant for an integer argument: never NaN
#: or infinite, always finite).
FLOAT_CHECKS = {"tir.isnan": False, "tir.isinf": False, "tir.isfinite": True}

#: Bitwise intrinsics of integers as C's operators (``tir.bitwise_not`` is ``~``).
BIT_OPERATORS = {
    "tir.bitwise_and": "&",
    "tir.bitwise_or": "|",
    "tir.bitwise_xor": "^",
    "tir.shift_left": "<<",
    "tir.shift_right": ">>",
}

#: Bit counts of an integer: leading zeros (the width for 0) and set bits.
BIT_COUNTS = ("tir.clz", "tir.popcount")
