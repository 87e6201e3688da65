"""The simplifier: constant folding, canonical linear sums, index division, min/max, comparisons.

Integer expressions are rewritten through :class:`Linear` sums, so ``(x*4 + y) // 4`` becomes
``x`` once ``0 <= y < 4`` is known, and ``x//c*c + x%c`` becomes ``x``. Comparisons, ``min`` and
``max`` are decided from constant bounds, refined by replacing bound loop variables with the
symbolic ends of their ranges (so ``i < n`` holds for ``i`` in ``[0, n)``).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from .. import expr as E
from ..expr import IntImm, PrimExpr, Var, is_int, lanes_of
from .int_bound import Interval, interval_of
from .linear import Linear, expr_key
from .refine import paired_divisions, symbolic_end

__all__ = ["Simplifier"]

_CMP_FLIP: dict[type, type] = {
    E.LT: E.GE, E.LE: E.GT, E.GT: E.LE, E.GE: E.LT, E.EQ: E.NE, E.NE: E.EQ,
}  # fmt: skip


def _int_scalar(dtype: str) -> bool:
    return is_int(dtype) and lanes_of(dtype) == 1


def _wrap(value: int, dtype: str) -> int:
    if dtype == "bool":
        return int(bool(value))
    bits = int(dtype.lstrip("uint") or 32)
    value &= (1 << bits) - 1
    if dtype.startswith("int") and value >= 1 << (bits - 1):
        value -= 1 << bits
    return value


class Simplifier:
    """Rewrites expressions to simpler equal ones, under known variable bounds.

    Parameters
    ----------
    bounds
        Constant interval of each bound variable.
    ranges
        Symbolic ``(min, extent)`` of each loop variable, for symbolic bounds.
    subst
        Variables to replace by an expression.
    known
        Keys (:func:`expr_key`) of conditions known to hold.
    """

    def __init__(
        self,
        bounds: dict[Var, Interval],
        ranges: dict[Var, tuple[PrimExpr, PrimExpr]],
        subst: dict[Var, PrimExpr],
        known: set[Any],
    ) -> None:
        self.bounds = bounds
        self.ranges = ranges
        self.subst = subst
        self.known = known
        # Results by node identity while the facts above stay the same (an unrolled body shares
        # its subtrees without the unrolled variable): see ``forget``.
        self._memo: dict[int, tuple[PrimExpr, PrimExpr]] = {}

    def forget(self) -> None:
        """Drop remembered results: call whenever ``bounds``, ``ranges``, ``subst`` or
        ``known`` change.
        """
        if self._memo:
            self._memo.clear()

    # ------------------------------------------------------------------ entry

    def simplify(self, e: PrimExpr) -> PrimExpr:
        """The simplified ``e``."""
        if isinstance(e, (IntImm, E.FloatImm, E.StringImm)):
            return e
        hit = self._memo.get(id(e))
        if hit is not None and hit[0] is e:
            return hit[1]
        out = self._simplify(e)
        self._memo[id(e)] = (e, out)
        return out

    def _simplify(self, e: PrimExpr) -> PrimExpr:  # noqa: PLR0911, PLR0912 - dispatch
        if isinstance(e, Var):
            found = self.subst.get(e)
            if found is not None:
                return found
            lo, hi = self.bounds.get(e, (0, -1))
            return IntImm(e.dtype, int(lo)) if lo == hi else e
        if isinstance(e, (E.Add, E.Sub, E.Mul)) and _int_scalar(e.dtype):
            return self.finish(self.linear(e))
        if isinstance(e, (E.FloorDiv, E.FloorMod, E.Div, E.Mod)):
            return self.division(type(e), self.simplify(e.a), self.simplify(e.b))
        if isinstance(e, (E.Min, E.Max)):
            return self.minmax(type(e), self.simplify(e.a), self.simplify(e.b))
        if isinstance(e, E.CmpOp):
            return self.compare(type(e), self.simplify(e.a), self.simplify(e.b))
        if isinstance(e, (E.And, E.Or)):
            return self.logic(type(e), self.simplify(e.a), self.simplify(e.b))
        if isinstance(e, E.Not):
            return self.negate(self.simplify(e.a))
        if isinstance(e, E.Select):
            return self.select(e)
        if isinstance(e, E.Call):
            return self.call(e)
        if isinstance(e, E.Cast):
            return self.cast(e.dtype, self.simplify(e.value))
        if isinstance(e, E.Let):
            return self.let(e)
        if isinstance(e, E.BinaryOp):
            a, b = self.simplify(e.a), self.simplify(e.b)
            if a is e.a and b is e.b:
                return e
            return E.binary(type(e), a, b)
        return self.rebuild(e)  # type: ignore[no-any-return]

    def rebuild(self, e: Any) -> Any:
        """``e`` with every expression child simplified."""
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(e):
            old = getattr(e, f.name)
            if isinstance(old, PrimExpr):
                new: Any = self.simplify(old)
            elif isinstance(old, tuple) and old and all(isinstance(x, PrimExpr) for x in old):
                new = tuple(self.simplify(x) for x in old)
                if all(a is b for a, b in zip(new, old, strict=True)):
                    new = old
            else:
                continue
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(e, **changes) if changes else e

    # ------------------------------------------------------------------ bounds

    def interval(self, e: PrimExpr) -> Interval:
        """Constant interval of a simplified expression."""
        return interval_of(e, self.bounds)

    def linear_interval(self, lin: Linear) -> Interval:
        """Interval of a linear sum, tightened with the symbolic ends of loop ranges."""
        lo, hi = self.interval(lin.to_expr())
        hi = min(hi, symbolic_end(self, lin, upper=True))
        lo = max(lo, symbolic_end(self, lin, upper=False))
        rest, extra = paired_divisions(self, lin)
        if extra is not None:
            rest_lo, rest_hi = self.interval(rest.to_expr())
            lo, hi = max(lo, rest_lo + extra[0]), min(hi, rest_hi + extra[1])
        return (lo, hi)

    # ------------------------------------------------------------------ linear sums

    def linear(self, e: PrimExpr) -> Linear:
        """``e`` (not yet simplified) as a linear sum of simplified terms."""
        if isinstance(e, (E.Add, E.Sub)) and _int_scalar(e.dtype):
            return self.linear(e.a).add(self.linear(e.b), 1 if isinstance(e, E.Add) else -1)
        if isinstance(e, E.Mul) and _int_scalar(e.dtype):
            a, b = self.linear(e.a), self.linear(e.b)
            if a.is_const():
                return b.scale(a.const)
            if b.is_const():
                return a.scale(b.const)
            return Linear.of_term(E.Mul(self.finish(a), self.finish(b)))
        return self.decompose(self.simplify(e))

    def decompose(self, s: PrimExpr) -> Linear:
        """A simplified expression as a linear sum (structure only, no rewriting)."""
        if isinstance(s, IntImm):
            return Linear.of_const(s.dtype, s.value)
        if isinstance(s, (E.Add, E.Sub)) and _int_scalar(s.dtype):
            return self.decompose(s.a).add(self.decompose(s.b), 1 if isinstance(s, E.Add) else -1)
        if isinstance(s, E.Mul) and _int_scalar(s.dtype):
            if isinstance(s.b, IntImm):
                return self.decompose(s.a).scale(s.b.value)
            if isinstance(s.a, IntImm):
                return self.decompose(s.b).scale(s.a.value)
        return Linear.of_term(s)

    def finish(self, lin: Linear) -> PrimExpr:
        """The linear sum as an expression, after merging ``x//c*c`` with ``x%c``."""
        changed = True
        while changed:
            changed = False
            for term, coeff in list(lin.terms.values()):
                if not (isinstance(term, (E.FloorDiv, E.FloorMod)) and isinstance(term.b, IntImm)):
                    continue
                merged = self._merge(lin, term, coeff)
                if merged is not None:
                    lin, changed = merged, True
                    break
        return lin.to_expr()

    def _merge(self, lin: Linear, term: Any, coeff: int) -> Linear | None:
        c = term.b.value
        if c <= 0:
            return None
        if isinstance(term, E.FloorMod):
            # k*(x % c) + k*c*(x // c) == k*x
            partner = E.FloorDiv(term.a, term.b)
            if lin.coeff_of(partner) != coeff * c:
                return None
            out = lin.copy()
            out.add_term(term, -coeff)
            out.add_term(partner, -coeff * c)
            return out.add(self.decompose(term.a), coeff)
        if coeff % c:
            return None
        # m*c*(x // c) - m*x == -m*(x % c)
        m = coeff // c
        x = self.decompose(term.a)
        if x.is_const() or any(lin.coeff_of(t) != -m * k for t, k in x.terms.values()):
            return None
        out = lin.add(x, m)
        out.add_term(term, -coeff)
        return out.add(self.decompose(self.division(E.FloorMod, term.a, term.b)), -m)

    # ------------------------------------------------------------------ division

    def division(self, cls: type[E.BinaryOp], a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``cls(a, b)`` simplified (operands already simplified)."""
        if isinstance(a, IntImm) and isinstance(b, IntImm) and b.value != 0:
            return E.binary(cls, a, b)
        if not (_int_scalar(a.dtype) and isinstance(b, IntImm) and b.value > 0):
            return E.binary(cls, a, b)
        if cls in (E.Div, E.Mod):
            if self.interval(a)[0] < 0:
                return E.binary(cls, a, b)
            cls = E.FloorDiv if cls is E.Div else E.FloorMod
        lin = self.decompose(a)
        c = b.value
        if cls is E.FloorDiv:
            q, r = Linear(a.dtype), Linear(a.dtype)
            for term, coeff in lin.terms.values():
                if coeff % c == 0:
                    q.add_term(term, coeff // c)
                else:
                    r.add_term(term, coeff)
            q.const, r.const = divmod(lin.const, c)
            return self.finish(q.add(self._div_rest(r, c)))
        r = Linear(a.dtype, lin.const % c)
        for term, coeff in lin.terms.values():
            if coeff % c:
                r.add_term(term, coeff)
        return self.finish(self._mod_rest(r, c))

    def _div_rest(self, r: Linear, c: int) -> Linear:
        if r.is_const():
            return Linear.of_const(r.dtype, r.const // c)
        lo, hi = self.linear_interval(r)
        if math.isfinite(lo) and math.isfinite(hi) and int(lo) // c == int(hi) // c:
            return Linear.of_const(r.dtype, int(lo) // c)
        g = math.gcd(c, r.const, *(k for _, k in r.terms.values()))
        if g > 1:
            reduced = Linear(r.dtype, r.const // g)
            reduced.terms = {key: (t, k // g) for key, (t, k) in r.terms.items()}
            if c == g:
                return reduced
            return self._div_rest(reduced, c // g)
        return Linear.of_term(E.FloorDiv(r.to_expr(), IntImm(r.dtype, c)))

    def _mod_rest(self, r: Linear, c: int) -> Linear:
        if r.is_const():
            return Linear.of_const(r.dtype, r.const % c)
        lo, hi = self.linear_interval(r)
        if math.isfinite(lo) and math.isfinite(hi) and int(lo) // c == int(hi) // c:
            return r.add(Linear.of_const(r.dtype, -(int(lo) // c) * c))
        g = math.gcd(c, r.const, *(k for _, k in r.terms.values()))
        if 1 < g < c:
            reduced = Linear(r.dtype, r.const // g)
            reduced.terms = {key: (t, k // g) for key, (t, k) in r.terms.items()}
            return self._mod_rest(reduced, c // g).scale(g)
        return Linear.of_term(E.FloorMod(r.to_expr(), IntImm(r.dtype, c)))

    # ------------------------------------------------------------------ min, max, compare

    def difference(self, a: PrimExpr, b: PrimExpr) -> Interval:
        """Interval of ``a - b`` for simplified integer operands."""
        lin = self.decompose(a).add(self.decompose(b), -1)
        lin = self.decompose(self.finish(lin))
        return self.linear_interval(lin)

    def minmax(self, cls: type[E.BinaryOp], a: PrimExpr, b: PrimExpr) -> PrimExpr:  # noqa: PLR0911
        """``min``/``max`` of simplified operands."""
        if isinstance(a, (IntImm, E.FloatImm)) and isinstance(b, (IntImm, E.FloatImm)):
            return E.binary(cls, a, b)
        if expr_key(a) == expr_key(b):
            return a
        if _int_scalar(a.dtype):
            lo, hi = self.difference(a, b)
            if hi <= 0:
                return a if cls is E.Min else b
            if lo >= 0:
                return b if cls is E.Min else a
            if (
                isinstance(a, E.FloorDiv)
                and isinstance(b, E.FloorDiv)
                and isinstance(a.b, IntImm)
                and expr_key(a.b) == expr_key(b.b)
                and a.b.value > 0
            ):
                inner = self.minmax(cls, a.a, b.a)
                if inner is a.a:
                    return a
                if inner is b.a:
                    return b
        return cls(a, b)

    def compare(self, cls: type[E.BinaryOp], a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """A comparison of simplified operands, decided when the bounds allow."""
        if isinstance(a, (IntImm, E.FloatImm)) and isinstance(b, (IntImm, E.FloatImm)):
            return E.binary(cls, a, b)
        node = cls(a, b)
        if expr_key(node) in self.known:
            return IntImm("bool", 1)
        if not _int_scalar(a.dtype):
            return node
        lo, hi = self.difference(a, b)
        verdict: bool | None = None
        if cls is E.LT:
            verdict = True if hi < 0 else False if lo >= 0 else None
        elif cls is E.LE:
            verdict = True if hi <= 0 else False if lo > 0 else None
        elif cls is E.GT:
            verdict = True if lo > 0 else False if hi <= 0 else None
        elif cls is E.GE:
            verdict = True if lo >= 0 else False if hi < 0 else None
        elif cls is E.EQ:
            verdict = True if lo == hi == 0 else False if hi < 0 or lo > 0 else None
        elif cls is E.NE:
            verdict = False if lo == hi == 0 else True if hi < 0 or lo > 0 else None
        if verdict is None:
            return node
        return IntImm("bool", int(verdict))

    # ------------------------------------------------------------------ logic and the rest

    def logic(self, cls: type[E.BinaryOp], a: PrimExpr, b: PrimExpr) -> PrimExpr:
        """``and``/``or`` of simplified operands."""
        absorbing = 0 if cls is E.And else 1
        for x, y in ((a, b), (b, a)):
            if isinstance(x, IntImm) and lanes_of(x.dtype) == 1:
                return x if x.value == absorbing else y
        if expr_key(a) == expr_key(b):
            return a
        return cls(a, b)

    def negate(self, a: PrimExpr) -> PrimExpr:
        """``not a`` for a simplified ``a``."""
        if isinstance(a, IntImm):
            return IntImm(a.dtype, int(not a.value))
        if isinstance(a, E.Not):
            return a.a
        if isinstance(a, E.CmpOp) and _int_scalar(a.a.dtype):
            return _CMP_FLIP[type(a)](a.a, a.b)  # type: ignore[no-any-return]
        return E.Not(a)

    def select(self, e: E.Select) -> PrimExpr:
        """A select with a decided condition replaced by its branch."""
        cond = self.simplify(e.condition)
        if isinstance(cond, IntImm):
            return self.simplify(e.true_value if cond.value else e.false_value)
        t, f = self.simplify(e.true_value), self.simplify(e.false_value)
        if expr_key(t) == expr_key(f):
            return t
        return E.Select(cond, t, f)

    def call(self, e: E.Call) -> PrimExpr:
        """A call with simplified arguments; ``likely``/``if_then_else`` of constants folded."""
        if e.op == "tir.if_then_else":
            cond = self.simplify(e.args[0])
            if isinstance(cond, IntImm):
                return self.simplify(e.args[1] if cond.value else e.args[2])
        out = self.rebuild(e)
        if out.op == "tir.likely" and isinstance(out.args[0], IntImm):
            return IntImm(out.dtype, out.args[0].value)
        return out  # type: ignore[no-any-return]

    def cast(self, dtype: str, value: PrimExpr) -> PrimExpr:
        """``value`` (simplified) cast to ``dtype``, folded for constants."""
        if value.dtype == dtype:
            return value
        if isinstance(value, (IntImm, E.FloatImm)) and lanes_of(dtype) == 1:
            if is_int(dtype) or dtype == "bool":
                return IntImm(dtype, _wrap(int(value.value), dtype))
            if dtype.startswith("float"):
                return E.FloatImm(dtype, float(value.value))
        return E.Cast(dtype, value)

    def let(self, e: E.Let) -> PrimExpr:
        """A let expression; constants and variables are substituted into the body."""
        value = self.simplify(e.value)
        if isinstance(value, (IntImm, E.FloatImm, Var)):
            self.subst[e.var] = value
            self.forget()
            try:
                return self.simplify(e.body)
            finally:
                del self.subst[e.var]
                self.forget()
        if _int_scalar(value.dtype):
            self.bounds[e.var] = self.interval(value)
            self.forget()
        try:
            body = self.simplify(e.body)
        finally:
            self.bounds.pop(e.var, None)
            self.forget()
        return E.Let(e.var, value, body)
