"""``simplify``: arithmetic simplification of every expression, under the loop ranges in scope.

Expressions go through :class:`pytvm.tir.arith.Analyzer` (constant folding, canonical linear
indices, index division with known bounds, min/max and comparisons decided by bounds).
Statements: an ``if`` whose condition is decided keeps only the taken branch (redundant-guard
removal; a branch also knows its condition, so a repeated guard goes), a loop of extent 0 is
dropped, a loop of extent 1 becomes its body, an assertion that holds is dropped, and a let of a
constant or variable is substituted.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..arith import Analyzer, ConstIntBound
from ..expr import IntImm, PrimExpr, Range, Var
from ..function import IRModule, PrimFunc
from ..functor import substitute

__all__ = ["Simplify", "simplify", "simplify_stmt"]

_NOP = S.Evaluate(IntImm("int32", 0))


class _StmtSimplifier:
    def __init__(self, analyzer: Analyzer) -> None:
        self.ana = analyzer

    def expr(self, e: PrimExpr) -> PrimExpr:
        return self.ana.simplify(e)

    def stmt(self, s: S.Stmt) -> S.Stmt | None:  # noqa: PLR0911 - one case per statement kind
        if isinstance(s, S.SeqStmt):
            return S.rebuild_seq(s, (self.stmt(x) for x in s.seq))
        if isinstance(s, S.For):
            return self.loop(s)
        if isinstance(s, S.IfThenElse):
            return self.branch(s)
        if isinstance(s, S.LetStmt):
            return self.let(s)
        if isinstance(s, S.AssertStmt):
            cond = self.expr(s.condition)
            if isinstance(cond, IntImm) and cond.value:
                return self.stmt(s.body)
            body = self.stmt(s.body) or _NOP
            return dataclasses.replace(s, condition=cond, body=body)
        if isinstance(s, (S.Allocate, S.AttrStmt)):
            inner = self.stmt(s.body)
            if isinstance(s, S.AttrStmt):
                value = self.expr(s.value)
                return dataclasses.replace(s, value=value, body=inner or _NOP)
            return dataclasses.replace(s, body=inner or _NOP) if inner is not s.body else s
        return self.leaf(s)

    def leaf(self, s: S.Stmt) -> S.Stmt:
        changes: dict[str, Any] = {}
        for f in dataclasses.fields(s):  # type: ignore[arg-type]
            old = getattr(s, f.name)
            if isinstance(old, PrimExpr):
                new: Any = self.expr(old)
            elif isinstance(old, tuple) and old and isinstance(old[0], PrimExpr):
                new = tuple(self.expr(x) for x in old)
                if all(a is b for a, b in zip(new, old, strict=True)):
                    continue
            else:
                continue
            if new is not old:
                changes[f.name] = new
        return dataclasses.replace(s, **changes) if changes else s  # type: ignore[type-var]

    def loop(self, s: S.For) -> S.Stmt | None:
        start, extent = self.expr(s.min), self.expr(s.extent)
        if isinstance(extent, IntImm) and extent.value <= 0:
            return None
        if self.ana.can_prove(extent <= 0):
            return None
        if isinstance(extent, IntImm) and extent.value == 1:
            return self.stmt(substitute(s.body, {s.loop_var: start}))
        with self.ana.bound(s.loop_var, Range(start, extent)):
            body = self.stmt(s.body)
        if body is None:
            return None
        if start is s.min and extent is s.extent and body is s.body:
            return s
        return dataclasses.replace(s, min=start, extent=extent, body=body)

    def branch(self, s: S.IfThenElse) -> S.Stmt | None:
        cond = self.expr(s.condition)
        if isinstance(cond, IntImm):
            taken = s.then_case if cond.value else s.else_case
            return None if taken is None else self.stmt(taken)
        with self.ana.constraint_scope(cond):
            then = self.stmt(s.then_case)
        other = None
        if s.else_case is not None:
            with self.ana.constraint_scope(E.Not(cond)):
                other = self.stmt(s.else_case)
        if then is None and other is None:
            return None
        if then is None:
            return S.IfThenElse(self.expr(E.Not(cond)), other or _NOP, None)
        if cond is s.condition and then is s.then_case and other is s.else_case:
            return s
        return S.IfThenElse(cond, then, other)

    def let(self, s: S.LetStmt) -> S.Stmt | None:
        value = self.expr(s.value)
        if isinstance(value, (IntImm, E.FloatImm, Var)):
            return self.stmt(substitute(s.body, {s.var: value}))
        if E.is_int(value.dtype) and E.lanes_of(value.dtype) == 1:
            bound = ConstIntBound.from_interval(*self.ana.interval(value))
            self.ana.update(s.var, bound, allow_override=True)
            try:
                body = self.stmt(s.body)
            finally:
                self.ana.unbind(s.var)
        else:
            body = self.stmt(s.body)
        if body is None:
            return None
        return dataclasses.replace(s, value=value, body=body)


def simplify_stmt(stmt: S.Stmt, analyzer: Analyzer | None = None) -> S.Stmt:
    """``stmt`` simplified (a no-op ``Evaluate(0)`` when nothing is left)."""
    out = _StmtSimplifier(analyzer or Analyzer()).stmt(stmt)
    return out if out is not None else _NOP


def _simplify_func(func: PrimFunc) -> PrimFunc:
    body = simplify_stmt(func.body, Analyzer.for_function(func))
    return func if body is func.body else func.with_body(body)


def simplify(mod: IRModule, ctx: PassContext) -> IRModule:
    """Simplify every expression and statement of every function."""
    del ctx
    return map_functions(mod, _simplify_func)


Simplify = Pass("simplify", 0, simplify)
