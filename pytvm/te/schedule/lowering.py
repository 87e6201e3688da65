"""TVM's ``InferBound`` and ``ScheduleOps``: a schedule's loop ranges, and its loop nests."""

from __future__ import annotations

from collections.abc import Mapping

from ...ir.container import Map
from ...tir import stmt as S
from ...tir.expr import IterVar, PrimExpr, Range, Var
from ...tir.functor import substitute
from ..scan import ScanOp
from .schedule import Schedule

__all__ = ["InferBound", "ScheduleOps"]


def InferBound(sch: Schedule) -> Map[IterVar, Range]:
    """The range of every axis of every (not inlined) stage, in the stages' axis variables.

    Examples
    --------
    >>> from pytvm import te
    >>> A = te.placeholder((10,), name="A")
    >>> B = te.compute((10,), lambda i: A[i] + 1.0, name="B")
    >>> s = te.create_schedule(B.op)
    >>> outer, inner = s[B].split(B.op.axis[0], factor=4)
    >>> bounds = InferBound(s)
    >>> str(bounds[outer].extent), str(bounds[inner].extent)
    ('3', '4')
    """
    # Imported here: lower_schedule reads this package's stages while the package loads.
    from ..lower_schedule import schedule_bounds

    bounds = schedule_bounds(sch)
    stages = [s for s in sch.compute_stages if s.attach != "inline"]
    names: dict[Var, PrimExpr] = {}
    for stage in stages:
        info = bounds.leaf(stage)
        for iv, var in info.loop_var.items():
            # A scan's loop runs from 0; its axis (the row) starts where the init rows end.
            start = info.root_min[iv] if isinstance(stage.op, ScanOp) else None
            names[var] = iv.var - start if start is not None else iv.var
    out: Map[IterVar, Range] = Map()
    for stage in stages:
        for iv, rng in bounds.ranges(stage).items():
            lo = bounds.ana.simplify(substitute(rng.min, names))
            out[iv] = Range(lo, bounds.ana.simplify(substitute(rng.extent, names)))
    return out


def ScheduleOps(sch: Schedule, bounds: Mapping[IterVar, Range] | None = None) -> S.Stmt:
    """The loop nests of ``sch`` as one statement (every buffer allocated, no function).

    ``bounds`` is accepted for TVM's signature; the ranges are inferred from ``sch`` again,
    since they are a function of it.
    """
    from ..lower_schedule import schedule_ops

    del bounds
    return schedule_ops(sch)
