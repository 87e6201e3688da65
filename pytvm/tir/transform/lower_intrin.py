"""``lower_intrin``: intrinsics and index divisions become what C has.

``tir.sigmoid(x)`` becomes ``1 / (1 + exp(-x))`` and ``tir.rsqrt(x)`` ``1 / sqrt(x)``. An integer
floor division or modulo becomes C's ``/`` or ``%`` when both operands are provably
non-negative (under the loop ranges in scope), otherwise the exact sign-correct form with
``/``, ``%`` and ``Select``; a float one becomes ``floor(a / b)`` (``a - floor(a / b) * b``).
On an Arm target whose FPU has no rounding instruction (Cortex-M4's FPv4: libm's ``rintf`` is
some 30 instructions of bit manipulation), a float32 ``tir.round`` / ``tir.nearbyint`` becomes
the exact arithmetic form :func:`round_half_even` (ties to even, ``-0``, NaN and large values
kept). Other float intrinsics (``tir.exp`` ...) stay calls: the code generator maps them to
``expf``...
"""

from __future__ import annotations

from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from ...target import Target
from .. import expr as E
from .. import stmt as S
from ..arith import Analyzer
from ..expr import PrimExpr, Range, is_float
from ..function import IRModule, PrimFunc
from ..functor import IRMutator

__all__ = ["LowerIntrin", "lower_intrin", "round_half_even"]

#: ``2 ** 23``: float32 values at least this large are integers.
_F32_INTEGRAL = 8388608.0
#: FPUs with a rounding instruction (``VRINTR``): Armv8-M's FPv5 and later.
_FPU_ROUNDS = ("fpv5", "auto", "neon-fp-armv8", "fp-armv8", "crypto-neon-fp-armv8")


def _const(value: float, like: PrimExpr) -> PrimExpr:
    return E.const(value, like.dtype)


def round_half_even(x: PrimExpr) -> PrimExpr:
    """``nearbyint(x)`` of a float32 ``x`` in the default rounding mode, as arithmetic: below
    ``2 ** 23`` in magnitude, ``(|x| + 2 ** 23) - 2 ** 23`` rounds ``|x|`` to an integer, ties
    to even, and takes back the sign of ``x``; larger values, infinities and NaN are ``x``.
    """
    mag = E.Call(x.dtype, "tir.fabs", (x,))
    big = _const(_F32_INTEGRAL, x)
    rounded = E.Sub(E.Add(mag, big), big)
    return E.Select(E.LT(mag, big), E.Call(x.dtype, "tir.copysign", (rounded, x)), x)


def _inline_round() -> bool:
    """Whether the current target is an Arm CPU with an FPU that lacks ``VRINTR``."""
    target = Target.current(allow_none=True)
    if target is None or target.is_host or target.arch != "arm" or not target.fpu:
        return False
    return not target.fpu.startswith(_FPU_ROUNDS)


class _Lower(IRMutator):
    def __init__(self, analyzer: Analyzer) -> None:
        self.ana = analyzer
        self.inline_round = _inline_round()

    def visit_For(self, node: S.For) -> Any:
        with self.ana.bound(node.loop_var, Range(node.min, node.extent)):
            return self.generic_visit(node)

    def visit_Call(self, node: E.Call) -> Any:
        node = self.generic_visit(node)
        if node.op == "tir.sigmoid":
            x = node.args[0]
            neg = E.Sub(_const(0.0, x), x)
            exp = E.Call(node.dtype, "tir.exp", (neg,))
            return E.Div(_const(1.0, x), E.Add(_const(1.0, x), exp))
        if node.op == "tir.rsqrt":
            x = node.args[0]
            return E.Div(_const(1.0, x), E.Call(node.dtype, "tir.sqrt", (x,)))
        if (
            self.inline_round
            and node.op in ("tir.round", "tir.nearbyint")
            and (node.dtype == "float32")
        ):
            return round_half_even(node.args[0])
        return node

    def _nonneg(self, e: PrimExpr) -> bool:
        return self.ana.const_int_bound(e).min_value >= 0

    def _positive(self, e: PrimExpr) -> bool:
        return self.ana.const_int_bound(e).min_value > 0

    def visit_FloorDiv(self, node: E.FloorDiv) -> Any:
        a, b = self.visit(node.a), self.visit(node.b)
        if is_float(node.dtype):
            return E.Call(node.dtype, "tir.floor", (E.Div(a, b),))
        if self._nonneg(a) and self._positive(b):
            return E.Div(a, b)
        q, r = E.Div(a, b), E.Mod(a, b)
        return E.Select(self._needs_fix(r, b), E.Sub(q, _const(1, q)), q)

    def visit_FloorMod(self, node: E.FloorMod) -> Any:
        a, b = self.visit(node.a), self.visit(node.b)
        if is_float(node.dtype):
            return E.Sub(a, E.Mul(E.Call(node.dtype, "tir.floor", (E.Div(a, b),)), b))
        if self._nonneg(a) and self._positive(b):
            return E.Mod(a, b)
        r = E.Mod(a, b)
        return E.Select(self._needs_fix(r, b), E.Add(r, b), r)

    def _needs_fix(self, r: PrimExpr, b: PrimExpr) -> PrimExpr:
        """Whether truncation rounded up: ``r != 0`` and ``sign(r) != sign(b)``."""
        zero = _const(0, r)
        if self._positive(b):
            return E.LT(r, zero)
        nonzero = E.NE(r, zero)
        signs = E.NE(E.LT(r, zero), E.LT(b, zero))
        return E.And(nonzero, signs)


def _lower_func(func: PrimFunc) -> PrimFunc:
    body = _Lower(Analyzer.for_function(func)).visit(func.body)
    return func if body is func.body else func.with_body(body)


def lower_intrin(mod: IRModule, ctx: PassContext) -> IRModule:
    """Lower sigmoid, rsqrt and floor division/modulo to C operations."""
    del ctx
    return map_functions(mod, _lower_func)


LowerIntrin = Pass("lower_intrin", 0, lower_intrin)
