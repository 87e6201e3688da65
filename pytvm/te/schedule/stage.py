"""Stages: how one computation's loops are split, ordered, fused, vectorized and placed.

``s = te.create_schedule(C.op)`` makes one ``Stage`` per computation that ``C`` needs; the
primitives (``split``, ``tile``, ``reorder``, ``fuse``, ``vectorize``, ``parallel``, ``unroll``,
``pragma``, ``compute_inline``, ``compute_at``, ``compute_root``, ``storage_align``) edit a stage's
leaf loops and its attachment; ``cache_read``/``cache_write`` add stages. Nothing is lowered
until :func:`pytvm.te.lower_schedule`. A bad request raises ``TVMValueError`` naming the stage
and the axis.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...ffi.errors import TVMValueError
from ...ir.container import Map
from ...tir.expr import ExprLike, IterVar, IterVarType, PrimExpr, Range, Var, const
from ..tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from .iter_var_attr import IterVarAttr, iter_var_attrs
from .layout_map import LayoutMap
from .record import Recorder, recorded

__all__ = ["Fuse", "Singleton", "Split", "Stage", "StageGroup", "Transform"]


@dataclass(frozen=True, slots=True, eq=False)
class Split:
    """``parent = outer * factor + inner`` (``factor`` from ``factor=`` or from ``nparts=``)."""

    parent: IterVar
    outer: IterVar
    inner: IterVar
    factor: PrimExpr | None
    nparts: PrimExpr | None
    disable_predication: bool = False


@dataclass(frozen=True, slots=True, eq=False)
class Fuse:
    """``fused = outer * extent(inner) + inner``."""

    outer: IterVar
    inner: IterVar
    fused: IterVar


@dataclass(frozen=True, slots=True, eq=False)
class Singleton:
    """The one loop (of extent 1) of a stage with no axes, made by ``fuse()`` with no axes."""

    iter: IterVar


@dataclass(frozen=True, slots=True, eq=False)
class Transform:
    """``transform_layout`` of a compute stage: its data axes ``original`` are iterated as the
    physical axes ``transformed``; ``logical`` gives each original axis in those axes' vars.
    """

    original: tuple[IterVar, ...]
    transformed: tuple[IterVar, ...]
    logical: tuple[PrimExpr, ...]


#: TVM's ``AttachType`` numbers, as ``Stage.attach_type`` reports them.
ATTACH_TYPES = {"root": 1, "inline": 2, "at": 4}


@dataclass(eq=False)
class StageGroup:
    """Stages placed together (``Schedule.create_group``): attaching the group attaches them."""

    members: list[Stage] = field(default_factory=list)
    group: StageGroup | None = None
    attach: str = "root"  # root | inline | at
    attach_stage: Stage | None = None
    attach_ivar: IterVar | None = None

    @property
    def num_child_stages(self) -> int:
        """How many stages (nested groups' ones included) the group holds."""
        return len(self.members)

    @property
    def attach_type(self) -> int:
        """TVM's ``AttachType`` number of the group's placement."""
        return ATTACH_TYPES[self.attach]

    def _direct(self) -> list[Stage]:
        """Members whose placement this group decides (not those of a nested, placed group)."""
        out = []
        for m in self.members:
            g = m.group
            while g is not None and g is not self and g.attach == "root":
                g = g.group
            if g is self:
                out.append(m)
        return out

    def compute_at(self, parent: Stage, iv: IterVar) -> None:
        """Compute every stage of the group inside ``parent``'s loop ``iv``."""
        if any(parent is m for m in self.members):
            raise TVMValueError(f"group: compute_at {parent.name}, a stage of the group itself")
        parent._leaf(iv, "compute_at of a group")
        self.attach, self.attach_stage, self.attach_ivar = "at", parent, iv
        for m in self._direct():
            if m.attach == "root" or m.placed_by is not None:
                m.attach, m.attach_stage, m.attach_ivar = "at", parent, iv
                m.placed_by = self

    def compute_root(self) -> None:
        """Compute the group's stages at the root."""
        self.attach, self.attach_stage, self.attach_ivar = "root", None, None
        for m in self._direct():
            if m.placed_by is not None:
                m.compute_root()

    def compute_inline(self) -> None:
        """Inline every stage of the group."""
        self.attach, self.attach_stage, self.attach_ivar = "inline", None, None
        for m in self._direct():
            m.compute_inline()


def _schedule_of(stage: Stage) -> Recorder | None:
    return stage.attach_sch


def _kind_name(iv: IterVar) -> str:
    return "reduction axis" if iv.iter_type is IterVarType.COMM_REDUCE else "axis"


@dataclass(eq=False)
class Stage:
    """One computation's loop nest: leaf loops, their kinds, where it is computed."""

    op: Operation
    outputs: tuple[Tensor, ...]
    body: tuple[PrimExpr, ...]
    axis: tuple[IterVar, ...]
    reduce_axis: tuple[IterVar, ...]
    scope: str = "global"
    leaf_iter_vars: list[IterVar] = field(default_factory=list)
    relations: list[Split | Fuse | Singleton | Transform] = field(default_factory=list)
    all_iter_vars: list[IterVar] = field(default_factory=list)
    kinds: dict[IterVar, str] = field(default_factory=dict)  # leaf -> parallel/vectorize/unroll
    pragmas: dict[IterVar, dict[str, Any]] = field(default_factory=dict)
    attach: str = "root"  # root | inline | at
    attach_stage: Stage | None = None
    attach_ivar: IterVar | None = None
    align: dict[int, tuple[int, int]] = field(default_factory=dict)  # root axis index -> (f, o)
    is_output: bool = False
    threads: dict[IterVar, IterVar] = field(default_factory=dict)  # leaf -> bound thread axis
    group: StageGroup | None = None
    placed_by: StageGroup | None = None  # the group whose compute_at placed the stage
    layout_maps: list[LayoutMap] = field(default_factory=list)  # transform_layout, in order
    attach_sch: Recorder | None = field(default=None, repr=False)  # the schedule holding it

    def __post_init__(self) -> None:
        if not self.leaf_iter_vars:
            self.leaf_iter_vars = [*self.axis, *self.reduce_axis]
            self.all_iter_vars = list(self.leaf_iter_vars)

    @property
    def name(self) -> str:
        """The stage's (operation's) name."""
        return self.op.name

    @property
    def origin_op(self) -> Operation:
        """The operation whose tensors the stage computes (``op`` may be a rewritten copy)."""
        return self.outputs[0].op

    @property
    def attach_type(self) -> int:
        """TVM's ``AttachType`` number: 1 root, 2 inline, 4 computed at a loop."""
        return ATTACH_TYPES[self.attach]

    @property
    def is_input(self) -> bool:
        """Whether the stage is a placeholder's (data the function receives; no loops)."""
        return isinstance(self.op, PlaceholderOp)

    @property
    def layout_transforms(self) -> list[LayoutMap]:
        """The ``transform_layout`` maps applied to the stage's buffer, in order."""
        return list(self.layout_maps)

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

    @recorded("split", _schedule_of)
    def split(
        self,
        parent: IterVar,
        factor: ExprLike | None = None,
        nparts: ExprLike | None = None,
        disable_predication: bool = False,
    ) -> tuple[IterVar, IterVar]:
        """Split ``parent`` into ``(outer, inner)`` with ``inner`` of extent ``factor``.

        With ``disable_predication`` no guard is emitted where the factor does not divide the
        extent: the caller promises the extra iterations are harmless (TVM's flag).
        """
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
        self.relations.append(Split(parent, outer, inner, f, p, disable_predication))  # type: ignore[arg-type]
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

    @recorded("reorder", _schedule_of)
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

    @recorded("fuse", _schedule_of)
    def fuse(self, *axes: IterVar) -> IterVar:
        """Fuse adjacent leaf axes (outermost first) into one axis."""
        if len(axes) == 1 and isinstance(axes[0], (list, tuple)):
            axes = tuple(axes[0])
        if not axes:
            if self.axis:
                raise TVMValueError(
                    f"stage {self.name}: fuse needs at least one axis (only a stage with no "
                    "axes fuses none, into its one loop)"
                )
            single = self._new_var("singleton", IterVarType.DATA_PAR)
            self.relations.append(Singleton(single))
            self.leaf_iter_vars.insert(0, single)  # before any reduction loop
            return single
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

    @recorded("vectorize", _schedule_of)
    def vectorize(self, iv: IterVar) -> None:
        """Run the axis as SIMD lanes (its extent should be a small constant)."""
        self._mark(iv, "vectorize")

    @recorded("parallel", _schedule_of)
    def parallel(self, iv: IterVar) -> None:
        """Split the axis's iterations across the runtime's threads."""
        self._mark(iv, "parallel")

    @recorded("unroll", _schedule_of)
    def unroll(self, iv: IterVar) -> None:
        """Unroll the axis (its extent must be a constant)."""
        self._mark(iv, "unroll")

    @recorded("pragma", _schedule_of)
    def pragma(self, iv: IterVar, key: str, value: Any = None) -> None:
        """Annotate the axis's loop with ``pragma_<key>`` (e.g. ``auto_unroll_max_step``);
        the keys ``unroll`` and ``vectorize`` mark the loop so instead, as in TVM.
        """
        if key in ("unroll", "vectorize"):
            self._mark(iv, key)
            return
        self._leaf(iv, "pragma")
        self.pragmas.setdefault(iv, {})[f"pragma_{key}"] = True if value is None else value

    @property
    def iter_var_attrs(self) -> Map[IterVar, IterVarAttr]:
        """TVM's per-axis records: each marked axis's kind, bound thread and pragmas."""
        return iter_var_attrs(self.kinds, self.threads, self.pragmas)

    @recorded("bind", _schedule_of)
    def bind(self, iv: IterVar, thread: IterVar) -> None:
        """Run the axis on GPU threads ``thread`` (kept for bound inference; lowering such a
        schedule raises, as pytvm compiles for CPUs).
        """
        self._leaf(iv, "bind")
        if not isinstance(thread, IterVar):
            raise TVMValueError(
                f"stage {self.name}: bind expects a thread axis (te.thread_axis), got {thread!r}"
            )
        self.threads[iv] = thread

    @recorded("set_scope", _schedule_of)
    def set_scope(self, scope: str) -> None:
        """Keep this stage's buffer in memory ``scope`` (``global``, ``shared``, ``local``...)."""
        if not isinstance(scope, str) or not scope:
            raise TVMValueError(f"stage {self.name}: set_scope expects a scope name, got {scope!r}")
        self.scope = scope

    @recorded("storage_align", _schedule_of)
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

    @recorded("transform_layout", _schedule_of)
    def transform_layout(self, mapping_function: Callable[..., Any]) -> list[IterVar] | None:
        """Store the stage's tensor in the layout ``mapping_function`` gives (TVM's semantics).

        ``mapping_function`` takes the logical indices and returns the physical ones (a split
        or fusion of them: ``lambda i, j: [j, i]``, ``lambda *idx, n: [*idx, n // 4, n % 4]``).
        For a compute stage the data axes are replaced by loops over the physical layout, which
        are returned; for an input the loops are unchanged and ``None`` is returned.
        """
        what = f"stage {self.name}: transform_layout"
        shape = self.outputs[0].shape
        layout = LayoutMap.from_func(mapping_function, len(shape))
        if not isinstance(self.op, ComputeOp):
            for done in self.layout_maps:
                shape = done.inverse(shape, what)[0]
            layout.inverse(shape, what)  # raises unless the map is a bijection
            self.layout_maps.append(layout)
            return None
        if self.layout_maps:
            raise TVMValueError(f"{what}: the stage's layout was already transformed")
        positions = [self._leaf(iv, "transform_layout") for iv in self.axis]
        first = min(positions, default=len(self.leaf_iter_vars))
        if sorted(positions) != list(range(first, first + len(positions))):
            raise TVMValueError(f"{what}: the data axes were reordered; transform the layout first")
        new_shape, new_vars, logical = layout.inverse(shape, what)
        transformed = tuple(
            IterVar(Range(const(0, ext.dtype), ext), var, IterVarType.DATA_PAR)
            for ext, var in zip(new_shape, new_vars, strict=True)
        )
        self.layout_maps.append(layout)
        self.all_iter_vars.extend(transformed)
        self.leaf_iter_vars[first : first + len(positions)] = list(transformed)
        self.relations.append(Transform(tuple(self.axis), transformed, logical))
        return list(transformed)

    # ------------------------------------------------------------------ placement

    @recorded("compute_inline", _schedule_of)
    def compute_inline(self) -> None:
        """Substitute this stage's expression into its consumers (no loops of its own)."""
        if self.reduce_axis:
            raise TVMValueError(f"stage {self.name}: a reduction cannot be inlined")
        if self.is_output:
            raise TVMValueError(f"stage {self.name}: an output of the schedule cannot be inlined")
        self.attach, self.attach_stage, self.attach_ivar = "inline", None, None
        self.placed_by = None

    @recorded("compute_root", _schedule_of)
    def compute_root(self) -> None:
        """Compute this stage on its own, before its consumers (the default)."""
        self.attach, self.attach_stage, self.attach_ivar = "root", None, None
        self.placed_by = None

    @recorded("compute_at", _schedule_of)
    def compute_at(self, parent: Stage, iv: IterVar) -> None:
        """Compute this stage inside ``parent``'s loop ``iv`` (just the part that loop needs)."""
        if not isinstance(parent, Stage):
            raise TVMValueError(f"stage {self.name}: compute_at expects a stage, got {parent!r}")
        # Attaching to itself, an output attached, cycles: found when lowering, as in TVM.
        if self.group is not None and parent.group is not self.group:
            inside = parent.group
            while inside is not None and inside is not self.group:
                inside = inside.group
            if inside is None:
                raise TVMValueError(
                    f"stage {self.name}: compute_at {parent.name}, which is outside the stage's "
                    "group; attach the group instead"
                )
        parent._leaf(iv, f"compute_at of {self.name}")
        self.attach, self.attach_stage, self.attach_ivar = "at", parent, iv
        self.placed_by = None
