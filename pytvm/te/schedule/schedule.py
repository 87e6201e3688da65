"""The schedule: the stages of a computation, and the primitives that add or rewrite stages.

``cache_read``/``cache_write`` add a copy stage, ``rfactor`` splits a reduction into a partial
stage and a final one, ``create_group`` places several stages together. The per-stage primitives
live on :class:`~pytvm.te.schedule.stage.Stage`.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Sequence
from typing import overload

from ...ffi.errors import TVMValueError
from ...tir.expr import (
    CommReducer,
    IterVar,
    PrimExpr,
    ProducerLoad,
    Range,
    Reduce,
    Var,
    const,
)
from ...tir.functor import IRMutator, IRVisitor, substitute
from ..extern import ExternOp
from ..scan import ScanOp
from ..tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from .graph import GetSubGraph
from .record import keep_record, recorded
from .rfactor import rfactor
from .stage import Stage, StageGroup

__all__ = ["Schedule", "create_schedule", "rebind_body"]


class Schedule:
    """Stages of the computations that produce ``outputs``, in dependency order."""

    def __init__(self, outputs: Sequence[Operation]) -> None:
        self.outputs = tuple(outputs)
        self.stages: list[Stage] = []
        self.groups: list[StageGroup] = []
        self._by_op: dict[Operation, Stage] = {}
        seen: set[Operation] = set()
        for op in self.outputs:
            self._visit(op, seen)
        for op in self.outputs:
            self[op].is_output = True
        for stage in list(self.stages):
            if isinstance(stage.op, ScanOp):
                self._group_scan_body(stage, stage.op)
        self.schedule_record: list[Schedule] = []
        self.primitive_record: list[str] = []
        self.keep_schedule_record = keep_record()
        self.record("vanilla")

    def _visit(self, op: Operation, seen: set[Operation]) -> None:
        if op in seen:
            return
        seen.add(op)
        if isinstance(op, PlaceholderOp):
            # An input has a stage too (``s[A].transform_layout``), with no loops.
            self._add(Stage(op, (op.output(0),), (), (), ()), op)
            return
        if not isinstance(op, (ComputeOp, ScanOp, ExternOp)):
            raise TVMValueError(f"create_schedule: cannot schedule operation {op}")
        for t in op.input_tensors:
            self._visit(t.op, seen)
        if isinstance(op, ExternOp):
            outs = tuple(op.output(k) for k in range(op.num_outputs))
            # A hybrid op (an extern) has axes: the loops of its statement, to schedule.
            self._add(Stage(op, outs, (), op.axis, ()), op)
            return
        if isinstance(op, ScanOp):
            self._add(_scan_stage(op), op)
            return
        outputs = tuple(op.output(k) for k in range(op.num_outputs))
        stage = Stage(op, outputs, op.body, op.axis, op.reduce_axis)
        self._add(stage, op)

    def record(self, primitive: str) -> None:
        """Snapshot the schedule after ``primitive`` when it keeps a record."""
        if self.keep_schedule_record:
            self.schedule_record.append(self.copy())
            self.primitive_record.append(primitive)

    def copy(self) -> Schedule:
        """A copy whose stages can be scheduled further without changing this one."""
        twin = copy.copy(self)
        twin.keep_schedule_record = False
        twin.stages = [_copy_stage(s) for s in self.stages]
        by_stage = {id(old): new for old, new in zip(self.stages, twin.stages, strict=True)}
        twin._by_op = {op: by_stage[id(st)] for op, st in self._by_op.items()}
        twin.groups = list(self.groups)
        for st in twin.stages:
            st.attach_sch = twin
            if st.attach_stage is not None:
                st.attach_stage = by_stage.get(id(st.attach_stage), st.attach_stage)
        return twin

    def _add(self, stage: Stage, op: Operation, position: int | None = None) -> None:
        stage.attach_sch = self
        if position is None:
            self.stages.append(stage)
        else:
            self.stages.insert(position, stage)
        self._by_op[op] = stage

    def _group_scan_body(self, stage: Stage, op: ScanOp) -> None:
        """Group the scan's body (TVM's scan group) and run it inside the scan's loop."""
        body = GetSubGraph(op.update, [*op.state_placeholder, *op.inputs])
        members = [self._by_op[b] for b in body if b in self._by_op]
        group = StageGroup(members=members)
        for m in members:
            m.group = group
        self.groups.append(group)
        group.compute_at(stage, op.scan_axis)

    def __getitem__(self, key: Tensor | Operation) -> Stage:
        op = key.op if isinstance(key, Tensor) else key
        stage = self._by_op.get(op)
        if stage is None:
            name = getattr(op, "name", repr(op))
            raise TVMValueError(
                f"schedule has no stage for {name}: it is an input or not needed by "
                f"{', '.join(o.name for o in self.outputs)}"
            )
        return stage

    def stage_of(self, tensor: Tensor) -> Stage | None:
        """The stage computing ``tensor`` (None for inputs)."""
        stage = self._by_op.get(tensor.op)
        return None if stage is None or stage.is_input else stage

    def input_stage(self, tensor: Tensor) -> Stage | None:
        """The stage of input ``tensor`` (None for computed tensors and unknown inputs)."""
        stage = self._by_op.get(tensor.op)
        return stage if stage is not None and stage.is_input else None

    @property
    def compute_stages(self) -> list[Stage]:
        """The stages that run loops (every stage but the inputs'), in dependency order."""
        return [s for s in self.stages if not s.is_input]

    def readers(self, stage: Stage) -> list[Stage]:
        """Stages whose bodies read ``stage``'s outputs."""
        ops = {t.op for t in stage.outputs}
        return [s for s in self.stages if s is not stage and ops & _ops_read(s.body)]

    def normalize(self) -> Schedule:
        """TVM rebases every loop to start at 0; pytvm's loops always do, so this is ``self``."""
        return self

    # ------------------------------------------------------------------ cache stages

    @recorded("cache_write")
    @overload
    def cache_write(self, tensor: Tensor, scope: str) -> Tensor: ...
    @overload
    def cache_write(self, tensor: Sequence[Tensor], scope: str) -> list[Tensor]: ...
    def cache_write(self, tensor: Tensor | Sequence[Tensor], scope: str) -> Tensor | list[Tensor]:
        """Compute ``tensor`` into a ``scope`` buffer first, then copy it out (``T.local``).

        For a stage with several outputs pass all of them (a list); a list of caches comes back.
        """
        tensors = [tensor] if isinstance(tensor, Tensor) else list(tensor)
        stage = self[tensors[0]]
        if stage.is_input:
            raise TVMValueError(f"cache_write of {stage.name}: it is an input, not computed")
        if any(self[t] is not stage for t in tensors) or len(tensors) != stage.op.num_outputs:
            raise TVMValueError(
                f"cache_write of {stage.name}: pass every output of the stage "
                f"({stage.op.num_outputs}) and only them"
            )
        axis = tuple(
            IterVar(Range(const(0, iv.var.dtype), iv.dom.extent), Var(f"{iv.var.name}.c"))
            for iv in stage.axis
            if iv.dom is not None
        )
        vmap: dict[Var, PrimExpr] = {
            old.var: new.var for old, new in zip(stage.axis, axis, strict=True)
        }
        body = rebind_body(stage.body, vmap)
        cache_op = ComputeOp(f"{stage.name}.{scope}", stage.op.tag, {}, axis, body)
        cached = [cache_op.output(k) for k in range(cache_op.num_outputs)]
        cache_stage = Stage(cache_op, tuple(cached), body, axis, cache_op.reduce_axis, scope)
        self._add(cache_stage, cache_op, self.stages.index(stage))
        # The original stage now copies from the cache, over its own axes (so ``C.op.axis``
        # still names the stage's loops, as in TVM).
        idx = tuple(iv.var for iv in stage.axis)
        stage.body = tuple(ProducerLoad(c, idx) for c in cached)
        self._reset(
            stage, ComputeOp(stage.name, stage.op.tag, stage.op.attrs, stage.axis, stage.body)
        )
        return cached if isinstance(tensor, (list, tuple)) else cached[0]

    def _reset(self, stage: Stage, op: ComputeOp) -> None:
        """Make ``op`` the stage's operation, with fresh loops over its own axes."""
        stage.op = op
        stage.body = op.body
        stage.reduce_axis = op.reduce_axis
        stage.leaf_iter_vars = [*stage.axis, *stage.reduce_axis]
        stage.all_iter_vars = list(stage.leaf_iter_vars)
        stage.relations.clear()
        stage.kinds.clear()
        stage.pragmas.clear()
        stage.threads.clear()
        self._by_op[op] = stage

    @recorded("cache_read")
    def cache_read(
        self, tensor: Tensor, scope: str, readers: Tensor | Operation | Sequence[Tensor | Operation]
    ) -> Tensor:
        """Copy ``tensor`` into a ``scope`` buffer that ``readers`` read instead."""
        from ..operation import compute

        cached: Tensor = compute(tensor.shape, lambda *i: tensor[i], name=f"{tensor.name}.{scope}")
        cache_op = cached.op
        assert isinstance(cache_op, ComputeOp)
        cache_stage = Stage(cache_op, (cached,), cache_op.body, cache_op.axis, (), scope)
        reader_list = [readers] if isinstance(readers, (Tensor, Operation)) else list(readers)
        targets = [self[r] for r in reader_list]
        position = min(self.stages.index(t) for t in targets)
        self._add(cache_stage, cached.op, position)
        for t in targets:
            t.body = tuple(_replace_loads(b, tensor, cached) for b in t.body)
        return cached

    # ------------------------------------------------------------------ rfactor, groups

    @recorded("rfactor")
    def rfactor(self, tensor: Tensor, axis: IterVar, factor_axis: int = 0) -> Tensor:
        """Split ``tensor``'s reduction: a new stage reduces everything but ``axis``, keeping
        ``axis`` as a data dimension (at position ``factor_axis``); ``tensor``'s stage then
        reduces that dimension. Returns the new (partial) tensor.
        """
        stage = self[tensor]
        if stage.is_input:
            raise TVMValueError(f"rfactor of {stage.name}: it is an input, not a reduction")
        partial, final_op = rfactor(stage, axis, factor_axis)
        self._add(partial, partial.op, self.stages.index(stage))
        self._reset(stage, final_op)
        outs = list(partial.outputs)
        return outs[0] if len(outs) == 1 else outs  # type: ignore[return-value]

    def create_group(
        self,
        outputs: Tensor | Sequence[Tensor],
        inputs: Tensor | Sequence[Tensor],
        include_inputs: bool = False,
    ) -> StageGroup:
        """Group the stages between ``inputs`` and ``outputs`` (the inputs' own stages too when
        ``include_inputs``); ``group.compute_at(...)`` then places them together.
        """
        outs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
        ins = [inputs] if isinstance(inputs, Tensor) else list(inputs)
        stop = {t.op for t in ins}
        members: list[Stage] = []

        def walk(op: Operation) -> None:
            stage = self._by_op.get(op)
            if stage is None or stage.is_input or any(stage is m for m in members):
                return
            if op in stop:
                if include_inputs:
                    members.append(stage)
                return
            members.append(stage)
            for t in stage.op.input_tensors:
                walk(t.op)

        for t in outs:
            walk(t.op)
        if not members:
            raise TVMValueError("create_group: no stage lies between the inputs and the outputs")
        parents = {id(m.group): m.group for m in members}
        parent = next(iter(parents.values())) if len(parents) == 1 else None
        group = StageGroup(members=members, group=parent)
        for other in self.groups:
            if other.group is parent and all(any(s is m for m in members) for s in other.members):
                other.group = group
        for m in members:
            if m.group is parent:
                m.group = group
        self.groups.append(group)
        return group


