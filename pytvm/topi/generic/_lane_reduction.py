"""Reductions over contiguous trailing axes in vector lanes with several accumulators.

A floating-point sum is not reassociated by the C or LLVM compilers (IEEE results), so a
reduction written as one loop is a chain of dependent adds: one element per add latency. When
the reduced axes are the trailing axes of every input that depends on them (``mean`` over H and
W of NCHW, a global pooling, a reduction over the last axis), the schedule here fuses them into
one row of ``R`` elements and splits the row into ``A`` accumulators of ``V`` lanes
(``rfactor``): the row's main loop adds whole vectors into independent accumulators. The
``A`` accumulators are then added lane by lane into one vector (a second ``rfactor``), whose
``V`` lanes the reduction's own stage adds up. Both partial stages live in the thread's local
scope inside the loop over the outputs, which runs in parallel when the work justifies it.

``V`` is the largest power of two dividing ``R`` (at most the target's lanes) and ``A`` the
largest divisor of ``R / V`` up to half the target's vector registers, so the splits divide
the row and no guard enters the vector loop (14x14 = 196: 7 accumulators of 4 lanes;
56x56 = 3136: 14 accumulators of 16 lanes with 512-bit vectors, 8 of 8 lanes with 256-bit
ones). A row of odd length (7x7 = 49) has no vector: there, a block of consecutive outputs (up
to a quarter of the vector registers) is reduced together, one scalar chain each, the
reduction loops outside the unrolled block, so the chains overlap; ``A`` scalar accumulators
per row when the outputs do not divide into blocks. A reduction that does not read its inputs
this way keeps the plain schedule.
"""

from __future__ import annotations

from typing import Any

from ...te.tensor import ComputeOp, Tensor
from ...tir.arith import Analyzer
from ...tir.expr import IterVar, PrimExpr, ProducerLoad, Reduce, Var, const
from ...tir.functor import post_order_visit, substitute
from .._target import vector_lanes
from ._tiling import (
    extent,
    fuse_parallel,
    largest_divisor,
    pow2_divisor,
    product,
    vector_registers,
)

__all__ = ["lane_plan", "schedule_lane_reduction"]

#: Rows shorter than this are reduced by the plain loop (the partial stages cost more).
MIN_ROW = 8


def _loads(expr: PrimExpr, inlined: set[int]) -> list[ProducerLoad]:
    """The loads of ``expr`` with the stages in ``inlined`` (operation ids) substituted by their
    bodies, as lowering will compute them.
    """
    found: list[ProducerLoad] = []

    def visit(node: Any) -> None:
        if not isinstance(node, ProducerLoad):
            return
        op = node.producer.op
        if id(op) in inlined and isinstance(op, ComputeOp):
            vmap = {iv.var: i for iv, i in zip(op.axis, node.indices, strict=True)}
            found.extend(_loads(substitute(op.body[0], vmap), inlined))
        else:
            found.append(node)

    post_order_visit(expr, visit)
    return found


def _uses(expr: PrimExpr, names: set[Var]) -> bool:
    hit = [False]

    def visit(node: Any) -> None:
        if isinstance(node, Var) and node in names:
            hit[0] = True

    post_order_visit(expr, visit)
    return hit[0]


def _trailing_run(op: ComputeOp, inlined: set[int]) -> int:
    """How many trailing reduction axes of ``op`` every dependent load reads as one contiguous
    row (the load's last indices are those axes, the inner ones spanning their whole
    dimensions); 0 when there are none.
    """
    red = op.body[0]
    assert isinstance(red, Reduce)
    axes = list(op.reduce_axis)
    names = {iv.var for iv in axes}
    ana = Analyzer()
    # Output axes of extent 1 index nothing: 0 in their place simplifies the window offsets.
    ones: dict[Var, PrimExpr] = {iv.var: const(0) for iv in op.axis if extent(iv) == 1}
    loads = [ld for s in red.source for ld in _loads(s, inlined) if _uses(ld, names)]
    if not loads:
        return 0
    best = len(axes)
    for ld in loads:
        shape = [extent_of(d) for d in ld.producer.shape]
        idx = [ana.simplify(substitute(i, ones)) for i in ld.indices]
        run = 0
        while run < min(best, len(idx)):
            offset = ana.simplify(idx[-1 - run] - axes[-1 - run].var)
            if _uses(offset, names):
                break
            if run > 0 and extent(axes[-run]) != shape[-run]:
                break  # the inner axes do not span their rows: not contiguous
            run += 1
            if extent_of(offset) != 0:
                break  # an offset row start: the axes outside it cannot join
        tail = {iv.var for iv in axes[len(axes) - run :]}
        if run and any(_uses(i, tail) for i in idx[: len(idx) - run]):
            run = 0
        best = min(best, run)
    return best


