"""``loop_partition``: split a loop at the point where its ``likely`` bound guard stops holding.

A non-divisible split leaves ``if likely(io*8 + ii < n)`` in the body. The loop over ``io`` is
cut into a main part, where the guard holds for every inner iteration (so it is dropped there),
and a tail part that keeps it. Inside a tail, inner loops are cut on the same guard only where
the cut point is a constant (``for ji in [0, 4)`` when 12 columns are split by 8), so symbolic
shapes do not multiply the code. Guards of the forms ``a < b``, ``a <= b``, ``a > b``, ``a >= b``
that are linear in the loop variable are handled (prefix or suffix main parts); the other
variables of the guard must be bound outside the loop or be loop variables of inner loops whose
ranges do not depend on the loop. Afterwards every ``tir.likely`` call is stripped.

Every cut shrinks what is left to cut, so the pass terminates: the main part loses the guard
(each occurrence of it under the same inner loops is replaced by ``true``), and the tail blocks it
on its fresh loop variable together with every guard already blocked on the loop that was cut
(their keys are carried over the renaming of the loop variable). Cuts nest at most
``_MAX_CUT_DEPTH`` deep, which bounds the code size.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..arith import Analyzer, expr_key
from ..arith.linear import Linear
from ..expr import IntImm, PrimExpr, Range, Var
from ..function import IRModule, PrimFunc
from ..functor import IRMutator, IRVisitor, substitute

__all__ = ["LoopPartition", "loop_partition"]


# Nested cuts on one path of the tree; each level at most doubles the code below it.
_MAX_CUT_DEPTH = 10

_Inner = tuple[tuple[Var, PrimExpr, PrimExpr], ...]


@dataclass(frozen=True, slots=True)
class _Cut:
    guards: tuple[tuple[E.Call, _Inner], ...]  # likely calls (and inner loops) true on the main
    split: PrimExpr  # first index of the second part
    prefix: bool  # whether the main part comes first


def _uses(e: Any, names: set[Var]) -> bool:
    found = [False]

    class _Find(IRVisitor):
        def visit_Var(self, node: Var) -> None:
            if node in names:
                found[0] = True

    finder = _Find()
    for item in e if isinstance(e, tuple) else (e,):
        finder.visit(item)
    return found[0]


def _conjuncts(cond: PrimExpr) -> list[PrimExpr]:
    if isinstance(cond, E.And):
        return _conjuncts(cond.a) + _conjuncts(cond.b)
    return [cond]


class _Guards(IRVisitor):
    """The ``likely`` guards of a loop body, with the inner loops around each one."""

    def __init__(self) -> None:
        self.inner: list[tuple[Var, PrimExpr, PrimExpr]] = []
        self.bound_inside: set[Var] = set()
        self.found: list[tuple[E.Call, _Inner]] = []

    def visit_For(self, node: S.For) -> None:
        self.inner.append((node.loop_var, node.min, node.extent))
        self.bound_inside.add(node.loop_var)
        self.visit(node.body)
        self.inner.pop()

    def visit_LetStmt(self, node: S.LetStmt) -> None:
        self.bound_inside.add(node.var)
        self.generic_visit(node)

    def visit_IfThenElse(self, node: S.IfThenElse) -> None:
        for c in _conjuncts(node.condition):
            if isinstance(c, E.Call) and c.op == "tir.likely":
                self.found.append((c, tuple(self.inner)))
        self.generic_visit(node)

    def visit_Call(self, node: E.Call) -> None:
        # ``if_then_else(likely(...), a, b)`` in an expression: a read guarded by its bounds
        # (a convolution reading its padding, pytvm.topi.nn.conv2d_guarded).
        if node.op == "tir.if_then_else":
            for c in _conjuncts(node.args[0]):
                if isinstance(c, E.Call) and c.op == "tir.likely":
                    self.found.append((c, tuple(self.inner)))
        self.generic_visit(node)


class _Partitioner(IRMutator):
    def __init__(self, analyzer: Analyzer) -> None:
        self.ana = analyzer
        # Guards (by key) left in a tail, and the tail loops they must not be cut on again.
        self.blocked: dict[Any, frozenset[Var]] = {}
        self.depth = 0  # cuts enclosing the loop being visited

    def visit_For(self, node: S.For) -> Any:
        cut = self._find_cut(node) if self.depth < _MAX_CUT_DEPTH else None
        if cut is None:
            with self.ana.bound(node.loop_var, Range(node.min, node.extent)):
                return self.generic_visit(node)
        return self._apply(node, cut)

    def _find_cut(self, loop: S.For) -> _Cut | None:
        """The first guard ``loop`` can be cut on, with every guard that splits it the same way."""
        guards = _Guards()
        guards.visit(loop.body)
        candidates = self._candidates(loop, guards)
        if not candidates:
            return None
        _, _, split, prefix = candidates[0]
        key = expr_key(split)
        same = tuple(
            (call, inner) for call, inner, s, p in candidates if p == prefix and expr_key(s) == key
        )
        return _Cut(same, split, prefix)

    def _candidates(
        self, loop: S.For, guards: _Guards
    ) -> list[tuple[E.Call, _Inner, PrimExpr, bool]]:
        found: list[tuple[E.Call, _Inner, PrimExpr, bool]] = []
        for call, inner in guards.found:
            blocked = self.blocked.get(expr_key(call), frozenset())
            if loop.loop_var in blocked:
                continue
            split = self._split_point(loop, call.args[0], inner, guards.bound_inside)
            if split is None:
                continue
            if blocked and not isinstance(split[0], IntImm):
                continue  # inside a tail, cut again only where the cut is constant
            if self._main_is_empty(loop, split[0], split[1]):
                continue  # the guard fails on every iteration here: cutting would not shrink
            found.append((call, inner, split[0], split[1]))
        return found

    def _main_is_empty(self, loop: S.For, split: PrimExpr, prefix: bool) -> bool:
        """Whether the guard-free part of ``loop`` cut at ``split`` has no iterations."""
        with self.ana.bound(loop.loop_var, Range(loop.min, loop.extent)):
            if prefix:
                return self.ana.can_prove(split <= loop.min)
            return self.ana.can_prove(loop.min + loop.extent <= split)

    def _split_point(  # noqa: PLR0912 - one check per way a guard can be unsuitable
        self,
        loop: S.For,
        cond: PrimExpr,
        inner: _Inner,
        bound_inside: set[Var],
    ) -> tuple[PrimExpr, bool] | None:
        if not isinstance(cond, (E.LT, E.LE, E.GT, E.GE)) or not E.is_int(cond.a.dtype):
            return None
        # The guard as "expr < 0".
        if isinstance(cond, (E.LT, E.LE)):
            diff = cond.a - cond.b
        else:
            diff = cond.b - cond.a
        if isinstance(cond, (E.LE, E.GE)):
            diff = diff - 1
        lin = self.ana.linear_form(diff)
        v = loop.loop_var
        coeff = lin.coeff_of(v)
        if coeff == 0:
            return None
        inner_vars = {iv for iv, _, _ in inner}
        rest = Linear(lin.dtype, lin.const)
        for term, k in lin.terms.values():
            if term is v:
                continue
            if isinstance(term, Var) and term in inner_vars:
                start, extent = next((m, e) for iv, m, e in inner if iv is term)
                if _uses((start, extent), bound_inside | {v}):
                    return None
                rest = rest.add(self.ana.linear_form(start), k)
                if k > 0:
                    rest = rest.add(self.ana.linear_form(extent), k)
                    rest.const -= k
                continue
            if _uses(term, bound_inside | {v}):
                return None
            rest.add_term(term, k)
        upper = rest.to_expr()  # the guard holds for all inner iterations iff coeff*v + upper < 0
        if coeff > 0:
            split = E.binary(E.FloorDiv, (0 - upper) + (coeff - 1), coeff)
            prefix = True
        else:
            split = E.binary(E.FloorDiv, upper, -coeff) + 1
            prefix = False
        end = loop.min + loop.extent
        clamped = E.binary(E.Max, loop.min, E.binary(E.Min, split, end))
        return self.ana.simplify(clamped), prefix

    def _apply(self, loop: S.For, cut: _Cut) -> S.Stmt:
        main_body = _ReplaceGuard(cut.guards, IntImm("bool", 1)).visit(loop.body)
        if main_body is loop.body:  # nothing to drop: cutting would not shrink the loop
            with self.ana.bound(loop.loop_var, Range(loop.min, loop.extent)):
                return self.generic_visit(loop)  # type: ignore[no-any-return]
        end = loop.min + loop.extent
        if cut.prefix:
            main_range, tail_range = (loop.min, cut.split), (cut.split, end)
        else:
            main_range, tail_range = (cut.split, end), (loop.min, cut.split)
        tail_var = Var(loop.loop_var.name, loop.loop_var.dtype)
        tail_body = substitute(loop.body, {loop.loop_var: tail_var})
        self._carry_blocks(loop, [call for call, _ in cut.guards], tail_var)
        self.depth += 1
        try:
            main = self._part(loop, main_body, main_range, loop.loop_var)
            tail = self._part(loop, tail_body, tail_range, tail_var)
        finally:
            self.depth -= 1
        parts = (main, tail) if cut.prefix else (tail, main)
        return S.seq(*parts) if any(parts) else S.Evaluate(IntImm("int32", 0))

    def _carry_blocks(self, loop: S.For, targets: list[E.Call], tail_var: Var) -> None:
        """Block, on the tail's ``tail_var``, ``targets`` and every guard blocked on ``loop``.

        Guards blocked on an enclosing tail stay blocked (keyed by their renamed form), so the
        tail is only cut on inner loops where the cut is constant, as before the renaming.
        """
        guards = _Guards()
        guards.visit(loop.body)
        target_keys = {expr_key(t) for t in targets}
        sub = {loop.loop_var: tail_var}
        updates: dict[Any, frozenset[Var]] = {}
        for call, _ in guards.found:
            key = expr_key(call)
            vars_ = self.blocked.get(key, frozenset())
            if key in target_keys or loop.loop_var in vars_:
                vars_ = vars_ | {tail_var}
            if vars_:
                new_key = expr_key(substitute(call, sub))
                updates[new_key] = updates.get(new_key, frozenset()) | vars_
        for key, vars_ in updates.items():
            self.blocked[key] = self.blocked.get(key, frozenset()) | vars_

    def _part(
        self, loop: S.For, body: S.Stmt, bounds: tuple[PrimExpr, PrimExpr], var: Var
    ) -> S.Stmt | None:
        start = self.ana.simplify(bounds[0])
        extent = self.ana.simplify(bounds[1] - bounds[0])
        if isinstance(extent, IntImm) and extent.value <= 0:
            return None
        if self.ana.can_prove(extent <= 0):
            return None
        kind = loop.kind
        if kind is S.ForKind.PARALLEL and self.ana.can_prove(extent <= 1):
            kind = S.ForKind.SERIAL  # a one-iteration tail is not worth a parallel launch
        part = replace(loop, loop_var=var, min=start, extent=extent, kind=kind, body=body)
        return self.visit(part)  # type: ignore[no-any-return]


class _ReplaceGuard(IRMutator):
    """Replace each of ``targets`` by ``value`` where it stands under its inner loops.

    Occurrences are matched structurally, so copies of a guard under the same loops are dropped
    together; a copy under other loops (another range of the same variable) is left alone.
    """

    def __init__(self, targets: tuple[tuple[E.Call, _Inner], ...], value: PrimExpr) -> None:
        self.targets = {(expr_key(call), expr_key(inner)) for call, inner in targets}
        self.value = value
        self.stack: list[tuple[Var, PrimExpr, PrimExpr]] = []

    def visit_For(self, node: S.For) -> S.Stmt:
        self.stack.append((node.loop_var, node.min, node.extent))
        try:
            body = self.visit(node.body)
        finally:
            self.stack.pop()
        return node if body is node.body else replace(node, body=body)

    def visit_Call(self, node: E.Call) -> PrimExpr:
        if (
            node.op == "tir.likely"
            and (expr_key(node), expr_key(tuple(self.stack))) in self.targets
        ):
            return self.value
        return self.generic_visit(node)  # type: ignore[no-any-return]


class _SplitLikely(IRMutator):
    """``likely(a && b)`` -> ``likely(a) && likely(b)``, so each bound is cut on its own."""

    def visit_Call(self, node: E.Call) -> PrimExpr:
        node = self.generic_visit(node)
        if node.op == "tir.likely" and isinstance(node.args[0], E.And):
            a, b = node.args[0].a, node.args[0].b
            return E.And(self.visit_Call(E.Call(node.dtype, node.op, (a,))),
                         self.visit_Call(E.Call(node.dtype, node.op, (b,))))  # fmt: skip
        return node


class _StripLikely(IRMutator):
    def visit_Call(self, node: E.Call) -> PrimExpr:
        node = self.generic_visit(node)
        if node.op == "tir.likely":
            return node.args[0]
        return node


def _partition_func(func: PrimFunc) -> PrimFunc:
    body = _SplitLikely().visit(func.body)
    body = _Partitioner(Analyzer.for_function(func)).visit(body)
    body = _StripLikely().visit(body)
    return func if body is func.body else func.with_body(body)


def loop_partition(mod: IRModule, ctx: PassContext) -> IRModule:
    """Split loops at their ``likely`` guards so main parts run guard-free; strip ``likely``."""
    del ctx
    return map_functions(mod, _partition_func)


LoopPartition = Pass("loop_partition", 0, loop_partition)
