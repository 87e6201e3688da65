"""Integer expressions as linear sums ``c0 + c1*t1 + c2*t2 + ...`` over opaque terms."""

from __future__ import annotations

import dataclasses
from typing import Any

from .. import expr as E
from ..expr import IntImm, PrimExpr, Var

__all__ = ["Linear", "expr_key"]


# Keys of the dataclass nodes seen lately, by node identity (the nodes hash by identity): an
# expression is a DAG whose shared subexpressions would otherwise be walked once per path
# (exponential in the depth of, e.g., cubic interpolation's index arithmetic). The nodes are
# held, so an id is never reused while its key is cached; the cache is emptied when full.
_KEY_CACHE: dict[Any, Any] = {}
_KEY_CACHE_LIMIT = 1 << 17


def expr_key(e: Any) -> Any:  # noqa: PLR0911 - one case per kind of value
    """A hashable key equal for structurally identical expressions (variables by identity)."""
    if isinstance(e, Var):
        return ("var", id(e))
    if isinstance(e, IntImm):
        return ("int", e.dtype, e.value)
    if isinstance(e, E.FloatImm):
        return ("float", e.dtype, e.value)
    if isinstance(e, E.Buffer):
        return ("buffer", id(e))
    if isinstance(e, tuple):
        return tuple(expr_key(x) for x in e)
    if dataclasses.is_dataclass(e) and not isinstance(e, type):
        by_identity = type(e).__hash__ is object.__hash__
        cached = _KEY_CACHE.get(e) if by_identity else None
        if cached is not None:
            return cached
        key = (type(e).__name__, *(expr_key(getattr(e, f.name)) for f in dataclasses.fields(e)))
        if by_identity:
            if len(_KEY_CACHE) >= _KEY_CACHE_LIMIT:
                _KEY_CACHE.clear()
            _KEY_CACHE[e] = key
        return key
    if isinstance(e, (int, float, str, bool)) or e is None:
        return e
    return ("obj", id(e))


@dataclasses.dataclass(slots=True)
class Linear:
    """``const + sum(coeff * term)``; terms keyed by :func:`expr_key`, in order of appearance."""

    dtype: str
    const: int = 0
    terms: dict[Any, tuple[PrimExpr, int]] = dataclasses.field(default_factory=dict)

    @staticmethod
    def of_const(dtype: str, value: int) -> Linear:
        """The constant ``value``."""
        return Linear(dtype, value)

    @staticmethod
    def of_term(term: PrimExpr, coeff: int = 1) -> Linear:
        """``coeff * term``."""
        lin = Linear(term.dtype)
        lin.add_term(term, coeff)
        return lin

    def copy(self) -> Linear:
        """An independent copy."""
        return Linear(self.dtype, self.const, dict(self.terms))

    def add_term(self, term: PrimExpr, coeff: int) -> None:
        """Add ``coeff * term`` in place."""
        key = expr_key(term)
        old = self.terms.get(key)
        total = coeff + (old[1] if old else 0)
        if total == 0:
            self.terms.pop(key, None)
        elif old:
            self.terms[key] = (old[0], total)
        else:
            self.terms[key] = (term, total)

    def add(self, other: Linear, scale: int = 1) -> Linear:
        """``self + scale * other`` (a new form)."""
        out = self.copy()
        out.const += scale * other.const
        for term, coeff in other.terms.values():
            out.add_term(term, scale * coeff)
        return out

    def scale(self, factor: int) -> Linear:
        """``factor * self`` (a new form)."""
        if factor == 0:
            return Linear(self.dtype)
        out = Linear(self.dtype, self.const * factor)
        out.terms = {k: (t, c * factor) for k, (t, c) in self.terms.items()}
        return out

    def is_const(self) -> bool:
        """Whether the form has no terms."""
        return not self.terms

    def coeff_of(self, term: PrimExpr) -> int:
        """The coefficient of ``term`` (0 when absent)."""
        found = self.terms.get(expr_key(term))
        return found[1] if found else 0

    def to_expr(self) -> PrimExpr:
        """The form as an expression: positive terms first, then negative ones, then the const."""
        items = list(self.terms.values())
        ordered = [x for x in items if x[1] > 0] + [x for x in items if x[1] < 0]
        out: PrimExpr | None = None
        if ordered and ordered[0][1] < 0 and self.const > 0:  # c - x rather than x*-1 + c
            out = IntImm(self.dtype, self.const)
            for term, coeff in ordered:
                out = E.Sub(out, term if coeff == -1 else E.Mul(term, IntImm(self.dtype, -coeff)))
            return out
        for term, coeff in ordered:
            if out is None:
                out = term if coeff == 1 else E.Mul(term, IntImm(self.dtype, coeff))
            elif coeff > 0:
                out = E.Add(out, term if coeff == 1 else E.Mul(term, IntImm(self.dtype, coeff)))
            else:
                out = E.Sub(out, term if coeff == -1 else E.Mul(term, IntImm(self.dtype, -coeff)))
        if out is None:
            return IntImm(self.dtype, self.const)
        if self.const > 0:
            return E.Add(out, IntImm(self.dtype, self.const))
        if self.const < 0:
            return E.Sub(out, IntImm(self.dtype, -self.const))
        return out
