"""Schedules: how each stage's loops are split, ordered, fused, vectorized and placed.

``s = te.create_schedule(C.op)`` makes one ``Stage`` per computation that ``C`` needs; the
primitives (``split``, ``tile``, ``reorder``, ``fuse``, ``vectorize``, ``parallel``, ``unroll``,
``pragma``, ``compute_inline``, ``compute_at``, ``compute_root``, ``storage_align``) edit a stage's
leaf loops and its attachment; ``cache_read``/``cache_write`` add stages. Nothing is lowered
until :func:`pytvm.te.lower_schedule`. A bad request raises ``TVMValueError`` naming the stage
and the axis.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..ffi.errors import TVMValueError
from ..tir.expr import ExprLike, IterVar, IterVarType, PrimExpr, ProducerLoad, Var, const
from ..tir.functor import IRMutator
from .tensor import ComputeOp, Operation, PlaceholderOp, Tensor

__all__ = ["Fuse", "Schedule", "Split", "Stage", "create_schedule"]


@dataclass(frozen=True, slots=True, eq=False)
class Split:
    """``parent = outer * factor + inner`` (``factor`` from ``factor=`` or from ``nparts=``)."""

    parent: IterVar
    outer: IterVar
    inner: IterVar
    factor: PrimExpr | None
    nparts: PrimExpr | None


@dataclass(frozen=True, slots=True, eq=False)
class Fuse:
    """``fused = outer * extent(inner) + inner``."""

    outer: IterVar
    inner: IterVar
    fused: IterVar


def _kind_name(iv: IterVar) -> str:
    return "reduction axis" if iv.iter_type is IterVarType.COMM_REDUCE else "axis"


@dataclass(eq=False)
class Stage:
    """One computation's loop nest: leaf loops, their kinds, where it is computed."""

    op: ComputeOp
    outputs: tuple[Tensor, ...]
    body: tuple[PrimExpr, ...]
    axis: tuple[IterVar, ...]
    reduce_axis: tuple[IterVar, ...]
    scope: str = "global"
    leaf_iter_vars: list[IterVar] = field(default_factory=list)
    relations: list[Split | Fuse] = field(default_factory=list)
    all_iter_vars: list[IterVar] = field(default_factory=list)
    kinds: dict[IterVar, str] = field(default_factory=dict)  # leaf -> parallel/vectorize/unroll
    pragmas: dict[IterVar, dict[str, Any]] = field(default_factory=dict)
    attach: str = "root"  # root | inline | at
    attach_stage: Stage | None = None
    attach_ivar: IterVar | None = None
    align: dict[int, tuple[int, int]] = field(default_factory=dict)  # root axis index -> (f, o)
    is_output: bool = False

    def __post_init__(self) -> None:
        if not self.leaf_iter_vars:
            self.leaf_iter_vars = [*self.axis, *self.reduce_axis]
            self.all_iter_vars = list(self.leaf_iter_vars)

    @property
    def name(self) -> str:
        """The stage's (operation's) name."""
        return self.op.name

    def __repr__(self) -> str:
        return f"stage({self.name})"

    # ------------------------------------------------------------------ checks

    def _leaf(self, iv: IterVar, what: str) -> int:
        if not isinstance(iv, IterVar):
            raise TVMValueError(f"stage {self.name}: {what} expects an IterVar, got {iv!r}")
        for k, leaf in enumerate(self.leaf_iter_vars):
            if leaf is iv:
                return k
        if any(v is iv for v in self.all_iter_vars):
            raise TVMValueError(
                f"stage {self.name}: {what}: axis {iv.var.name} was already split or fused; use "
                "the axes that split/fuse returned"
            )
        raise TVMValueError(
            f"stage {self.name}: {what}: axis {iv.var.name} is not an axis of this stage (its "
            f"axes are {', '.join(v.var.name for v in self.leaf_iter_vars)})"
        )

    def _new_var(self, name: str, iter_type: IterVarType) -> IterVar:
        iv = IterVar(None, Var(name, "int32"), iter_type)
        self.all_iter_vars.append(iv)
        return iv

    # ------------------------------------------------------------------ loop structure

    def split(
        self, parent: IterVar, factor: ExprLike | None = None, nparts: ExprLike | None = None
    ) -> tuple[IterVar, IterVar]:
        """Split ``parent`` into ``(outer, inner)`` with ``inner`` of extent ``factor``."""
        if (factor is None) == (nparts is None):
            raise TVMValueError(f"stage {self.name}: split takes exactly one of factor= or nparts=")
        k = self._leaf(parent, "split")
        amount = factor if factor is not None else nparts
        if isinstance(amount, int) and amount <= 0:
            raise TVMValueError(
                f"stage {self.name}: split of axis {parent.var.name}: "
                f"{'factor' if factor is not None else 'nparts'} must be positive, got {amount}"
            )
        name = parent.var.name
        outer = self._new_var(f"{name}.outer", parent.iter_type)
        inner = self._new_var(f"{name}.inner", parent.iter_type)
        f = const(factor) if isinstance(factor, int) else factor
        p = const(nparts) if isinstance(nparts, int) else nparts
        self.relations.append(Split(parent, outer, inner, f, p))  # type: ignore[arg-type]
        self.leaf_iter_vars[k : k + 1] = [outer, inner]
        return outer, inner

    def tile(
        self, x_parent: IterVar, y_parent: IterVar, x_factor: ExprLike, y_factor: ExprLike
    ) -> tuple[IterVar, IterVar, IterVar, IterVar]:
        """Split two axes and order them ``xo, yo, xi, yi``."""
        xo, xi = self.split(x_parent, factor=x_factor)
        yo, yi = self.split(y_parent, factor=y_factor)
        self.reorder(xo, yo, xi, yi)
        return xo, yo, xi, yi

    def reorder(self, *order: IterVar) -> None:
        """Put the given leaf axes in this order (the other leaves keep their places)."""
        positions = [self._leaf(iv, "reorder") for iv in order]
        if len(set(positions)) != len(positions):
            raise TVMValueError(f"stage {self.name}: reorder names an axis twice")
        slots = sorted(positions)
        leaves = list(self.leaf_iter_vars)
        for slot, iv in zip(slots, order, strict=True):
            leaves[slot] = iv
        self.leaf_iter_vars = leaves

    def fuse(self, *axes: IterVar) -> IterVar:
        """Fuse adjacent leaf axes (outermost first) into one axis."""
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        if not axes:
            raise TVMValueError(f"stage {self.name}: fuse needs at least one axis")
        positions = [self._leaf(iv, "fuse") for iv in axes]
        if positions != list(range(positions[0], positions[0] + len(positions))):
            names = ", ".join(iv.var.name for iv in axes)
            raise TVMValueError(
                f"stage {self.name}: fuse of axes {names}: they must be adjacent leaf axes, "
                "outermost first (reorder them first)"
            )
        kinds = {iv.iter_type for iv in axes}
        if len(kinds) > 1:
            raise TVMValueError(
                f"stage {self.name}: cannot fuse a reduction axis with a data-parallel axis"
            )
        fused = axes[0]
        for inner in axes[1:]:
            new = self._new_var(f"{fused.var.name}.{inner.var.name}.fused", inner.iter_type)
            self.relations.append(Fuse(fused, inner, new))
            fused = new
        k = positions[0]
        self.leaf_iter_vars[k : k + len(axes)] = [fused]
        return fused

    # ------------------------------------------------------------------ loop kinds

    def _mark(self, iv: IterVar, kind: str) -> None:
        self._leaf(iv, kind)
        if kind in ("vectorize", "parallel") and iv.iter_type is IterVarType.COMM_REDUCE:
            raise TVMValueError(
                f"stage {self.name}: cannot {kind} reduction axis {iv.var.name} (iterations "
                "of a reduction depend on each other)"
            )
        self.kinds[iv] = kind

    def vectorize(self, iv: IterVar) -> None:
        """Run the axis as SIMD lanes (its extent should be a small constant)."""
        self._mark(iv, "vectorize")

    def parallel(self, iv: IterVar) -> None:
        """Split the axis's iterations across the runtime's threads."""
        self._mark(iv, "parallel")

    def unroll(self, iv: IterVar) -> None:
        """Unroll the axis (its extent must be a constant)."""
        self._mark(iv, "unroll")

    def pragma(self, iv: IterVar, key: str, value: Any = None) -> None:
        """Annotate the axis's loop with ``pragma_<key>`` (e.g. ``auto_unroll_max_step``)."""
        self._leaf(iv, "pragma")
        self.pragmas.setdefault(iv, {})[f"pragma_{key}"] = True if value is None else value

    def bind(self, iv: IterVar, thread: IterVar) -> None:
        """GPU thread binding: not available for CPU targets."""
        raise TVMValueError(
            f"stage {self.name}: bind({iv.var.name}, {thread.thread_tag or thread.var.name}): "
            "pytvm compiles for CPUs; use parallel() instead"
        )

    def storage_align(self, iv: IterVar, factor: int, offset: int) -> None:
        """Pad this stage's buffer so the stride of ``iv``'s dimension is ``k*factor + offset``."""
        for k, root in enumerate(self.axis):
            if root is iv:
                if factor <= 0:
                    raise TVMValueError(f"stage {self.name}: storage_align factor must be > 0")
                self.align[k] = (factor, offset)
                return
        raise TVMValueError(
            f"stage {self.name}: storage_align needs one of the stage's own axes "
            f"({', '.join(v.var.name for v in self.axis)}), got {iv.var.name}"
        )

    # ------------------------------------------------------------------ placement

    def compute_inline(self) -> None:
        """Substitute this stage's expression into its consumers (no loops of its own)."""
        if self.reduce_axis:
            raise TVMValueError(f"stage {self.name}: a reduction cannot be inlined")
        if self.is_output:
            raise TVMValueError(f"stage {self.name}: an output of the schedule cannot be inlined")
        self.attach, self.attach_stage, self.attach_ivar = "inline", None, None

    def compute_root(self) -> None:
        """Compute this stage on its own, before its consumers (the default)."""
        self.attach, self.attach_stage, self.attach_ivar = "root", None, None

    def compute_at(self, parent: Stage, iv: IterVar) -> None:
        """Compute this stage inside ``parent``'s loop ``iv`` (just the part that loop needs)."""
        if not isinstance(parent, Stage):
            raise TVMValueError(f"stage {self.name}: compute_at expects a stage, got {parent!r}")
        if self.is_output:
            raise TVMValueError(f"stage {self.name}: an output cannot be computed at another stage")
        if parent is self:
            raise TVMValueError(f"stage {self.name}: compute_at its own loop")
        parent._leaf(iv, f"compute_at of {self.name}")
        self.attach, self.attach_stage, self.attach_ivar = "at", parent, iv


