"""Tighter bounds of linear sums than interval arithmetic gives.

Two refinements: a loop variable is replaced by the symbolic end of its range that its
coefficient's sign selects (so ``i - n < 0`` for ``i`` in ``[0, n)``), and a pair
``k*((x + d)//c) - k*(x//c)`` is bounded by ``k*[d//c, ceil(d/c)]`` (the tail of a ceil-div
split is at most one iteration).
"""

from __future__ import annotations

import math
from typing import Protocol

from .. import expr as E
from ..expr import IntImm, PrimExpr, Var
from .int_bound import Interval
from .linear import Linear

__all__ = ["Rewriter", "paired_divisions", "symbolic_end"]

_SYMBOLIC_ROUNDS = 3


class Rewriter(Protocol):
    """What the refinements need of the simplifier."""

    ranges: dict[Var, tuple[PrimExpr, PrimExpr]]

    def decompose(self, s: PrimExpr) -> Linear:
        """A simplified expression as a linear sum."""

    def finish(self, lin: Linear) -> PrimExpr:
        """A linear sum as a simplified expression."""

    def interval(self, e: PrimExpr) -> Interval:
        """The constant interval of an expression."""


def paired_divisions(simp: Rewriter, lin: Linear) -> tuple[Linear, Interval | None]:
    """Bound ``k*(x + d)//c - k*x//c`` pairs by ``k*[d//c, ceil(d/c)]`` (ceil-div tails)."""
    rest = lin.copy()
    lo = hi = 0
    found = False
    divs: list[tuple[E.FloorDiv, int, int]] = []
    for t, k in lin.terms.values():
        if isinstance(t, E.FloorDiv) and isinstance(t.b, IntImm) and t.b.value > 0:
            divs.append((t, k, t.b.value))
    for t1, k1, c in divs:
        for t2, k2, c2 in divs:
            if k2 != -k1 or k1 <= 0 or c != c2:
                continue
            if rest.coeff_of(t1) != k1 or rest.coeff_of(t2) != k2:
                continue
            delta = simp.decompose(t1.a).add(simp.decompose(t2.a), -1)
            if not delta.is_const():
                continue
            d = delta.const
            rest.add_term(t1, -k1)
            rest.add_term(t2, -k2)
            lo, hi = lo + k1 * (d // c), hi + k1 * (-(-d // c))
            found = True
    return rest, ((lo, hi) if found else None)


def symbolic_end(simp: Rewriter, lin: Linear, upper: bool) -> float:
    """An upper (or lower) constant bound of ``lin`` after replacing loop variables by the
    ends of their ranges, a few rounds deep (``-inf``/``inf`` when none is found).
    """
    best = math.inf if upper else -math.inf
    current = lin
    for _ in range(_SYMBOLIC_ROUNDS):
        nxt = Linear(current.dtype, current.const)
        changed = False
        for term, coeff in current.terms.values():
            rng = simp.ranges.get(term) if isinstance(term, Var) else None
            if rng is None:
                nxt.add_term(term, coeff)
                continue
            changed = True
            start, extent = rng
            end = (coeff > 0) == upper
            nxt = nxt.add(simp.decompose(start), coeff)
            if end:
                nxt = nxt.add(simp.decompose(extent), coeff)
                nxt.const -= coeff
        if not changed:
            break
        current = simp.decompose(simp.finish(nxt))
        lo, hi = simp.interval(current.to_expr())
        best = min(best, hi) if upper else max(best, lo)
    return best
