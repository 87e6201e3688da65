"""``storage_rewrite``: allocations are hoisted out of loops and share memory when they can.

An allocation moves out of every enclosing serial, vectorized or unrolled loop (and ``if``) whose
variable its size does not use; it never leaves a parallel loop (each thread keeps its own) or
a let that defines its size. Where allocations gather around a sequence of statements, a buffer
whose uses all come after the last use of an earlier one, with the same dtype and scope and no
larger size, reuses that one's memory (its accesses move to the earlier data variable and its
allocation goes).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..arith.linear import expr_key
from ..expr import Buffer, IntImm, PrimExpr, Var
from ..function import IRModule, PrimFunc
from ..functor import IRMutator, IRVisitor

__all__ = ["StorageRewrite", "storage_rewrite"]


def _vars_of(items: Any) -> set[Var]:
    out: set[Var] = set()

    class _Collect(IRVisitor):
        def visit_Var(self, node: Var) -> None:
            out.add(node)

        def visit_Buffer(self, node: Buffer) -> None:
            out.add(node.data)

    collect = _Collect()
    for item in items:
        collect.visit(item)
    return out


def _hoist(s: S.Stmt) -> tuple[S.Stmt, list[Buffer]]:
    if isinstance(s, S.Allocate):
        body, allocs = _hoist(s.body)
        return body, [s.buffer, *allocs]
    if isinstance(s, S.SeqStmt):
        parts = [_hoist(x) for x in s.seq]
        return S.seq(*(p[0] for p in parts)), [b for p in parts for b in p[1]]
    if isinstance(s, (S.For, S.LetStmt)):
        body, allocs = _hoist(s.body)
        bound = s.loop_var if isinstance(s, S.For) else s.var
        stay_all = isinstance(s, S.For) and s.kind is S.ForKind.PARALLEL
        stay = [b for b in allocs if stay_all or bound in _vars_of(b.shape)]
        up = [b for b in allocs if b not in stay]
        body = _share(stay, body)
        return dataclasses.replace(s, body=body), up
    if isinstance(s, S.IfThenElse):
        then, a1 = _hoist(s.then_case)
        other, a2 = _hoist(s.else_case) if s.else_case is not None else (None, [])
        return S.IfThenElse(s.condition, then, other), a1 + a2
    if isinstance(s, (S.AttrStmt, S.AssertStmt)):
        body, allocs = _hoist(s.body)
        return dataclasses.replace(s, body=body), allocs
    return s, []


def _size(buf: Buffer) -> PrimExpr:
    size: PrimExpr = IntImm("int32", 1)
    for dim in buf.shape:
        size = E.binary(E.Mul, size, dim)
    return size


def _fits(small: Buffer, big: Buffer) -> bool:
    if small.dtype != big.dtype or small.scope != big.scope:
        return False
    a, b = _size(small), _size(big)
    if isinstance(a, IntImm) and isinstance(b, IntImm):
        return a.value <= b.value
    return bool(expr_key(a) == expr_key(b))


def _share(allocs: list[Buffer], body: S.Stmt) -> S.Stmt:
    """Wrap ``body`` in ``allocs``, letting buffers with disjoint lifetimes share memory."""
    allocs = list(dict.fromkeys(allocs))  # unrolled copies allocate one buffer several times
    steps = body.seq if isinstance(body, S.SeqStmt) else (body,)
    used = [_vars_of([step]) for step in steps]
    span: dict[Buffer, tuple[int, int]] = {}
    for buf in allocs:
        hits = [k for k, names in enumerate(used) if buf.data in names]
        span[buf] = (hits[0], hits[-1]) if hits else (-1, -1)
    owner_end: dict[Buffer, int] = {}  # buffers that keep an allocation -> last use so far
    remap: dict[Var, Buffer] = {}
    kept: list[Buffer] = []
    for buf in sorted(allocs, key=lambda b: span[b][0]):
        first, last = span[buf]
        host = next(
            (h for h in kept if owner_end[h] < first and first >= 0 and _fits(buf, h)),
            None,
        )
        if host is None:
            kept.append(buf)
            owner_end[buf] = last
        else:
            remap[buf.data] = host
            owner_end[host] = last
    if remap:
        body = _Remap(remap).visit(body)
    for buf in reversed([b for b in allocs if b in kept]):
        body = S.Allocate(buf, body)
    return body


class _Remap(IRMutator):
    def __init__(self, remap: dict[Var, Buffer]) -> None:
        self.remap = remap
        self.done: dict[Buffer, Buffer] = {}

    def visit_Var(self, node: Var) -> PrimExpr:
        host = self.remap.get(node)
        return node if host is None else host.data

    def visit_Buffer(self, node: Buffer) -> Buffer:
        host = self.remap.get(node.data)
        if host is None:
            return node
        found = self.done.get(node)
        if found is None:
            found = dataclasses.replace(node, data=host.data)
            self.done[node] = found
        return found


def _rewrite_func(func: PrimFunc) -> PrimFunc:
    body, allocs = _hoist(func.body)
    body = _share(allocs, body)
    return func.with_body(body)


def storage_rewrite(mod: IRModule, ctx: PassContext) -> IRModule:
    """Hoist allocations out of loops and let buffers with disjoint lifetimes share memory."""
    if ctx.get("tir.disable_storage_rewrite", False):
        return mod
    return map_functions(mod, _rewrite_func)


StorageRewrite = Pass("storage_rewrite", 2, storage_rewrite, required=("flatten_buffer",))
