"""``Schedule.rfactor``: turn one reduction loop into a data dimension of a partial stage.

For ``B[i] = sum(A[i, k1, k2])`` with ``k1`` split into ``(ko, ki)``, ``rfactor(B, ki)`` makes
``BF[ki, i] = sum over (ko, k2) of A[i, ko * f + ki, k2]`` (the ``ki`` dimension placed at
``factor_axis``) and rewrites ``B`` as ``B[i] = sum over ki of BF[ki, i]``. The reduction axes
of ``BF`` are the root reduction axes the split did not touch (kept as they are) and the other
leaves of the touched ones (new axes over the leaves' variables). Where the split does not
divide its axis, ``BF``'s reduction gets the condition that the rebuilt index is in range.
"""

from __future__ import annotations

from ...ffi.errors import TVMValueError
from ...tir.arith import Analyzer
from ...tir.expr import IterVar, IterVarType, PrimExpr, Range, Reduce, Var, const
from ...tir.functor import substitute
from ...tir.op import all as all_of
from ..tensor import ComputeOp
from .stage import Fuse, Singleton, Split, Stage

__all__ = ["rfactor"]


def rfactor(stage: Stage, axis: IterVar, factor_axis: int = 0) -> tuple[Stage, ComputeOp]:
    """The partial stage of ``stage``'s reduction and the stage's new (final) operation; see
    :meth:`pytvm.te.schedule.Schedule.rfactor`.
    """
    body = stage.body
    red = body[0]
    if not isinstance(red, Reduce):
        raise TVMValueError(f"rfactor of {stage.name}: the stage is not a reduction")
    if axis.iter_type is not IterVarType.COMM_REDUCE or stage._leaf(axis, "rfactor") < 0:
        raise TVMValueError(f"rfactor of {stage.name}: {axis.var.name} is not a reduction axis")
    ndim = len(stage.axis)
    if not 0 <= factor_axis <= ndim:
        raise TVMValueError(
            f"rfactor of {stage.name}: factor_axis {factor_axis} is outside [0, {ndim}]"
        )
    ana = Analyzer()
    extent = _extents(stage, ana)
    touched = _roots_under(stage, axis)
    # Each touched root reduction axis in terms of the leaves below it.
    value: dict[IterVar, PrimExpr] = {iv: iv.var for iv in stage.leaf_iter_vars}
    for rel in reversed(stage.relations):
        if isinstance(rel, Split) and rel.inner in value and rel.outer in value:
            value[rel.parent] = value[rel.outer] * extent[rel.inner] + value[rel.inner]
        elif isinstance(rel, Fuse) and rel.fused in value:
            value[rel.outer] = value[rel.fused] // extent[rel.inner]
            value[rel.inner] = value[rel.fused] % extent[rel.inner]
    # The partial stage: data axes (fresh), the factor axis, and the remaining reductions.
    data = [IterVar(iv.dom, Var(iv.var.name, iv.var.dtype)) for iv in stage.axis]
    factor_iv = IterVar(Range(const(0), extent[axis]), Var(f"{axis.var.name}.v", "int32"))
    new_axis = [*data[:factor_axis], factor_iv, *data[factor_axis:]]
    vmap: dict[Var, PrimExpr] = {old.var: new.var for old, new in zip(stage.axis, data)}
    vmap[axis.var] = factor_iv.var
    kept = [iv for iv in red.axis if iv not in touched]
    reduce_leaves = [
        IterVar(Range(const(0), extent[iv]), iv.var, IterVarType.COMM_REDUCE)
        for iv in stage.leaf_iter_vars
        if iv.iter_type is IterVarType.COMM_REDUCE and iv is not axis and _below(stage, iv, touched)
    ]
    conds: list[PrimExpr] = []
    for root in touched:
        assert root.dom is not None
        v = value[root]
        vmap[root.var] = substitute(v, {axis.var: factor_iv.var})
        covered = ana.can_prove(_product(stage, root, extent, ana) <= root.dom.extent)
        if not covered:
            conds.append(substitute(v, {axis.var: factor_iv.var}) < root.dom.extent)
    cond = substitute(red.condition, vmap)
    if conds:
        cond = all_of(cond, *conds)
    sources = tuple(substitute(s, vmap) for s in red.source)
    axes = (*kept, *reduce_leaves)
    partial_body = tuple(
        Reduce(red.combiner, sources, axes, cond, k, red.init) for k in range(len(body))
    )
    partial_op = ComputeOp(f"{stage.name}.rf", stage.op.tag, {}, tuple(new_axis), partial_body)
    partials = tuple(partial_op.output(k) for k in range(partial_op.num_outputs))
    partial_stage = Stage(partial_op, partials, partial_body, tuple(new_axis), axes, stage.scope)
    # The final stage reduces the factor axis of the partial results.
    final_k = IterVar(
        Range(const(0), extent[axis]), Var(f"{axis.var.name}.v", "int32"), IterVarType.COMM_REDUCE
    )
    idx = [iv.var for iv in stage.axis]
    idx.insert(factor_axis, final_k.var)
    loads = tuple(p[tuple(idx)] for p in partials)
    comb = red.combiner
    final_body = tuple(
        Reduce(comb, loads, (final_k,), const(True), k, ()) for k in range(len(body))
    )
    final_op = ComputeOp(stage.name, stage.op.tag, stage.op.attrs, stage.axis, final_body)
    return partial_stage, final_op


