"""Lowering a schedule to a ``PrimFunc``: bound inference, loop nests, reductions, buffers.

Inlined stages are substituted into their readers; every other stage becomes a loop nest over
its leaf axes. A stage computed at another stage's loop covers only the region that loop needs
(inferred with the arithmetic analyzer) in a buffer of that region's size; stages at the root
get a buffer of their full shape. Splits whose factor does not divide the extent produce guards
``if (likely(index < extent))`` that the loop-partition pass later lifts out of the main loops.
The result has multi-dimensional buffers; the tir pipeline flattens and optimises it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
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
from ..tir.functor import IRMutator, IRVisitor, substitute
from ..tir.op import max as max_of
from .schedule import Schedule, Split, Stage
from .tensor import Tensor

__all__ = ["create_prim_func", "lower_schedule"]

_KINDS = {
    "parallel": S.ForKind.PARALLEL,
    "vectorize": S.ForKind.VECTORIZED,
    "unroll": S.ForKind.UNROLLED,
}


@dataclass
class _Placed:
    """Where a stage's outputs live: one buffer each, and the region's start per dimension."""

    buffers: list[Buffer]
    mins: list[PrimExpr]
    extents: list[PrimExpr] = field(default_factory=list)


class _Lowering:
    def __init__(self, sch: Schedule, args: Sequence[Any], name: str) -> None:
        self.sch = sch
        self.name = name
        self.ana = Analyzer()
        self.placed: dict[int, _Placed] = {}  # id(tensor.op) -> buffers
        self.bodies: dict[int, tuple[PrimExpr, ...]] = {}
        self.params: list[Var] = []
        self.buffer_map: dict[Var, Buffer] = {}
        self.arg_ops: set[int] = set()
        for arg in args:
            self._add_arg(arg)

    def _add_arg(self, arg: Any) -> None:
        if isinstance(arg, Var):
            self.params.append(arg)
            return
        if not isinstance(arg, Tensor):
            raise TVMValueError(f"lower {self.name}: args must be tensors or vars, got {arg!r}")
        buf = Buffer(Var(arg.name, "handle"), arg.dtype, arg.shape, arg.name)
        self.params.append(buf.data)
        self.buffer_map[buf.data] = buf
        key = id(arg.op)
        placed = self.placed.setdefault(key, _Placed([], [const(0)] * arg.ndim))
        while len(placed.buffers) <= arg.value_index:
            placed.buffers.append(None)  # type: ignore[arg-type]  # filled by the other outputs
        placed.buffers[arg.value_index] = buf
        self.arg_ops.add(key)

    # ------------------------------------------------------------------ bodies (inlining)

    def resolve_bodies(self) -> None:
        inlined: dict[int, Stage] = {}
        for stage in self.sch.stages:
            body = tuple(_Inline(inlined, self.bodies).visit(b) for b in stage.body)
            self.bodies[id(stage)] = body
            if stage.attach == "inline":
                if id(stage.op) in self.arg_ops:
                    raise TVMValueError(
                        f"stage {stage.name}: an argument of the function cannot be inlined"
                    )
                inlined[id(stage.op)] = stage

    # ------------------------------------------------------------------ bounds

    def root_ranges(self, stage: Stage) -> list[tuple[PrimExpr, PrimExpr]]:
        """(min, extent) of each data axis of ``stage`` (its attach region, or the whole)."""
        full = [(const(0), iv.dom.extent) for iv in stage.axis if iv.dom is not None]
        if stage.attach != "at":
            return full
        parent = stage.attach_stage
        assert parent is not None and stage.attach_ivar is not None
        info = self.leaf_info(parent)
        pos = next(k for k, iv in enumerate(parent.leaf_iter_vars) if iv is stage.attach_ivar)
        inner = {
            info.loop_var[id(iv)]: Range(const(0), info.extent[id(iv)])
            for iv in parent.leaf_iter_vars[pos + 1 :]
        }
        reads = [(idx, info.root_value, inner) for idx in _reads_of(self.bodies[id(parent)], stage)]
        if not reads:
            raise TVMValueError(
                f"stage {stage.name}: compute_at {parent.name}, which does not read it; attach "
                "a stage to one of its consumers"
            )
        for reader in self.sch.readers(stage):
            if reader is not parent and reader.attach != "inline":
                reads += self._reads_at_same_loop(stage, reader, parent, pos, inner)
        result = []
        for d, (lo_full, ext_full) in enumerate(full):
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
            del lo_full, ext_full
            result.append((lo, extent))
        return result

    def _reads_at_same_loop(
        self, stage: Stage, reader: Stage, parent: Stage, pos: int, inner: dict[Var, Range]
    ) -> list[tuple[Any, dict[Var, PrimExpr], dict[Var, Range]]]:
        """What ``reader`` (another consumer of ``stage``) reads of it within one iteration of
        ``parent``'s loop at ``pos``: allowed when ``reader`` is computed at ``parent`` at that
        loop or inside it, so both consumers run within the region ``stage`` computes.
        """
        leaves = parent.leaf_iter_vars
        depth = (
            next((k for k, iv in enumerate(leaves) if iv is reader.attach_ivar), -1)
            if reader.attach == "at" and reader.attach_stage is parent
            else -1
        )
        if depth < pos:
            raise TVMValueError(
                f"stage {stage.name}: computed at {parent.name}, but {reader.name} reads it "
                f"too and is not computed at that loop of {parent.name} or inside it; compute "
                f"{reader.name} there as well, or {stage.name} at root (or inline it)"
            )
        rinfo = self.leaf_info(reader)
        ranges = dict(inner)
        for iv in reader.leaf_iter_vars:
            ranges[rinfo.loop_var[id(iv)]] = Range(const(0), rinfo.extent[id(iv)])
        return [
            (idx, rinfo.root_value, ranges) for idx in _reads_of(self.bodies[id(reader)], stage)
        ]

    # ------------------------------------------------------------------ leaf loops

    def leaf_info(self, stage: Stage) -> _LeafInfo:  # noqa: PLR0912 - one pass per relation kind
        cached = getattr(stage, "_leaf_info", None)
        if cached is not None:
            return cached  # type: ignore[no-any-return]
        roots = self.root_ranges(stage)
        info = _LeafInfo()
        for iv, (lo, ext) in zip(stage.axis, roots, strict=True):
            info.extent[id(iv)] = ext
            info.root_min[id(iv)] = lo
        for iv in stage.reduce_axis:
            assert iv.dom is not None
            info.extent[id(iv)] = iv.dom.extent
            info.root_min[id(iv)] = iv.dom.min
        for rel in stage.relations:
            if isinstance(rel, Split):
                ext = info.extent[id(rel.parent)]
                if rel.factor is not None:
                    inner, outer = rel.factor, _ceil_div(ext, rel.factor)
                else:
                    assert rel.nparts is not None
                    outer, inner = rel.nparts, _ceil_div(ext, rel.nparts)
                info.extent[id(rel.outer)] = self.ana.simplify(outer)
                info.extent[id(rel.inner)] = self.ana.simplify(inner)
            else:
                info.extent[id(rel.fused)] = self.ana.simplify(
                    info.extent[id(rel.outer)] * info.extent[id(rel.inner)]
                )
        for iv in stage.leaf_iter_vars:
            info.loop_var[id(iv)] = Var(iv.var.name, "int32")
        # Offsets of every iter var from its leaf values (pass the relations upward).
        offset: dict[int, PrimExpr] = {id(iv): info.loop_var[id(iv)] for iv in stage.leaf_iter_vars}
        for rel in reversed(stage.relations):
            if isinstance(rel, Split):
                inner_ext = info.extent[id(rel.inner)]
                offset[id(rel.parent)] = offset[id(rel.outer)] * inner_ext + offset[id(rel.inner)]
                parent_ext = info.extent[id(rel.parent)]
                if not self.ana.can_prove(
                    _covers_exactly(self.ana, parent_ext, inner_ext, info.extent[id(rel.outer)])
                ):
                    info.guards.append((rel.parent, offset[id(rel.parent)] < parent_ext))
            else:
                inner_ext = info.extent[id(rel.inner)]
                offset[id(rel.outer)] = offset[id(rel.fused)] // inner_ext
                offset[id(rel.inner)] = offset[id(rel.fused)] % inner_ext
        for iv in (*stage.axis, *stage.reduce_axis):
            info.offset[id(iv)] = offset[id(iv)]
            info.root_value[iv.var] = self.ana.simplify(info.root_min[id(iv)] + offset[id(iv)])
        if stage.attach == "at":
            # A region computed at a consumer's loop may reach past the stage's own domain at the
            # edges (a partial tile): compute only the points that exist.
            self._bind_enclosing_loops(stage)
            for iv in stage.axis:
                assert iv.dom is not None
                value = info.root_value[iv.var]
                lo, hi = info.root_min[id(iv)], info.root_min[id(iv)] + info.extent[id(iv)]
                if not self.ana.can_prove(lo >= 0):
                    info.guards.append((iv, value >= 0))
                if not self.ana.can_prove(hi <= iv.dom.extent):
                    info.guards.append((iv, value < iv.dom.extent))
        stage._leaf_info = info  # type: ignore[attr-defined]
        return info

    def _bind_enclosing_loops(self, stage: Stage) -> None:
        """Tell the analyzer the ranges of the loops a stage computed at another one sits in."""
        parent = stage.attach_stage
        while parent is not None:
            info = self.leaf_info(parent)
            for iv in parent.leaf_iter_vars:
                var = info.loop_var[id(iv)]
                self.ana.bind(var, Range(const(0), info.extent[id(iv)]), allow_override=True)
            parent = parent.attach_stage

    # ------------------------------------------------------------------ statements

    def nest(self, stage: Stage) -> S.Stmt:
        info = self.leaf_info(stage)
        leaves = stage.leaf_iter_vars
        body = self.bodies[id(stage)]
        reduce_ids = {id(iv) for iv in leaves if iv.iter_type is IterVarType.COMM_REDUCE}
        guards = info.guards
        data_guards = [g for iv, g in guards if iv.iter_type is not IterVarType.COMM_REDUCE]
        if not isinstance(body[0], Reduce):
            store = self._guard(self._stores(stage, body), [g for _, g in guards])
            return self._loops(stage, leaves, store)
        first = next(k for k, iv in enumerate(leaves) if id(iv) in reduce_ids)
        init = self._guard(self._init_stores(stage, body), data_guards)
        update = self._guard(self._update_stores(stage, body), [g for _, g in guards])
        init_leaves = [iv for iv in leaves[first:] if id(iv) not in reduce_ids]
        # The init nest gets its own loop variables (it is a sibling of the update nest).
        fresh = {
            info.loop_var[id(iv)]: Var(info.loop_var[id(iv)].name, "int32") for iv in init_leaves
        }
        init_nest = substitute(self._loops(stage, init_leaves, init, attach=False), fresh)
        inner = S.seq(init_nest, self._loops(stage, leaves[first:], update))
        return self._loops(stage, leaves[:first], inner)

    def _loops(
        self, stage: Stage, leaves: Sequence[IterVar], body: S.Stmt, attach: bool = True
    ) -> S.Stmt:
        info = self.leaf_info(stage)
        for iv in reversed(leaves):
            if attach:
                body = self._attached_at(stage, iv, body)
            kind = _KINDS.get(stage.kinds.get(id(iv), ""), S.ForKind.SERIAL)
            body = S.For(
                info.loop_var[id(iv)],
                const(0),
                info.extent[id(iv)],
                kind,
                body,
                stage.pragmas.get(id(iv), {}),
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
            for buf in reversed(placed.buffers):
                inner = S.Allocate(buf, inner)
            body = inner
        return body

    def _place(self, stage: Stage) -> _Placed:
        key = id(stage.op)
        if key in self.placed:
            return self.placed[key]
        ranges = self.root_ranges(stage)
        shape = tuple(ext for _, ext in ranges)
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
        placed = _Placed(buffers, [lo for lo, _ in ranges], list(shape))
        self.placed[key] = placed
        return placed

    def _indices(self, stage: Stage) -> tuple[PrimExpr, ...]:
        info = self.leaf_info(stage)
        return tuple(self.ana.simplify(info.offset[id(iv)]) for iv in stage.axis)

    def _stores(self, stage: Stage, body: tuple[PrimExpr, ...]) -> S.Stmt:
        placed = self._place(stage)
        idx = self._indices(stage)
        info = self.leaf_info(stage)
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
        info = self.leaf_info(stage)
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
        info = self.leaf_info(stage)
        comb = red.combiner
        olds = [BufferLoad(buf, idx) for buf in placed.buffers]
        sources = [self._expr(substitute(s, info.root_value)) for s in red.source]
        vmap: dict[Var, PrimExpr] = {}
        for lhs, rhs, old, src in zip(comb.lhs, comb.rhs, olds, sources, strict=True):
            vmap[lhs], vmap[rhs] = old, src
        news = [substitute(r, vmap) for r in comb.result]
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

    def _expr(self, e: PrimExpr) -> PrimExpr:
        return _ToBuffers(self).visit(e)  # type: ignore[no-any-return]

    # ------------------------------------------------------------------ function

    def run(self) -> PrimFunc:
        self.resolve_bodies()
        body: S.Stmt | None = None
        roots = [s for s in self.sch.stages if s.attach == "root"]
        for stage in roots:
            if stage.attach == "root" and id(stage.op) not in self.arg_ops and stage.is_output:
                raise TVMValueError(
                    f"lower {self.name}: output {stage.name} is not in args; pass every output"
                )
        for stage in self.sch.stages:
            if stage.attach == "at":
                self._check_attach(stage)
            placed = self.placed.get(id(stage.op))
            if id(stage.op) in self.arg_ops and placed is not None:
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
            if id(stage.op) not in self.arg_ops:
                allocs.extend(placed.buffers)
            parts.append(self.nest(stage))
        body = S.seq(*parts)
        for buf in reversed(allocs):
            body = S.Allocate(buf, body)
        attrs = {"global_symbol": self.name, "tir.noalias": True}
        return PrimFunc(tuple(self.params), body, self.buffer_map, attrs)

    def _check_attach(self, stage: Stage) -> None:
        parent = stage.attach_stage
        seen = set()
        while parent is not None:
            if id(parent) in seen or parent is stage:
                raise TVMValueError(f"stage {stage.name}: compute_at makes a cycle")
            seen.add(id(parent))
            if parent.attach == "inline":
                raise TVMValueError(
                    f"stage {stage.name}: computed at {parent.name}, which is inlined"
                )
            parent = parent.attach_stage


@dataclass
class _LeafInfo:
    extent: dict[int, PrimExpr] = field(default_factory=dict)
    root_min: dict[int, PrimExpr] = field(default_factory=dict)
    loop_var: dict[int, Var] = field(default_factory=dict)
    offset: dict[int, PrimExpr] = field(default_factory=dict)
    root_value: dict[Var, PrimExpr] = field(default_factory=dict)
    guards: list[tuple[IterVar, PrimExpr]] = field(default_factory=list)


def _covers_exactly(ana: Analyzer, ext: PrimExpr, inner: PrimExpr, outer: PrimExpr) -> PrimExpr:
    """The split's loops cover no more than the extent (so no guard is needed)."""
    return ana.simplify(outer * inner) <= ext