def extent_of(e: Any) -> int | None:
    """A constant integer expression's value (None otherwise)."""
    value = getattr(e, "value", None)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def lane_plan(row: int | None, dtype: str) -> tuple[int, int] | None:
    """``(V, A)`` for a row of ``row`` elements of ``dtype``: lanes per accumulator (the
    largest power of two dividing the row, at most the target's lanes) and accumulators (the
    largest divisor of ``row / V`` up to half the target's vector registers). None for a row
    too short, or one with no such divisor (a prime length).
    """
    if row is None or row < MIN_ROW:
        return None
    lanes = pow2_divisor(row, vector_lanes(dtype))
    # Accumulators take at most half the registers; loads and addresses use the others.
    cap = max(2, vector_registers(dtype) // 2)
    chunks = row // lanes
    accs = max(d for d in range(1, min(cap, chunks) + 1) if chunks % d == 0)
    if lanes * accs < 2:  # noqa: PLR2004
        return None
    return lanes, accs


def schedule_lane_reduction(s: Any, op: ComputeOp, inlined: set[int]) -> IterVar | None:
    """Schedule the single-output reduction ``op`` in vector lanes (see the module docstring).

    Its output axes are fused (in parallel when the work justifies it) and returned, so a caller
    may attach the stage elsewhere; None (nothing scheduled) when the reduction does not read
    contiguous trailing rows. ``inlined`` holds the ids of the operations inlined into ``op``.
    """
    if len(op.body) != 1 or not isinstance(op.body[0], Reduce):
        return None
    run = _trailing_run(op, inlined)
    if run == 0:
        return None
    rows = list(op.reduce_axis)[-run:]
    row = product([extent(iv) for iv in rows])
    dtype = op.output(0).dtype
    if not dtype.startswith(("float", "int", "uint")):
        return None  # bool (logical) reductions keep the plain loop
    plan = lane_plan(row, dtype)
    if plan is None:
        return None
    lanes, accs = plan
    outputs = product([extent(iv) for iv in op.axis])
    if lanes == 1:
        block = largest_divisor(outputs, vector_registers(dtype) // 4)
        if block > 1:
            return _interleave_rows(s, op, block, row)
    return _lane_rows(s, op, rows, lanes, accs)


def _interleave_rows(s: Any, op: ComputeOp, block: int, row: int | None) -> IterVar | None:
    """Rows of odd length: ``block`` consecutive outputs reduced together, one scalar chain
    each, the reduction loops outside the (unrolled) block.
    """
    stage = s[op]
    axes = list(stage.op.axis)
    fused = stage.fuse(*axes) if len(axes) > 1 else axes[0]
    outer, inner = stage.split(fused, factor=block)
    stage.reorder(outer, *stage.op.reduce_axis, inner)
    stage.unroll(inner)
    work = product([*(extent(iv) for iv in op.axis), row])
    return fuse_parallel(stage, [outer], work)


def _lane_rows(s: Any, op: ComputeOp, rows: list[IterVar], lanes: int, accs: int) -> IterVar | None:
    """Each row split into ``accs`` accumulators of ``lanes`` lanes (two ``rfactor`` stages)."""
    row = product([extent(iv) for iv in rows])
    out: Tensor = op.output(0)
    stage = s[op]
    k = stage.fuse(*rows) if len(rows) > 1 else rows[0]
    _, ki = stage.split(k, factor=lanes * accs)
    ndim = len(op.axis)
    part = s.rfactor(out, ki, factor_axis=ndim)
    pstage = s[part]
    kv = pstage.op.axis[-1]
    a, v = pstage.split(kv, factor=lanes)
    pstage.reorder(*pstage.op.axis[:-1], *pstage.op.reduce_axis, a, v)
    stages = [pstage]
    pstage.unroll(a)
    if lanes > 1:
        pstage.vectorize(v)
    if lanes > 1 and accs > 1:
        # Accumulators added lane by lane into one vector before its lanes are summed.
        (kf,) = s[out].op.reduce_axis
        _, vf = s[out].split(kf, factor=lanes)
        lane = s.rfactor(out, vf, factor_axis=ndim)
        lstage = s[lane]
        lstage.reorder(*lstage.op.axis[:-1], *lstage.op.reduce_axis, lstage.op.axis[-1])
        lstage.vectorize(lstage.op.axis[-1])
        stages.append(lstage)
    final = s[out]
    axes = list(final.op.axis)
    work = product([*(extent(iv) for iv in axes), row])
    fused = fuse_parallel(final, axes, work)
    if fused is not None:
        for st in stages:
            st.compute_at(final, fused)
            st.set_scope("local")
    return fused
