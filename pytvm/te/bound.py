"""Bound inference: the range of every axis of every stage of a schedule, as its loops will run.

A stage at the root (or inlined) covers its whole domain. A stage computed at a consumer's loop
covers the region that one iteration of that loop reads of it: the union, over every index the
consumer (and any other consumer computed at the same loop or inside it) reads, of that index's
range while the loops inside the attach point run their full extents. From those root ranges the
stage's relations give every other axis its extent: a split ``parent -> (outer, inner)`` has
``inner = factor`` and ``outer = ceil(parent / factor)`` (or the reverse for ``nparts``); a fuse
has the product of its two axes; a reorder changes no range. Passing the relations back up gives
each root axis its value in terms of the leaf loop variables, and the guards the loops need where
a split does not divide its axis or an attached region reaches past the stage's domain.

The result is a :class:`Bounds` object, which computes each stage's :class:`StageBounds` on first
use and keeps it; the schedule is only read. Dicts are keyed by the schedule's own objects
(``Stage``, ``IterVar``, ``Var``): they hash by identity, so each entry lives as long as the
bound result that holds it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from ..ffi.errors import TVMValueError
from ..tir.arith import Analyzer
from ..tir.expr import IntImm, IterVar, PrimExpr, ProducerLoad, Range, Var, const
from ..tir.functor import IRVisitor, substitute
from ..tir.op import max as max_of
from ..tir.op import min as min_of
from .scan import ScanOp
from .schedule.schedule import Schedule
from .schedule.stage import Singleton, Split, Stage, Transform
from .tensor import Operation

__all__ = ["Bounds", "StageBounds", "infer_bound"]

#: One read of a producer: its indices, the values of the reader's root axis variables, and the
#: ranges of the loop variables those values use.
_Read = tuple[tuple[PrimExpr, ...], Mapping[Var, PrimExpr], Mapping[Var, Range]]


@dataclass
class StageBounds:
    """The loops of one stage: every axis's extent, and each root axis in terms of the loops.

    Attributes
    ----------
    extent
        The extent of every axis of the stage: root, reduction, split and fused ones.
    root_min
        Where each root (data or reduction) axis starts.
    loop_var
        The loop variable of each leaf axis.
    offset
        Each root axis's position within its range, in the leaf loop variables.
    root_value
        Each root axis variable's value (``root_min + offset``), simplified.
    guards
        ``(axis, condition)`` for every point the loops visit that is not in the stage's range:
        splits that do not divide their axis, attached regions past the domain's edges.
    """

    extent: dict[IterVar, PrimExpr] = field(default_factory=dict)
    root_min: dict[IterVar, PrimExpr] = field(default_factory=dict)
    loop_var: dict[IterVar, Var] = field(default_factory=dict)
    offset: dict[IterVar, PrimExpr] = field(default_factory=dict)
    root_value: dict[Var, PrimExpr] = field(default_factory=dict)
    guards: list[tuple[IterVar, PrimExpr]] = field(default_factory=list)


class Bounds:
    """Bound inference over one schedule; each stage's loops are inferred once, on demand.

    Parameters
    ----------
    sch
        The schedule (read, never written).
    bodies
        Each stage's body with inlined stages substituted (what its loops compute). Left out, the
        stages' own bodies, which is right only when no stage is inlined.
    ana
        The analyzer that simplifies the ranges. It learns the range of every loop an attached
        stage sits in, so whoever builds those loops can simplify with the same facts.
    """

    def __init__(
        self,
        sch: Schedule,
        bodies: Mapping[Stage, tuple[PrimExpr, ...]] | None = None,
        ana: Analyzer | None = None,
    ) -> None:
        if bodies is None:
            inlined = [s.name for s in sch.compute_stages if s.attach == "inline"]
            if inlined:
                raise TVMValueError(
                    f"infer_bound: stages {', '.join(inlined)} are inlined; pass the bodies "
                    "with them substituted (bodies=...)"
                )
            bodies = {s: s.body for s in sch.stages}
        self.sch = sch
        self.bodies = bodies
        self.ana = ana if ana is not None else Analyzer()
        self._leaves: dict[Stage, StageBounds] = {}

    def ranges(self, stage: Stage) -> dict[IterVar, Range]:
        """``Range(min, extent)`` of every axis of ``stage`` (split and fused axes start at 0)."""
        info = self.leaf(stage)
        return {iv: Range(info.root_min.get(iv, const(0)), ext) for iv, ext in info.extent.items()}

    # ------------------------------------------------------------------ root axes

    def root_ranges(self, stage: Stage) -> list[tuple[PrimExpr, PrimExpr]]:
        """(min, extent) of each data axis of ``stage`` (its attach region, or the whole)."""
        full = [(const(0), iv.dom.extent) for iv in stage.axis if iv.dom is not None]
        if stage.attach != "at":
            return full
        parent = stage.attach_stage
        assert parent is not None and stage.attach_ivar is not None
        info = self.leaf(parent)
        pos = next(k for k, iv in enumerate(parent.leaf_iter_vars) if iv is stage.attach_ivar)
        inner = {
            info.loop_var[iv]: Range(const(0), info.extent[iv])
            for iv in parent.leaf_iter_vars[pos + 1 :]
        }
        inner.update(self._shared_thread_loops(stage))
        if isinstance(parent.op, ScanOp):
            # One step of a scan computes its rows over every spatial index.
            for iv in parent.op.spatial_axis_:
                assert iv.dom is not None
                inner[iv.var] = iv.dom
        reads: list[_Read] = [
            (idx, info.root_value, inner) for idx in reads_of(self.bodies[parent], stage)
        ]
        parent_reads = bool(reads)
        # Readers through inlined stages count: their bodies have those substituted.
        readers = [
            r
            for r in self.sch.compute_stages
            if r is not stage and r.attach != "inline" and reads_of(self.bodies[r], stage)
        ]
        for reader in readers:
            if reader is not parent:
                reads += self._reads_at_same_loop(stage, reader, parent, pos, inner, parent_reads)
        if not reads:
            raise TVMValueError(
                f"stage {stage.name}: compute_at {parent.name}, which does not read it; attach "
                "a stage to one of its consumers"
            )
        result = []
        for d in range(len(full)):
            lows, highs = [], []
            for idx, values, ranges in reads:
                e = substitute(idx[d], values)
                iset = self.ana.int_set(e, ranges)
                if iset.min_value is None or iset.max_value is None:
                    raise TVMValueError(
                        f"stage {stage.name}: cannot bound dimension {d} at {parent.name}"
                    )
                lows.append(iset.min_value)
                highs.append(iset.max_value)
            lo = self.ana.simplify(_fold(lows, "min"))
            hi = self.ana.simplify(_fold(highs, "max"))
            extent = self.ana.simplify(hi - lo + 1)
            if not isinstance(extent, IntImm):
                bound = self.ana.const_int_bound(extent)
                if bound.max_value < 2**31:
                    extent = const(int(bound.max_value))
            result.append((lo, extent))
        return result

    def _shared_thread_loops(self, stage: Stage) -> dict[Var, Range]:
        """Enclosing loops bound to threads that share ``stage``'s memory scope: the region
        covers every thread of them (a ``shared`` buffer serves all ``threadIdx``, a
        ``global`` one every block too, a ``warp`` one the lanes of ``threadIdx.x``).
        """
        ranges: dict[Var, Range] = {}
        outer = stage.attach_stage
        while outer is not None:
            info = self.leaf(outer)
            for iv, thread in outer.threads.items():
                if _shares_across(stage.scope, thread.thread_tag):
                    ranges[info.loop_var[iv]] = Range(const(0), info.extent[iv])
            outer = outer.attach_stage
        return ranges

    def _reads_at_same_loop(
        self,
        stage: Stage,
        reader: Stage,
        parent: Stage,
        pos: int,
        inner: dict[Var, Range],
        parent_reads: bool,
    ) -> list[_Read]:
        """What ``reader`` (another consumer of ``stage``) reads of it within one iteration of
        ``parent``'s loop at ``pos``: allowed when ``reader`` is computed at that loop or inside
        it (directly, or at a stage that is), so every consumer runs within the region
        ``stage`` computes. The loops of the stages between them run in full.
        """
        chain = [reader]
        while chain[-1].attach == "at" and chain[-1].attach_stage is not parent:
            nxt = chain[-1].attach_stage
            if nxt is None or nxt in chain:
                break
            chain.append(nxt)
        last = chain[-1]
        leaves = parent.leaf_iter_vars
        depth = (
            next((k for k, iv in enumerate(leaves) if iv is last.attach_ivar), -1)
            if last.attach == "at" and last.attach_stage is parent
            else -1
        )
        if depth < pos and not parent_reads:
            raise TVMValueError(
                f"stage {stage.name}: compute_at {parent.name}, which does not read it (nor "
                f"does {reader.name}, its reader, run inside that loop); attach a stage to one "
                "of its consumers"
            )
        if depth < pos:
            raise TVMValueError(
                f"stage {stage.name}: computed at {parent.name}, but {reader.name} reads it "
                f"too and is not computed at that loop of {parent.name} or inside it; compute "
                f"{reader.name} there as well, or {stage.name} at root (or inline it)"
            )
        ranges = dict(inner)
        for between in chain:
            binfo = self.leaf(between)
            for iv in between.leaf_iter_vars:
                ranges[binfo.loop_var[iv]] = Range(const(0), binfo.extent[iv])
        rinfo = self.leaf(reader)
        return [(idx, rinfo.root_value, ranges) for idx in reads_of(self.bodies[reader], stage)]

    # ------------------------------------------------------------------ leaf axes

    def leaf(self, stage: Stage) -> StageBounds:
        """The loops of ``stage``: inferred on first use, then kept."""
        cached = self._leaves.get(stage)
        if cached is None:
            cached = self._leaves[stage] = self._infer_leaf(stage)
        return cached

    def _infer_leaf(self, stage: Stage) -> StageBounds:
        roots = self.root_ranges(stage)
        info = StageBounds()
        for iv, (lo, ext) in zip(stage.axis, roots, strict=True):
            info.extent[iv] = ext
            info.root_min[iv] = lo
        for iv in stage.reduce_axis:
            assert iv.dom is not None
            info.extent[iv] = iv.dom.extent
            info.root_min[iv] = iv.dom.min
        if isinstance(stage.op, ScanOp):
            scan_axis = stage.op.scan_axis
            assert scan_axis.dom is not None
            info.extent[scan_axis] = scan_axis.dom.extent
            info.root_min[scan_axis] = scan_axis.dom.min
        self._pass_down(stage, info)
        for iv in stage.leaf_iter_vars:
            info.loop_var[iv] = Var(iv.var.name, "int32")
        self._pass_up(stage, info)
        self._bind_data_axes(stage, info)
        if stage.attach == "at":
            # A region computed at a consumer's loop may reach past the stage's own domain at the
            # edges (a partial tile): compute only the points that exist.
            self._bind_enclosing_loops(stage)
            for iv in stage.axis:
                assert iv.dom is not None
                value = info.root_value[iv.var]
                lo, hi = info.root_min[iv], info.root_min[iv] + info.extent[iv]
                if not self.ana.can_prove(lo >= 0):
                    info.guards.append((iv, value >= 0))
                if not self.ana.can_prove(hi <= iv.dom.extent):
                    info.guards.append((iv, value < iv.dom.extent))
        return info

    def _pass_down(self, stage: Stage, info: StageBounds) -> None:
        """Extents of the split, fused and singleton axes from their parents'. A split by more
        than a constant extent is clamped to the extent (one full inner or outer loop).
        """
        for rel in stage.relations:
            if isinstance(rel, Split):
                ext = info.extent[rel.parent]
                if rel.factor is not None:
                    factor = _clamp(rel.factor, ext)
                    inner, outer = factor, _ceil_div(ext, factor)
                else:
                    assert rel.nparts is not None
                    nparts = _clamp(rel.nparts, ext)
                    outer, inner = nparts, _ceil_div(ext, nparts)
                info.extent[rel.outer] = self.ana.simplify(outer)
                info.extent[rel.inner] = self.ana.simplify(inner)
            elif isinstance(rel, Singleton):
                info.extent[rel.iter] = const(1)
            elif isinstance(rel, Transform):
                for old in rel.original:
                    assert old.dom is not None
                    if not self.ana.can_prove(info.extent[old] == old.dom.extent):
                        raise TVMValueError(
                            f"stage {stage.name}: its layout is transformed, so it must cover "
                            "its whole domain (compute it at the root)"
                        )
                for new in rel.transformed:
                    assert new.dom is not None
                    info.extent[new] = new.dom.extent
            else:
                info.extent[rel.fused] = self.ana.simplify(
                    info.extent[rel.outer] * info.extent[rel.inner]
                )

    def _pass_up(self, stage: Stage, info: StageBounds) -> None:
        """Offsets of every axis from the leaf loop variables (the relations, last first)."""
        offset: dict[IterVar, PrimExpr] = {iv: info.loop_var[iv] for iv in stage.leaf_iter_vars}
        for rel in reversed(stage.relations):
            if isinstance(rel, Split):
                inner_ext = info.extent[rel.inner]
                offset[rel.parent] = offset[rel.outer] * inner_ext + offset[rel.inner]
                parent_ext = info.extent[rel.parent]
                if not rel.disable_predication and not self.ana.can_prove(
                    _covers_exactly(self.ana, parent_ext, inner_ext, info.extent[rel.outer])
                ):
                    info.guards.append((rel.parent, offset[rel.parent] < parent_ext))
            elif isinstance(rel, Singleton):
                continue
            elif isinstance(rel, Transform):
                values = {new.var: offset[new] for new in rel.transformed}
                for old, logical in zip(rel.original, rel.logical, strict=True):
                    offset[old] = self.ana.simplify(substitute(logical, values))
            else:
                inner_ext = info.extent[rel.inner]
                offset[rel.outer] = offset[rel.fused] // inner_ext
                offset[rel.inner] = offset[rel.fused] % inner_ext
        for rel in stage.relations:
            if isinstance(rel, Transform):
                for iv in rel.transformed:
                    info.offset[iv] = offset[iv]
        roots = [*stage.axis, *stage.reduce_axis]
        if isinstance(stage.op, ScanOp):
            roots.append(stage.op.scan_axis)
        for iv in roots:
            info.offset[iv] = offset[iv]
            info.root_value[iv.var] = self.ana.simplify(info.root_min[iv] + offset[iv])

    def _bind_data_axes(self, stage: Stage, info: StageBounds) -> None:
        """Reduction ranges that use the data axes (``reduce_axis((0, i))``), in the loops."""
        values = {iv.var: info.root_value[iv.var] for iv in stage.axis}
        if not stage.reduce_axis or not values:
            return

        def fix(e: PrimExpr) -> PrimExpr:
            return self.ana.simplify(substitute(e, values))

        info.extent = {iv: fix(e) for iv, e in info.extent.items()}
        info.root_min = {iv: fix(e) for iv, e in info.root_min.items()}
        info.offset = {iv: fix(e) for iv, e in info.offset.items()}
        info.root_value = {v: fix(e) for v, e in info.root_value.items()}
        info.guards = [(iv, fix(g)) for iv, g in info.guards]

    def _bind_enclosing_loops(self, stage: Stage) -> None:
        """Tell the analyzer the ranges of the loops a stage computed at another one sits in."""
        parent = stage.attach_stage
        while parent is not None:
            info = self.leaf(parent)
            for iv in parent.leaf_iter_vars:
                var = info.loop_var[iv]
                self.ana.bind(var, Range(const(0), info.extent[iv]), allow_override=True)
            parent = parent.attach_stage


def infer_bound(
    sch: Schedule,
    bodies: Mapping[Stage, tuple[PrimExpr, ...]] | None = None,
    ana: Analyzer | None = None,
) -> Bounds:
    """The bound inference of ``sch``: ``infer_bound(s).ranges(s[C])[axis]`` is a ``Range``.

    Examples
    --------
    >>> from pytvm import te
    >>> A = te.placeholder((10,), name="A")
    >>> B = te.compute((10,), lambda i: A[i] + 1.0, name="B")
    >>> s = te.create_schedule(B.op)
    >>> outer, inner = s[B].split(B.op.axis[0], factor=4)
    >>> ranges = infer_bound(s).ranges(s[B])
    >>> str(ranges[outer].extent), str(ranges[inner].extent)
    ('3', '4')
    """
    return Bounds(sch, bodies, ana)


def reads_of(body: tuple[PrimExpr, ...], stage: Stage) -> list[tuple[PrimExpr, ...]]:
    """The indices of every read of ``stage``'s outputs in ``body``, in visiting order."""
    ops: set[Operation] = {t.op for t in stage.outputs}
    reads: list[tuple[PrimExpr, ...]] = []

    class _Collect(IRVisitor):
        def visit_ProducerLoad(self, node: ProducerLoad) -> None:
            if node.producer.op in ops:
                reads.append(node.indices)
            self.generic_visit(node)

    for b in body:
        _Collect().visit(b)
    return reads


def _shares_across(scope: str, tag: str) -> bool:
    """Whether a buffer in ``scope`` is shared by the threads of the axis tagged ``tag``."""
    if tag.startswith("blockIdx"):
        return scope == "global"
    if tag.startswith("threadIdx"):
        return scope in ("global", "shared") or (scope == "warp" and tag == "threadIdx.x")
    return False


def _covers_exactly(ana: Analyzer, ext: PrimExpr, inner: PrimExpr, outer: PrimExpr) -> PrimExpr:
    """The split's loops cover no more than the extent (so no guard is needed)."""
    covered: PrimExpr = ana.simplify(outer * inner) <= ext
    return covered


def _ceil_div(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    quotient: PrimExpr = (a + b - 1) // b
    return quotient


def _clamp(amount: PrimExpr, ext: PrimExpr) -> PrimExpr:
    """``amount``, or the extent where both are constants and the extent is smaller."""
    if isinstance(amount, IntImm) and isinstance(ext, IntImm) and ext.value < amount.value:
        return ext
    return amount


def _fold(values: list[PrimExpr], how: str) -> PrimExpr:
    out = values[0]
    for v in values[1:]:
        out = min_of(out, v) if how == "min" else max_of(out, v)
    return out