def _extents(stage: Stage, ana: Analyzer) -> dict[IterVar, PrimExpr]:
    """The extent of every axis of the stage over its full domain."""
    ext: dict[IterVar, PrimExpr] = {}
    for iv in (*stage.axis, *stage.reduce_axis):
        assert iv.dom is not None
        ext[iv] = iv.dom.extent
    for rel in stage.relations:
        if isinstance(rel, Split):
            parent = ext[rel.parent]
            if rel.factor is not None:
                ext[rel.inner] = rel.factor
                ext[rel.outer] = ana.simplify((parent + rel.factor - 1) // rel.factor)
            else:
                assert rel.nparts is not None
                ext[rel.outer] = rel.nparts
                ext[rel.inner] = ana.simplify((parent + rel.nparts - 1) // rel.nparts)
        elif isinstance(rel, Fuse):
            ext[rel.fused] = ana.simplify(ext[rel.outer] * ext[rel.inner])
        elif isinstance(rel, Singleton):
            ext[rel.iter] = const(1)
    return ext


def _roots_under(stage: Stage, axis: IterVar) -> list[IterVar]:
    """The root reduction axes that ``axis`` derives from."""
    found = [axis]
    changed = True
    while changed:
        changed = False
        for rel in stage.relations:
            if isinstance(rel, Split) and (rel.outer in found or rel.inner in found):
                if rel.parent not in found:
                    found.append(rel.parent)
                    changed = True
            elif isinstance(rel, Fuse) and rel.fused in found:
                for iv in (rel.outer, rel.inner):
                    if iv not in found:
                        found.append(iv)
                        changed = True
    return [iv for iv in stage.reduce_axis if iv in found]


def _below(stage: Stage, leaf: IterVar, roots: list[IterVar]) -> bool:
    """Whether ``leaf`` derives from one of ``roots``."""
    return any(r in _roots_under(stage, leaf) for r in roots)


def _product(stage: Stage, root: IterVar, ext: dict[IterVar, PrimExpr], ana: Analyzer) -> PrimExpr:
    """How many points the leaves under ``root`` visit (its extent rounded up by splits)."""
    total: PrimExpr = const(1)
    for iv in stage.leaf_iter_vars:
        if root in _roots_under(stage, iv):
            total = total * ext[iv]
    return ana.simplify(total)
