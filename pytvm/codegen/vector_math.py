"""Calls of ``exp``, ``log``, ``tanh``, ``sigmoid``, ``erf`` and ``pow`` of float32 (and
float16, computed in float32) as arithmetic expressions, for both code generators.

``libm`` has no vector functions, so a vector call would be one library call per lane (``tanh``
was 48 to 200 times slower than ONNX Runtime's), and a loop of scalar calls is one no compiler
vectorizes. Both code generators ask :func:`expand` for every call and emit what it returns
instead: the expressions of :mod:`pytvm.topi.fast_math` and :mod:`pytvm.topi.fast_pow`
(arithmetic, selects and bit operations, which become vector instructions, and a scalar loop of
them one that LLVM's and the C compiler's vectorizers take), with each shared value bound once
by a ``Let``. Their accuracy is stated there (``exp``/``log`` within 2 ulp, ``tanh``/``sigmoid``
3, ``pow`` 1, ``erf`` 4e-7 absolute; libm's special values). The C generator keeps a scalar
``pow`` as ``powf`` (GCC does not vectorize the loop of its expression). ``tir.sigmoid`` usually
arrives lowered to ``1 / (1 + exp(-x))`` (``tir.transform.lower_intrin``): 0 below -88.7. This
is the code generators' lowering of intrinsics (TVM's ``FLowerIntrinsic`` rules), done after
vectorizing so that every ``tir.tanh``, whoever wrote it, is covered.
"""

from __future__ import annotations

from collections.abc import Callable

from ..tir import expr as E
from ..tir.expr import lanes_of, scalar_of, with_lanes
from ..topi.fast_math import erf_expr, exp_expr, log_expr, sigmoid_expr, tanh_expr
from ..topi.fast_pow import pow_expr

__all__ = ["VECTOR_MATH", "expand"]

_UNARY: dict[str, Callable[[E.PrimExpr, bool], E.PrimExpr]] = {
    "tir.exp": exp_expr,
    "tir.log": log_expr,
    "tir.tanh": tanh_expr,
    "tir.sigmoid": sigmoid_expr,
    "tir.erf": erf_expr,
}

#: The intrinsics whose float32/float16 calls :func:`expand` replaces.
VECTOR_MATH = frozenset([*_UNARY, "tir.pow"])


def expand(call: E.Call) -> E.PrimExpr | None:
    """The arithmetic expression computing ``call`` (a scalar or a vector), or None where it
    stays a call (another dtype, another intrinsic).
    """
    lanes = lanes_of(call.dtype)
    scalar = scalar_of(call.dtype)
    if call.op not in VECTOR_MATH or scalar not in ("float32", "float16"):
        return None
    if any(a.dtype != call.dtype for a in call.args):
        return None
    args = call.args
    if scalar == "float16":
        wide = with_lanes("float32", lanes)
        args = tuple(E.Cast(wide, a) for a in args)
    if call.op == "tir.pow":
        value = pow_expr(args[0], args[1], let=True)
    else:
        value = _UNARY[call.op](args[0], True)
    return value if scalar == "float32" else E.Cast(call.dtype, value)