class Schedule:
    """Stages of the computations that produce ``outputs``, in dependency order."""

    def __init__(self, outputs: Sequence[Operation]) -> None:
        self.outputs = tuple(outputs)
        self.stages: list[Stage] = []
        self._by_op: dict[Operation, Stage] = {}
        seen: set[Operation] = set()
        for op in self.outputs:
            self._visit(op, seen)
        for op in self.outputs:
            self[op].is_output = True

    def _visit(self, op: Operation, seen: set[Operation]) -> None:
        if op in seen or isinstance(op, PlaceholderOp):
            return
        seen.add(op)
        if not isinstance(op, ComputeOp):
            raise TVMValueError(f"create_schedule: cannot schedule operation {op}")
        for t in op.input_tensors:
            self._visit(t.op, seen)
        outputs = tuple(op.output(k) for k in range(op.num_outputs))
        stage = Stage(op, outputs, op.body, op.axis, op.reduce_axis)
        self._add(stage, op)

    def _add(self, stage: Stage, op: Operation, position: int | None = None) -> None:
        if position is None:
            self.stages.append(stage)
        else:
            self.stages.insert(position, stage)
        self._by_op[op] = stage

    def __getitem__(self, key: Tensor | Operation) -> Stage:
        op = key.op if isinstance(key, Tensor) else key
        stage = self._by_op.get(op)
        if stage is None:
            raise TVMValueError(
                f"schedule has no stage for {op.name}: it is an input or not needed by "
                f"{', '.join(o.name for o in self.outputs)}"
            )
        return stage

    def stage_of(self, tensor: Tensor) -> Stage | None:
        """The stage computing ``tensor`` (None for inputs)."""
        return self._by_op.get(tensor.op)

    def readers(self, stage: Stage) -> list[Stage]:
        """Stages whose bodies read ``stage``'s outputs."""
        ops = {t.op for t in stage.outputs}
        return [s for s in self.stages if s is not stage and ops & _ops_read(s.body)]

    # ------------------------------------------------------------------ cache stages

    def cache_write(self, tensor: Tensor, scope: str) -> Tensor:
        """Compute ``tensor`` into a ``scope`` buffer first, then copy it out (``T.local``)."""
        stage = self[tensor]
        if stage.op.num_outputs != 1:
            raise TVMValueError(
                f"cache_write of {stage.name}: multi-output stages are not supported"
            )
        from ..tir.functor import substitute
        from .operation import compute

        shape = [iv.dom.extent for iv in stage.axis if iv.dom is not None]
        body = stage.body[0]
        axis = stage.axis

        def inner(*idx: PrimExpr) -> PrimExpr:
            return substitute(body, {iv.var: i for iv, i in zip(axis, idx, strict=True)})  # type: ignore[no-any-return]

        cached: Tensor = compute(shape, inner, name=f"{stage.name}.{scope}")
        cache_op = cached.op
        assert isinstance(cache_op, ComputeOp)
        cache_stage = Stage(
            cache_op, (cached,), cache_op.body, cache_op.axis, cache_op.reduce_axis, scope
        )
        position = self.stages.index(stage)
        self._add(cache_stage, cached.op, position)
        # The original stage now copies from the cache, over its own axes (so ``C.op.axis``
        # still names the stage's loops, as in TVM).
        data_axis = stage.axis
        stage.body = (ProducerLoad(cached, tuple(iv.var for iv in data_axis)),)
        copy_axis = data_axis
        stage.reduce_axis = ()
        stage.leaf_iter_vars = list(copy_axis)
        stage.all_iter_vars = list(copy_axis)
        stage.relations.clear()
        stage.kinds.clear()
        stage.pragmas.clear()
        return cached

    def cache_read(
        self, tensor: Tensor, scope: str, readers: Sequence[Tensor | Operation]
    ) -> Tensor:
        """Copy ``tensor`` into a ``scope`` buffer that ``readers`` read instead."""
        from .operation import compute

        cached: Tensor = compute(tensor.shape, lambda *i: tensor[i], name=f"{tensor.name}.{scope}")
        cache_op = cached.op
        assert isinstance(cache_op, ComputeOp)
        cache_stage = Stage(cache_op, (cached,), cache_op.body, cache_op.axis, (), scope)
        targets = [self[r] for r in readers]
        position = min(self.stages.index(t) for t in targets)
        self._add(cache_stage, cached.op, position)
        for t in targets:
            t.body = tuple(_replace_loads(b, tensor, cached) for b in t.body)
        return cached


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
    from ..tir.functor import IRVisitor

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
