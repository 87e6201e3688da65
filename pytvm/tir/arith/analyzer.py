"""``Analyzer``: what is known about integer variables, and the questions asked of it."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from ...ffi.errors import TVMTypeError, TVMValueError
from .. import expr as E
from ..expr import IntImm, PrimExpr, Range, Var, convert, is_int
from ..function import PrimFunc
from .int_bound import ConstIntBound, Interval
from .int_set import IntSet, eval_int_set
from .linear import Linear, expr_key
from .rewrite import Simplifier

__all__ = ["Analyzer"]


class Analyzer:
    """Integer arithmetic under known variable ranges (TVM's ``arith.Analyzer``).

    Examples
    --------
    >>> from pytvm import tir
    >>> from pytvm.tir.arith import Analyzer
    >>> x, y = tir.Var("x"), tir.Var("y")
    >>> ana = Analyzer()
    >>> ana.bind(y, tir.Range.from_min_extent(0, 4))
    >>> print(ana.simplify((x * 4 + y) // 4))
    x
    >>> ana.can_prove(y < 4)
    True
    >>> ana.const_int_bound(y * 2 + 1)
    ConstIntBound(min_value=1, max_value=7)
    """

    def __init__(self) -> None:
        self._bounds: dict[Var, Interval] = {}
        self._ranges: dict[Var, tuple[PrimExpr, PrimExpr]] = {}
        self._subst: dict[Var, PrimExpr] = {}
        self._known: set[Any] = set()
        self._simplifier = Simplifier(self._bounds, self._ranges, self._subst, self._known)

    # ------------------------------------------------------------------ facts

    def bind(self, var: Var, value: Range | PrimExpr | int, allow_override: bool = False) -> None:
        """Declare that ``var`` lies in ``value`` (a ``Range``) or equals ``value`` (an expression).

        Raises
        ------
        TVMValueError
            When ``var`` is already bound and ``allow_override`` is false.
        """
        if not isinstance(var, Var):
            raise TVMTypeError(f"Analyzer.bind: expected a tir.Var, got {type(var).__name__}")
        if not allow_override and (var in self._bounds or var in self._subst):
            raise TVMValueError(
                f"Analyzer.bind: variable {var.name} is already bound; pass allow_override=True "
                "to rebind it"
            )
        self.unbind(var)
        if isinstance(value, Range):
            start = self.simplify(value.min.astype(var.dtype))
            extent = self.simplify(value.extent.astype(var.dtype))
            lo = self._simplifier.interval(start)[0]
            hi = self._simplifier.interval(self.simplify(start + extent - 1))[1]
            self._bounds[var] = (lo, hi)
            self._ranges[var] = (start, extent)
        else:
            expr = self.simplify(convert(value))
            self._subst[var] = expr
            if is_int(expr.dtype):
                self._bounds[var] = self._simplifier.interval(expr)
        self._simplifier.forget()

    def update(self, var: Var, bound: ConstIntBound, allow_override: bool = False) -> None:
        """Declare constant bounds of ``var`` (e.g. a shape dimension is ``>= 0``)."""
        if not allow_override and var in self._bounds:
            raise TVMValueError(
                f"Analyzer.update: variable {var.name} is already bound; pass "
                "allow_override=True to rebind it"
            )
        self.unbind(var)
        self._bounds[var] = bound.interval()
        self._simplifier.forget()

    def unbind(self, var: Var) -> None:
        """Forget what is known about ``var``."""
        self._bounds.pop(var, None)
        self._ranges.pop(var, None)
        self._subst.pop(var, None)
        self._simplifier.forget()

    @contextmanager
    def bound(self, var: Var, value: Range | PrimExpr | int) -> Iterator[None]:
        """Bind ``var`` for the duration of a ``with`` block (the old fact comes back after)."""
        saved = (self._bounds.get(var), self._ranges.get(var), self._subst.get(var))
        self.bind(var, value, allow_override=True)
        try:
            yield
        finally:
            self.unbind(var)
            if saved[0] is not None:
                self._bounds[var] = saved[0]
            if saved[1] is not None:
                self._ranges[var] = saved[1]
            if saved[2] is not None:
                self._subst[var] = saved[2]
            self._simplifier.forget()

    @contextmanager
    def constraint_scope(self, condition: PrimExpr) -> Iterator[None]:
        """Assume ``condition`` holds inside a ``with`` block (TVM's name).

        Each conjunct becomes a known fact; ``var < c``-style conjuncts also tighten the
        constant bound of ``var``.
        """
        added: list[Any] = []
        saved: dict[Var, Interval | None] = {}
        for conjunct in _conjuncts(self.simplify(convert(condition))):
            key = expr_key(conjunct)
            if key not in self._known:
                self._known.add(key)
                added.append(key)
            self._tighten(conjunct, saved)
        self._simplifier.forget()
        try:
            yield
        finally:
            for key in added:
                self._known.discard(key)
            for var, old in saved.items():
                if old is None:
                    self._bounds.pop(var, None)
                else:
                    self._bounds[var] = old
            self._simplifier.forget()

    def _tighten(self, cond: PrimExpr, saved: dict[Var, Interval | None]) -> None:
        if not isinstance(cond, E.CmpOp) or not isinstance(cond.b, IntImm):
            return
        var, c = cond.a, cond.b.value
        if not isinstance(var, Var):
            return
        lo, hi = self._bounds.get(var, (-float("inf"), float("inf")))
        if isinstance(cond, E.LT):
            hi = min(hi, c - 1)
        elif isinstance(cond, E.LE):
            hi = min(hi, c)
        elif isinstance(cond, E.GT):
            lo = max(lo, c + 1)
        elif isinstance(cond, E.GE):
            lo = max(lo, c)
        elif isinstance(cond, E.EQ):
            lo, hi = max(lo, c), min(hi, c)
        else:
            return
        saved.setdefault(var, self._bounds.get(var))
        self._bounds[var] = (lo, hi)

    @staticmethod
    def for_function(func: PrimFunc) -> Analyzer:
        """An analyzer knowing that the shape variables of ``func``'s buffers are ``>= 0``."""
        ana = Analyzer()
        for buf in func.buffer_map.values():
            for dim in buf.shape:
                if isinstance(dim, Var):
                    ana.update(dim, ConstIntBound(0, ConstIntBound.POS_INF), allow_override=True)
        return ana

    # ------------------------------------------------------------------ questions

    def linear_form(self, expr: PrimExpr | int) -> Linear:
        """``expr``, simplified, as a linear sum of terms."""
        return self._simplifier.decompose(self.simplify(expr))

    def interval(self, expr: PrimExpr) -> Interval:
        """The constant interval of a simplified ``expr`` (ends may be infinite)."""
        return self._simplifier.interval(expr)

    def simplify(self, expr: PrimExpr | int) -> PrimExpr:
        """An equal, simpler expression (constant folding, linear index arithmetic, bounds)."""
        return self._simplifier.simplify(convert(expr))

    def rewrite_simplify(self, expr: PrimExpr | int) -> PrimExpr:
        """TVM's name for :meth:`simplify`."""
        return self.simplify(expr)

    def canonical_simplify(self, expr: PrimExpr | int) -> PrimExpr:
        """TVM's name for :meth:`simplify`."""
        return self.simplify(expr)

    def can_prove(self, cond: PrimExpr | bool) -> bool:
        """Whether ``cond`` holds for every value of the bound variables."""
        value = self.simplify(convert(cond))
        return isinstance(value, IntImm) and value.value != 0

    def can_prove_equal(self, a: PrimExpr | int, b: PrimExpr | int) -> bool:
        """Whether ``a == b`` always holds."""
        return self.can_prove(E.binary(E.EQ, a, b))

    def int_set(self, expr: PrimExpr | int, dom_map: Mapping[Var, Range | IntSet]) -> IntSet:
        """The symbolic interval of ``expr`` while each variable of ``dom_map`` ranges freely.

        ``None`` ends are unbounded (a load, a product of two relaxed values of unknown sign).
        """

        def sign(e: PrimExpr) -> int:
            bound = self.const_int_bound(e)
            return 1 if bound.min_value >= 0 else -1 if bound.max_value <= 0 else 0

        return eval_int_set(convert(expr), dom_map, self.simplify, sign)

    def const_int_bound(self, expr: PrimExpr | int) -> ConstIntBound:
        """Constant bounds of integer ``expr`` (``NEG_INF``/``POS_INF`` where unknown)."""
        value = self.simplify(expr)
        lo, hi = self._simplifier.interval(value)
        if is_int(value.dtype) and not isinstance(value, IntImm):
            lin = self._simplifier.decompose(value)
            lo, hi = self._simplifier.linear_interval(lin)
        return ConstIntBound.from_interval(lo, hi)


def _conjuncts(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, E.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    if isinstance(cond, E.Call) and cond.op == "tir.likely":
        return _conjuncts(cond.args[0])
    return [cond]
