"""Symbolic integer sets: the interval an expression covers while some variables range freely.

Bound inference asks "which elements of ``A`` does ``A[i*4 + j]`` touch for ``j`` in
``[0, 4)``?" and gets ``[i*4, i*4 + 3]``: the expression is put in linear form, each relaxed
variable contributes the end of its range that its coefficient's sign selects, and monotonic
operations (``//`` and ``/`` by a positive constant, ``min``, ``max``) map the ends through.
An end that cannot be bounded is ``None`` (unbounded).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .. import expr as E
from ..expr import IntImm, PrimExpr, Range, Var
from ..functor import IRVisitor

__all__ = ["IntSet", "eval_int_set"]


@dataclass(frozen=True, slots=True, eq=False)
class IntSet:
    """The closed interval ``[min_value, max_value]``; ``None`` ends are unbounded."""

    min_value: PrimExpr | None
    max_value: PrimExpr | None

    def is_everything(self) -> bool:
        """Whether both ends are unbounded."""
        return self.min_value is None and self.max_value is None

    def is_bounded(self) -> bool:
        """Whether both ends are known."""
        return self.min_value is not None and self.max_value is not None

    def to_range(self) -> Range:
        """The set as ``Range(min, max - min + 1)`` (it must be bounded)."""
        if self.min_value is None or self.max_value is None:
            raise ValueError("IntSet.to_range: the set is unbounded")
        return Range(self.min_value, self.max_value - self.min_value + 1)


Ends = tuple[PrimExpr | None, PrimExpr | None]
Simplify = Callable[[PrimExpr], PrimExpr]


def _uses(e: PrimExpr, names: Mapping[Var, object]) -> bool:
    found = [False]

    class _Find(IRVisitor):
        def visit_Var(self, node: Var) -> None:
            if node in names:
                found[0] = True

    _Find().visit(e)
    return found[0]


def _lift(
    op: Callable[[PrimExpr, PrimExpr], PrimExpr], a: PrimExpr | None, b: PrimExpr | None
) -> PrimExpr | None:
    return None if a is None or b is None else op(a, b)


class _IntervalEvaluator:
    def __init__(
        self, dom: Mapping[Var, IntSet], simplify: Simplify, sign: Callable[[PrimExpr], int]
    ) -> None:
        self.dom = dom
        self.simplify = simplify
        self.sign = sign  # 1: provably >= 0, -1: provably <= 0, 0: unknown

    def ends(self, e: PrimExpr) -> Ends:  # noqa: PLR0911 - one case per node kind
        if not _uses(e, self.dom):
            return e, e
        if isinstance(e, Var):
            s = self.dom[e]
            return s.min_value, s.max_value
        if isinstance(e, (E.Add, E.Sub)):
            (al, ah), (bl, bh) = self.ends(e.a), self.ends(e.b)
            if isinstance(e, E.Add):
                return _lift(E.Add, al, bl), _lift(E.Add, ah, bh)
            return _lift(E.Sub, al, bh), _lift(E.Sub, ah, bl)
        if isinstance(e, E.Mul):
            return self._mul(e)
        if isinstance(e, (E.FloorDiv, E.Div)) and isinstance(e.b, IntImm) and e.b.value > 0:
            lo, hi = self.ends(e.a)
            cls = type(e)
            return _lift(cls, lo, e.b), _lift(cls, hi, e.b)
        if isinstance(e, E.FloorMod) and isinstance(e.b, IntImm) and e.b.value > 0:
            lo, hi = self.ends(e.a)
            if lo is not None and hi is not None:
                same = self.simplify(E.FloorDiv(hi, e.b) - E.FloorDiv(lo, e.b))
                if isinstance(same, IntImm) and same.value == 0:
                    return E.FloorMod(lo, e.b), E.FloorMod(hi, e.b)
            return IntImm(e.dtype, 0), IntImm(e.dtype, e.b.value - 1)
        if isinstance(e, (E.Min, E.Max)):
            (al, ah), (bl, bh) = self.ends(e.a), self.ends(e.b)
            pick = type(e)
            return _lift(pick, al, bl), _lift(pick, ah, bh)
        if isinstance(e, E.Select) or (isinstance(e, E.Call) and e.op == "tir.if_then_else"):
            t, f = (e.true_value, e.false_value) if isinstance(e, E.Select) else e.args[1:3]
            (tl, th), (fl, fh) = self.ends(t), self.ends(f)
            return _lift(E.Min, tl, fl), _lift(E.Max, th, fh)
        return None, None

    def _mul(self, e: E.Mul) -> Ends:
        for x, c in ((e.a, e.b), (e.b, e.a)):
            if not _uses(c, self.dom):
                lo, hi = self.ends(x)
                sign = self.sign(c)
                if sign > 0:
                    return _lift(E.Mul, lo, c), _lift(E.Mul, hi, c)
                if sign < 0:
                    return _lift(E.Mul, hi, c), _lift(E.Mul, lo, c)
                return None, None
        (al, ah), (bl, bh) = self.ends(e.a), self.ends(e.b)
        if all(x is not None and self.sign(x) > 0 for x in (al, bl)):
            return _lift(E.Mul, al, bl), _lift(E.Mul, ah, bh)
        return None, None


def eval_int_set(
    e: PrimExpr,
    dom: Mapping[Var, Range | IntSet],
    simplify: Simplify,
    sign: Callable[[PrimExpr], int],
) -> IntSet:
    """The set of values of ``e`` while each variable of ``dom`` ranges over its set."""
    sets: dict[Var, IntSet] = {}
    for var, value in dom.items():
        if isinstance(value, Range):
            last = simplify(value.min + value.extent - 1)
            sets[var] = IntSet(simplify(value.min), last)
        else:
            sets[var] = value
    lo, hi = _IntervalEvaluator(sets, simplify, sign).ends(simplify(e))
    return IntSet(None if lo is None else simplify(lo), None if hi is None else simplify(hi))
