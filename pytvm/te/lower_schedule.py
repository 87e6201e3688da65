"""Lowering a schedule to a ``PrimFunc``: inlining, loop nests, reductions, buffers.

Inlined stages are substituted into their readers; every other stage becomes a loop nest over
its leaf axes, with the extents, loop variables and guards that bound inference
(:mod:`pytvm.te.bound`) gives it. A stage computed at another stage's loop covers only the
region that loop needs, in a buffer of that region's size; stages at the root get a buffer of
their full shape. Splits whose factor does not divide the extent produce guards
``if (likely(index < extent))`` that the loop-partition pass later lifts out of the main loops.
The result has multi-dimensional buffers; the tir pipeline flattens and optimises it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ..ffi.errors import TVMValueError
from ..tir import stmt as S
from ..tir.arith import Analyzer
from ..tir.expr import (
    Buffer,
    BufferLoad,
    Call,
    IntImm,
    IterVar,
    IterVarType,
    PrimExpr,
    ProducerLoad,
    Range,
    Reduce,
    Var,
    const,
)
from ..tir.function import PrimFunc
from ..tir.functor import IRMutator, substitute
from .bound import Bounds
from .extern import ExternOp
from .hybrid.op import HybridOp
from .lower_extern import bind_extern_body, extern_placement
from .lower_hybrid import bind_hybrid_body
from .lower_scan import alias_scan_buffers
from .placement import Placed
from .scan import ScanOp
from .schedule.layout_map import physical_indices, physical_shape
from .schedule.schedule import Schedule
from .schedule.stage import Stage, Transform
from .tensor import Operation, Tensor

__all__ = ["create_prim_func", "lower_schedule", "schedule_bounds", "schedule_ops"]

_KINDS = {
    "parallel": S.ForKind.PARALLEL,
    "vectorize": S.ForKind.VECTORIZED,
    "unroll": S.ForKind.UNROLLED,
}


class _Lowering:
    def __init__(
        self, sch: Schedule, args: Sequence[Any], name: str, standalone: bool = False
    ) -> None:
        self.sch = sch
        self.standalone = standalone  # inputs get buffers when read (no function arguments)
        self.name = name
        self.ana = Analyzer()
        self.placed: dict[Operation, Placed] = {}
        self.params: list[Var] = []
        self.buffer_map: dict[Var, Buffer] = {}
        self.arg_ops: set[Operation] = set()
        for arg in args:
            self._add_arg(arg)
        self.bodies = self._resolve_bodies()
        self.bounds = Bounds(sch, self.bodies, self.ana)
        self.aliased: set[Operation] = set()  # write another op's buffer (a scan's)
        alias_scan_buffers(self.sch, self.placed, self.aliased)

    def _add_arg(self, arg: Any) -> None:
        if isinstance(arg, Var):
            self.params.append(arg)
            return
        if not isinstance(arg, Tensor):
            raise TVMValueError(f"lower {self.name}: args must be tensors or vars, got {arg!r}")
        key = arg.op
        known = self.placed.get(key)
        if known is not None and arg.value_index < len(known.buffers):
            if known.buffers[arg.value_index] is not None:
                raise TVMValueError(
                    f"lower {self.name}: tensor {arg.name} is given twice in args; each "
                    "argument is its own buffer (pass a copy, e.g. te.compute of it, to have "
                    "two)"
                )
        stage = self.sch._by_op.get(key)
        layouts = list(stage.layout_maps) if stage is not None else []
        what = f"lower {self.name}: buffer {arg.name}"
        shape = physical_shape(layouts, arg.shape, what)
        buf = Buffer(Var(arg.name, "handle"), arg.dtype, shape, arg.name)
        self.params.append(buf.data)
        self.buffer_map[buf.data] = buf
        placed = self.placed.setdefault(key, Placed([], [const(0)] * arg.ndim, [], layouts))
        while len(placed.buffers) <= arg.value_index:
            placed.buffers.append(None)  # type: ignore[arg-type]  # filled by the other outputs
        placed.buffers[arg.value_index] = buf
        self.arg_ops.add(key)

    # ------------------------------------------------------------------ bodies (inlining)

    def _resolve_bodies(self) -> dict[Stage, tuple[PrimExpr, ...]]:
        """Each stage's body with the inlined stages it reads substituted."""
        bodies: dict[Stage, tuple[PrimExpr, ...]] = {}
        inlined: dict[Operation, Stage] = {}
        for stage in self.sch.compute_stages:
            body = tuple(_Inline(inlined, bodies).visit(b) for b in stage.body)
            bodies[stage] = body
            if stage.attach == "inline":
                if stage.origin_op in self.arg_ops:
                    raise TVMValueError(
                        f"stage {stage.name}: an argument of the function cannot be inlined"
                    )
                inlined[stage.origin_op] = stage
        return bodies

    # ------------------------------------------------------------------ statements

    def nest(self, stage: Stage) -> S.Stmt:
        if isinstance(stage.op, ScanOp):
            # The scan's loop holds its body's stages (attached at the scan axis).
            return self._loops(stage, stage.leaf_iter_vars, S.seq())
        if isinstance(stage.op, HybridOp):
            ins = [self.buffer_of(t) for t in stage.op.inputs]
            outs = self._place(stage).buffers
            return bind_hybrid_body(stage.op, ins, outs, stage, self.bounds, self.buffer_of)
        if isinstance(stage.op, ExternOp):
            ins = [self.buffer_of(t) for t in stage.op.inputs]
            return bind_extern_body(stage.op, ins, self._place(stage).buffers)
        info = self.bounds.leaf(stage)
        leaves = stage.leaf_iter_vars
        body = self.bodies[stage]
        reduces = {iv for iv in leaves if iv.iter_type is IterVarType.COMM_REDUCE}
        guards = info.guards
        data_guards = [g for iv, g in guards if iv.iter_type is not IterVarType.COMM_REDUCE]
        if not isinstance(body[0], Reduce):
            store = self._guard(self._stores(stage, body), [g for _, g in guards])
            return self._loops(stage, leaves, store)
        # A reduction over no axes (``topi.sum(x, axis=())``) updates once after its init.
        first = next((k for k, iv in enumerate(leaves) if iv in reduces), len(leaves))
        init = self._guard(self._init_stores(stage, body), data_guards)
        update = self._guard(self._update_stores(stage, body), [g for _, g in guards])
        init_leaves = [iv for iv in leaves[first:] if iv not in reduces]
        # The init nest gets its own loop variables (it is a sibling of the update nest).
        fresh = {info.loop_var[iv]: Var(info.loop_var[iv].name, "int32") for iv in init_leaves}
        init_nest = substitute(self._loops(stage, init_leaves, init, attach=False), fresh)
        inner = S.seq(init_nest, self._loops(stage, leaves[first:], update))
        return self._loops(stage, leaves[:first], inner)

    def _loops(
        self, stage: Stage, leaves: Sequence[IterVar], body: S.Stmt, attach: bool = True
    ) -> S.Stmt:
        info = self.bounds.leaf(stage)
        for iv in reversed(leaves):
            if attach:
                body = self._attached_at(stage, iv, body)
            kind = _KINDS.get(stage.kinds.get(iv, ""), S.ForKind.SERIAL)
            body = S.For(
                info.loop_var[iv],
                const(0),
                info.extent[iv],
                kind,
                body,
                stage.pragmas.get(iv, {}),
            )
        return body

    def _attached_at(self, parent: Stage, iv: IterVar, body: S.Stmt) -> S.Stmt:
        children = [
            s
            for s in self.sch.stages
            if s.attach == "at" and s.attach_stage is parent and s.attach_ivar is iv
        ]
        for child in reversed(children):
            placed = self._place(child)
            inner = S.seq(self.nest(child), body)
            for buf in reversed(placed.buffers if child.origin_op not in self.aliased else []):
                inner = S.Allocate(buf, inner)
            body = inner
        return body

    def _place(self, stage: Stage) -> Placed:
        key = stage.origin_op
        if key in self.placed:
            return self.placed[key]
        if isinstance(stage.op, ExternOp):
            self.placed[key] = extern_placement(stage.op)
            return self.placed[key]
        ranges = self.bounds.root_ranges(stage)
        shape = tuple(self._largest_extent(stage, ext) for _, ext in ranges)
        layouts = list(stage.layout_maps)
        if layouts:
            if stage.attach == "at":
                raise TVMValueError(
                    f"stage {stage.name}: a stage whose layout is transformed cannot be "
                    "computed at another stage; compute it at the root"
                )
            shape = physical_shape(layouts, shape, f"lower {self.name}: stage {stage.name}")
        scope = (
            stage.scope
            if stage.scope in ("local", "global")
            else ("global" if stage.attach != "at" else "local")
        )
        buffers = []
        for t in stage.outputs:
            strides = _aligned_strides(shape, stage.align)
            buffers.append(
                Buffer(Var(t.name, "handle"), t.dtype, shape, t.name, strides, None, scope)
            )
        placed = Placed(buffers, [lo for lo, _ in ranges], list(shape), layouts)
        self.placed[key] = placed
        return placed

    def _largest_extent(self, stage: Stage, extent: PrimExpr) -> PrimExpr:
        """``extent``, or where it varies with the loops ``stage`` is computed in, its largest
        value over them: a buffer has one size (a static workspace needs it), and the region
        of each iteration fits in it.
        """
        if isinstance(extent, IntImm):
            return extent
        ana = Analyzer()
        outer = stage.attach_stage if stage.attach == "at" else None
        while outer is not None:
            info = self.bounds.leaf(outer)
            for iv in outer.leaf_iter_vars:
                if isinstance(info.extent[iv], IntImm):
                    ana.bind(info.loop_var[iv], Range(const(0), info.extent[iv]), True)
            outer = outer.attach_stage if outer.attach == "at" else None
        bound = ana.const_int_bound(extent)
        if bound.max_value >= bound.POS_INF or bound.max_value < 1:
            return extent
        return const(bound.max_value, extent.dtype)

    def _indices(self, stage: Stage) -> tuple[PrimExpr, ...]:
        info = self.bounds.leaf(stage)
        placed = self._place(stage)
        if stage.origin_op in self.aliased:
            # A scan's init or update writes the scan's buffer at absolute indices.
            return tuple(self.ana.simplify(info.root_value[iv.var]) for iv in stage.axis)
        transform = next((r for r in stage.relations if isinstance(r, Transform)), None)
        if transform is not None and len(placed.layouts) == 1:
            # The loops run over the physical layout: their offsets are the buffer indices.
            idx = tuple(info.offset[iv] for iv in transform.transformed)
        else:
            idx = physical_indices(placed.layouts, [info.offset[iv] for iv in stage.axis])
        return tuple(self.ana.simplify(i) for i in idx)

    def _stores(self, stage: Stage, body: tuple[PrimExpr, ...]) -> S.Stmt:
        placed = self._place(stage)
        idx = self._indices(stage)
        info = self.bounds.leaf(stage)
        stores = [
            S.BufferStore(buf, self._expr(substitute(value, info.root_value)), idx)
            for buf, value in zip(placed.buffers, body, strict=True)
        ]
        return S.seq(*stores)

    def _init_stores(self, stage: Stage, body: tuple[PrimExpr, ...]) -> S.Stmt:
        placed = self._place(stage)
        idx = self._indices(stage)
        red = body[0]
        assert isinstance(red, Reduce)
        info = self.bounds.leaf(stage)
        values = red.init or red.combiner.identity_element
        return S.seq(
            *(
                S.BufferStore(
                    buf, self._expr(substitute(v, info.root_value)).astype(buf.dtype), idx
                )
                for buf, v in zip(placed.buffers, values, strict=True)
            )
        )

    def _update_stores(self, stage: Stage, body: tuple[PrimExpr, ...]) -> S.Stmt:
        placed = self._place(stage)
        idx = self._indices(stage)
        red = body[0]
        assert isinstance(red, Reduce)
        info = self.bounds.leaf(stage)
        comb = red.combiner
        olds = [BufferLoad(buf, idx) for buf in placed.buffers]
        sources = [self._expr(substitute(s, info.root_value)) for s in red.source]
        vmap: dict[Var, PrimExpr] = {}
        for lhs, rhs, old, src in zip(comb.lhs, comb.rhs, olds, sources, strict=True):
            vmap[lhs], vmap[rhs] = old, src
        # The combiner may use the data axes too (``max(x + y, n)``): bind them to the loops.
        news = [self._expr(substitute(substitute(r, info.root_value), vmap)) for r in comb.result]
        if len(news) == 1:
            update: S.Stmt = S.BufferStore(placed.buffers[0], news[0], idx)
        else:
            temps = [
                Var(f"{buf.name}_v{k}", n.dtype)
                for k, (buf, n) in enumerate(zip(placed.buffers, news, strict=True))
            ]
            update = S.seq(
                *(S.BufferStore(b, t, idx) for b, t in zip(placed.buffers, temps, strict=True))
            )
            for t, n in reversed(list(zip(temps, news, strict=True))):
                update = S.LetStmt(t, n, update)
        cond = self._expr(substitute(red.condition, info.root_value))
        if isinstance(cond, IntImm) and cond.value:
            return update
        return S.IfThenElse(cond, update)

    def _guard(self, body: S.Stmt, conds: list[PrimExpr]) -> S.Stmt:
        # One likely-guard per condition, so loop partitioning can lift each on its own.
        for cond in reversed(conds):
            body = S.IfThenElse(Call("bool", "tir.likely", (cond,)), body)
        return body

    def placement_of(self, tensor: Tensor) -> Placed:
        """Where ``tensor`` lives: an argument, a stage's buffer, or (standalone) a new input."""
        placed = self.placed.get(tensor.op)
        if placed is not None:
            return placed
        stage = self.sch.stage_of(tensor)
        if stage is None and self.standalone:
            self._add_arg(tensor)
            return self.placed[tensor.op]
        if stage is None:
            raise TVMValueError(
                f"lower {self.name}: tensor {tensor.name} is read but is not in args; pass "
                "every input tensor"
            )
        return self._place(stage)

    def buffer_of(self, tensor: Tensor) -> Buffer:
        """The buffer ``tensor`` lives in."""
        return self.placement_of(tensor).buffers[tensor.value_index]

    def _expr(self, e: PrimExpr) -> PrimExpr:
        return _ToBuffers(self).visit(e)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ function

    def run(self) -> PrimFunc:
        body = self.statement()
        attrs = {"global_symbol": self.name, "tir.noalias": True}
        return PrimFunc(tuple(self.params), body, self.buffer_map, attrs)

    def statement(self) -> S.Stmt:
        """The loop nests of every stage; stages not in the args (outputs too, as in TVM) get
        an allocation.
        """
        roots = [s for s in self.sch.compute_stages if s.attach == "root"]
        for stage in self.sch.compute_stages:
            if stage.threads and stage.attach != "inline":
                iv, thread = next(iter(stage.threads.items()))
                raise TVMValueError(
                    f"lower {self.name}: stage {stage.name} binds {iv.var.name} to "
                    f"{thread.thread_tag or thread.var.name}; pytvm compiles for CPUs, use "
                    "parallel() instead of bind()"
                )
            if stage.attach == "at":
                self._check_attach(stage)
            placed = self.placed.get(stage.origin_op)
            if stage.origin_op in self.arg_ops and placed is not None:
                if len(placed.buffers) != stage.op.num_outputs or any(
                    b is None for b in placed.buffers
                ):
                    raise TVMValueError(
                        f"lower {self.name}: {stage.name} has {stage.op.num_outputs} outputs; "
                        "pass all of them in args"
                    )
        parts: list[S.Stmt] = []
        allocs: list[Buffer] = []
        for stage in roots:
            placed = self._place(stage)
            if stage.origin_op not in self.arg_ops and stage.origin_op not in self.aliased:
                allocs.extend(placed.buffers)
            parts.append(self.nest(stage))
        body = S.seq(*parts)
        for buf in reversed(allocs):
            body = S.Allocate(buf, body)
        return body

    def _check_attach(self, stage: Stage) -> None:
        parent = stage.attach_stage
        if parent is stage:
            raise TVMValueError(f"stage {stage.name}: compute_at its own loop")
        if stage.is_output:
            raise TVMValueError(
                f"stage {stage.name}: an output cannot be computed at another stage"
            )
        seen: set[Stage] = set()
        while parent is not None:
            if parent in seen or parent is stage:
                raise TVMValueError(f"stage {stage.name}: compute_at makes a cycle")
            seen.add(parent)
            if parent.attach == "inline":
                raise TVMValueError(
                    f"stage {stage.name}: computed at {parent.name}, which is inlined"
                )
            parent = parent.attach_stage


