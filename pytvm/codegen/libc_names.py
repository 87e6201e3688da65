"""Names the C library (and GCC's builtins) already use, which a kernel's symbol must avoid.

A kernel may be named after a math function (TVM's ``test_topi_math`` builds kernels named
``exp``, ``sin``, ``isnan`` ...). Generated code includes ``<math.h>``, ``<string.h>``,
``<stdint.h>`` and ``<stddef.h>``, calls ``libm``, and is linked with it, so such a kernel is
exported under ``KERNEL_SYMBOL_PREFIX + name`` (see ``abi.export_symbol``); the loader looks
the name up there first.
"""

from __future__ import annotations

__all__ = ["C_LIBRARY_NAMES", "C_MATH_FUNCTIONS"]

#: math.h's functions taking and returning ``double`` (``<name>f``: ``float``).
C_MATH_FUNCTIONS = _MATH = (
    "acos", "acosh", "asin", "asinh", "atan", "atan2", "atanh", "cbrt", "ceil", "copysign",
    "cos", "cosh", "erf", "erfc", "exp", "exp2", "expm1", "fabs", "fdim", "floor", "fma",
    "fmax", "fmin", "fmod", "frexp", "hypot", "ilogb", "ldexp", "lgamma", "llrint", "llround",
    "log", "log10", "log1p", "log2", "logb", "lrint", "lround", "modf", "nan", "nearbyint",
    "nextafter", "nexttoward", "pow", "remainder", "remquo", "rint", "round", "scalbln",
    "scalbn", "sin", "sinh", "sqrt", "tan", "tanh", "tgamma", "trunc",
    # glibc's extensions (declared under _DEFAULT_SOURCE)
    "exp10", "pow10", "gamma", "drem", "finite", "significand", "scalb", "j0", "j1", "jn",
    "y0", "y1", "yn", "sincos", "isinf", "isnan", "fmaxmag", "fminmag",
)  # fmt: skip
#: math.h's classification macros (a kernel of that name would be macro-expanded).
_MATH_MACROS = (
    "isfinite", "isnormal", "signbit", "fpclassify", "isgreater", "isgreaterequal",
    "isless", "islessequal", "islessgreater", "isunordered",
)  # fmt: skip
_OTHER = (
    # string.h and strings.h
    "memcpy", "memmove", "memset", "memcmp", "memchr", "strlen", "strcpy", "strncpy",
    "strcmp", "strncmp", "strcat", "strncat", "strchr", "strrchr", "strstr", "strdup",
    "strndup", "strtok", "strerror", "strspn", "strcspn", "strpbrk", "strcoll", "strxfrm",
    "index", "rindex", "bzero", "bcopy", "bcmp", "ffs", "strcasecmp", "strncasecmp",
    # stdlib.h and stdio.h names GCC treats as builtins
    "abs", "labs", "llabs", "div", "ldiv", "malloc", "calloc", "realloc", "free", "abort",
    "exit", "atexit", "atoi", "atol", "atof", "strtol", "strtod", "qsort", "bsearch", "rand",
    "srand", "getenv", "system", "printf", "fprintf", "sprintf", "snprintf", "puts", "putchar",
    "alloca",
)  # fmt: skip

#: Every name (and each ``f``/``l`` variant of a math function) a kernel symbol must avoid.
C_LIBRARY_NAMES = frozenset(
    {f"{base}{suffix}" for base in _MATH for suffix in ("", "f", "l")}
    | set(_MATH_MACROS)
    | set(_OTHER)
)