def _ceil_div(a: PrimExpr, b: PrimExpr) -> PrimExpr:
    return (a + b - 1) // b


def _fold(values: list[PrimExpr], how: str) -> PrimExpr:
    from ..tir.op import min as min_of

    out = values[0]
    for v in values[1:]:
        out = min_of(out, v) if how == "min" else max_of(out, v)
    return out


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


def _reads_of(body: tuple[PrimExpr, ...], stage: Stage) -> list[tuple[PrimExpr, ...]]:
    ops = {id(t.op) for t in stage.outputs}
    reads: list[tuple[PrimExpr, ...]] = []

    class _Collect(IRVisitor):
        def visit_ProducerLoad(self, node: ProducerLoad) -> None:
            if id(node.producer.op) in ops:
                reads.append(node.indices)
            self.generic_visit(node)

    for b in body:
        _Collect().visit(b)
    return reads


class _Inline(IRMutator):
    def __init__(self, inlined: dict[int, Stage], bodies: dict[int, tuple[PrimExpr, ...]]) -> None:
        self.inlined = inlined
        self.bodies = bodies

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        node = self.generic_visit(node)
        stage = self.inlined.get(id(node.producer.op))
        if stage is None:
            return node
        body = self.bodies[id(stage)][node.producer.value_index]
        return substitute(body, {iv.var: i for iv, i in zip(stage.axis, node.indices, strict=True)})  # type: ignore[no-any-return]


