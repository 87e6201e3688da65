"""``remove_no_op``: statements that do nothing are dropped.

Dropped: ``Evaluate`` of a constant or variable, a store of a buffer element to itself, loops of
extent 0 or with an empty body, ``if`` with both branches empty, lets and attributes around
nothing, and allocations whose buffer is never used (their body stays).
"""

from __future__ import annotations

import dataclasses

from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..arith.linear import expr_key
from ..expr import IntImm, Var
from ..function import IRModule, PrimFunc
from ..functor import IRVisitor

__all__ = ["RemoveNoOp", "remove_no_op"]

_NOP = S.Evaluate(IntImm("int32", 0))


def _uses_var(s: S.Stmt, var: Var) -> bool:
    found = [False]

    class _Find(IRVisitor):
        def visit_Var(self, node: Var) -> None:
            if node is var:
                found[0] = True

        def visit_Buffer(self, node: E.Buffer) -> None:
            if node.data is var:
                found[0] = True

    _Find().visit(s)
    return found[0]


def _clean(s: S.Stmt | None) -> S.Stmt | None:  # noqa: PLR0911, PLR0912 - one case per kind
    if s is None:
        return None
    if isinstance(s, S.SeqStmt):
        return S.rebuild_seq(s, (_clean(x) for x in s.seq))
    if isinstance(s, S.Evaluate):
        return None if isinstance(s.value, (IntImm, E.FloatImm, E.StringImm, Var)) else s
    if isinstance(s, S.BufferStore):
        v = s.value
        if (
            isinstance(v, E.BufferLoad)
            and v.buffer.data is s.buffer.data
            and expr_key(v.indices) == expr_key(s.indices)
        ):
            return None
        return s
    if isinstance(s, S.For):
        if isinstance(s.extent, IntImm) and s.extent.value <= 0:
            return None
        body = _clean(s.body)
        if body is None:
            return None
        return s if body is s.body else dataclasses.replace(s, body=body)
    if isinstance(s, S.IfThenElse):
        then, other = _clean(s.then_case), _clean(s.else_case)
        if then is None and other is None:
            return None
        if then is s.then_case and other is s.else_case:
            return s
        if then is None:
            return S.IfThenElse(E.Not(s.condition), other or _NOP, None)
        return S.IfThenElse(s.condition, then, other)
    if isinstance(s, (S.LetStmt, S.AttrStmt, S.Allocate)):
        body = _clean(s.body)
        if body is None:
            return None
        if isinstance(s, S.Allocate) and not _uses_var(body, s.buffer.data):
            return body
        return s if body is s.body else dataclasses.replace(s, body=body)
    if isinstance(s, S.AssertStmt):
        body = _clean(s.body) or _NOP
        return s if body is s.body else dataclasses.replace(s, body=body)
    return s


def _remove_func(func: PrimFunc) -> PrimFunc:
    body = _clean(func.body) or _NOP
    return func if body is func.body else func.with_body(body)


def remove_no_op(mod: IRModule, ctx: PassContext) -> IRModule:
    """Drop statements without effect from every function."""
    del ctx
    return map_functions(mod, _remove_func)


RemoveNoOp = Pass("remove_no_op", 0, remove_no_op)