def _aligned_strides(
    shape: tuple[PrimExpr, ...], align: dict[int, tuple[int, int]]
) -> tuple[PrimExpr, ...]:
    if not align:
        return ()
    strides: list[PrimExpr] = []
    stride: PrimExpr = const(1)
    for d in reversed(range(len(shape))):
        if d in align:
            factor, offset = align[d]
            stride = ((stride + factor - 1 - offset) // factor) * factor + offset
        strides.append(stride)
        stride = stride * shape[d]
    return tuple(reversed(strides))


class _Inline(IRMutator):
    def __init__(
        self, inlined: dict[Operation, Stage], bodies: dict[Stage, tuple[PrimExpr, ...]]
    ) -> None:
        self.inlined = inlined
        self.bodies = bodies

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        node = self.generic_visit(node)
        stage = self.inlined.get(node.producer.op)
        if stage is None:
            return node
        body = self.bodies[stage][node.producer.value_index]
        return substitute(body, {iv.var: i for iv, i in zip(stage.axis, node.indices, strict=True)})  # type: ignore[no-any-return]


class _ToBuffers(IRMutator):
    def __init__(self, lowering: _Lowering) -> None:
        self.lowering = lowering

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        node = self.generic_visit(node)
        tensor = node.producer
        placed = self.lowering.placement_of(tensor)
        buf = placed.buffers[tensor.value_index]
        idx = tuple(self.lowering.ana.simplify(i) for i in placed.indices(node.indices))
        return BufferLoad(buf, idx)


def lower_schedule(sch: Schedule, args: Sequence[Any], name: str = "main") -> PrimFunc:
    """The PrimFunc of schedule ``sch`` whose parameters are ``args`` (tensors, in order)."""
    if not isinstance(sch, Schedule):
        raise TVMValueError(f"lower_schedule expects a te.Schedule, got {type(sch).__name__}")
    return _Lowering(sch, args, name).run()


def schedule_ops(sch: Schedule) -> S.Stmt:
    """The loop nests of ``sch`` as one statement, every buffer allocated (TVM's
    ``ScheduleOps``: no function, no arguments).
    """
    return _Lowering(sch, [], "main", standalone=True).statement()


def schedule_bounds(sch: Schedule) -> Bounds:
    """Bound inference of ``sch`` with its inlined stages substituted into their readers."""
    return _Lowering(sch, [], "main").bounds


def create_prim_func(args: Sequence[Any], name: str = "main") -> PrimFunc:
    """TVM 0.27's ``te.create_prim_func([A, B, C])``: the default schedule of the outputs."""
    outputs = [a for a in args if isinstance(a, Tensor) and not _is_input(a)]
    if not outputs:
        raise TVMValueError("create_prim_func: args hold no computed tensor (an output)")
    readers = {t.op for o in outputs for t in _all_inputs(o)}
    final = [o for o in outputs if o.op not in readers]
    return lower_schedule(Schedule([o.op for o in final]), args, name)


def _is_input(t: Tensor) -> bool:
    from .tensor import PlaceholderOp

    return isinstance(t.op, PlaceholderOp)


def _all_inputs(t: Tensor) -> list[Tensor]:
    seen: list[Tensor] = []
    stack = list(t.op.input_tensors)
    while stack:
        x = stack.pop()
        if all(x is not s for s in seen):
            seen.append(x)
            stack.extend(x.op.input_tensors)
    return seen