def _copy_stage(stage: Stage) -> Stage:
    return dataclasses.replace(
        stage,
        leaf_iter_vars=list(stage.leaf_iter_vars),
        relations=list(stage.relations),
        all_iter_vars=list(stage.all_iter_vars),
        kinds=dict(stage.kinds),
        pragmas={iv: dict(p) for iv, p in stage.pragmas.items()},
        align=dict(stage.align),
        threads=dict(stage.threads),
        layout_maps=list(stage.layout_maps),
    )


def _scan_stage(op: ScanOp) -> Stage:
    """The stage of a scan: one loop over the scan axis; its body reads each update's row."""
    spatial = iter(op.spatial_axis_)
    reads = tuple(
        ProducerLoad(u, (op.scan_axis.var, *(next(spatial).var for _ in u.shape[1:])))
        for u in op.update
    )
    outputs = tuple(op.output(k) for k in range(op.num_outputs))
    return Stage(
        op,
        outputs,
        reads,
        (),
        (),
        leaf_iter_vars=[op.scan_axis],
        all_iter_vars=[op.scan_axis, *op.spatial_axis_],
    )


def rebind_body(body: tuple[PrimExpr, ...], vmap: dict[Var, PrimExpr]) -> tuple[PrimExpr, ...]:
    """``body`` with ``vmap`` substituted, reductions included (their combiner, axis ranges and
    initial values); the outputs of one reduction keep sharing one combiner and source.
    """
    first = body[0]
    if not isinstance(first, Reduce):
        return tuple(substitute(b, vmap) for b in body)
    comb = first.combiner
    new_comb = CommReducer(
        comb.lhs,
        comb.rhs,
        tuple(substitute(r, vmap) for r in comb.result),
        tuple(substitute(i, vmap) for i in comb.identity_element),
        comb.name,
    )
    axes = tuple(_rebind_axis(iv, vmap) for iv in first.axis)
    source = tuple(substitute(s, vmap) for s in first.source)
    cond = substitute(first.condition, vmap)
    init = tuple(substitute(i, vmap) for i in first.init)
    return tuple(Reduce(new_comb, source, axes, cond, k, init) for k in range(len(body)))