class _ToBuffers(IRMutator):
    def __init__(self, lowering: _Lowering) -> None:
        self.lowering = lowering

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        node = self.generic_visit(node)
        tensor = node.producer
        placed = self.lowering.placed.get(id(tensor.op))
        if placed is None:
            stage = self.lowering.sch.stage_of(tensor)
            if stage is None:
                raise TVMValueError(
                    f"lower {self.lowering.name}: tensor {tensor.name} is read but is not in "
                    "args; pass every input tensor"
                )
            placed = self.lowering._place(stage)
        buf = placed.buffers[tensor.value_index]
        idx = tuple(
            self.lowering.ana.simplify(i - lo)
            for i, lo in zip(node.indices, placed.mins, strict=True)
        )
        return BufferLoad(buf, idx)


def lower_schedule(sch: Schedule, args: Sequence[Any], name: str = "main") -> PrimFunc:
    """The PrimFunc of schedule ``sch`` whose parameters are ``args`` (tensors, in order)."""
    if not isinstance(sch, Schedule):
        raise TVMValueError(f"lower_schedule expects a te.Schedule, got {type(sch).__name__}")
    for stage in sch.stages:
        if hasattr(stage, "_leaf_info"):
            del stage._leaf_info
    return _Lowering(sch, args, name).run()


def create_prim_func(args: Sequence[Any], name: str = "main") -> PrimFunc:
    """TVM 0.27's ``te.create_prim_func([A, B, C])``: the default schedule of the outputs."""
    outputs = [a for a in args if isinstance(a, Tensor) and not _is_input(a)]
    if not outputs:
        raise TVMValueError("create_prim_func: args hold no computed tensor (an output)")
    readers = {id(t.op) for o in outputs for t in _all_inputs(o)}
    final = [o for o in outputs if id(o.op) not in readers]
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