def _rebind_axis(iv: IterVar, vmap: dict[Var, PrimExpr]) -> IterVar:
    """The axis itself, unless its range uses a substituted variable."""
    if iv.dom is None:
        return iv
    lo, ext = substitute(iv.dom.min, vmap), substitute(iv.dom.extent, vmap)
    if lo is iv.dom.min and ext is iv.dom.extent:
        return iv
    return IterVar(Range(lo, ext), iv.var, iv.iter_type, iv.thread_tag)


class _ReplaceLoads(IRMutator):
    def __init__(self, old: Tensor, new: Tensor) -> None:
        self.old, self.new = old, new

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        node = self.generic_visit(node)
        if node.producer is self.old:
            return ProducerLoad(self.new, node.indices)
        return node


def _replace_loads(body: PrimExpr, old: Tensor, new: Tensor) -> PrimExpr:
    result: PrimExpr = _ReplaceLoads(old, new).visit(body)
    return result


def _ops_read(body: Sequence[PrimExpr]) -> set[Operation]:
    found: set[Operation] = set()

    class _Collect(IRVisitor):
        def visit_ProducerLoad(self, node: ProducerLoad) -> None:
            found.add(node.producer.op)
            self.generic_visit(node)

    for b in body:
        _Collect().visit(b)
    return found


def create_schedule(ops: Operation | Tensor | Sequence[Operation | Tensor]) -> Schedule:
    """A schedule computing ``ops`` (operations or tensors) with default loops."""
    items: list[Operation | Tensor] = list(ops) if isinstance(ops, (list, tuple)) else [ops]  # type: ignore[list-item]
    return Schedule([t.op if isinstance(t, Tensor) else t for t in items])
