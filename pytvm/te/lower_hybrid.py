"""Lowering hybrid operations: their statement over tensors, turned into an extern's statement.

A ``HybridOp``'s body stores to and loads from tensors and realizes scratch tensors. Lowering
rewrites it over buffers (each input and output tensor becomes the op's placeholder buffer,
each realized tensor an allocation) and then binds the placeholders to the real buffers
exactly as an extern's statement is bound (:func:`pytvm.te.lower_extern.bind_extern_body`).
A realized tensor of constant size up to 1 KiB lives on the stack (TVM's limit for stack
allocations on CPUs), any other in a workspace. The statement sits in an ``extern_scope``
attribute, as TVM's does.

A hybrid op's axes are its loops, so its stage can be scheduled (split, fuse, reorder, loop
kinds) when those loops form one perfect nest: the nest is rebuilt over the stage's leaf axes
with the extents and root values bound inference gives, as a compute's loops are.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ffi.dtype import DataType
from ..ffi.errors import TVMValueError
from ..tir import stmt as S
from ..tir.expr import (
    Buffer,
    BufferLoad,
    Call,
    IntImm,
    IterVar,
    PrimExpr,
    ProducerLoad,
    Var,
    const,
)
from ..tir.functor import IRMutator, substitute
from ..tir.producer import ProducerRealize, ProducerStore
from .bound import Bounds
from .extern import ExternOp
from .hybrid.op import HybridOp
from .lower_extern import bind_extern_body
from .schedule.stage import Stage
from .tensor import Tensor

__all__ = ["bind_hybrid_body", "hybrid_buffer_body"]

_MAX_STACK_BYTES = 1024
_KINDS = {
    "parallel": S.ForKind.PARALLEL,
    "vectorize": S.ForKind.VECTORIZED,
    "unroll": S.ForKind.UNROLLED,
}


def hybrid_buffer_body(
    op: HybridOp,
    body: S.Stmt | None = None,
    buffer_of: Callable[[Tensor], Buffer] | None = None,
) -> S.Stmt:
    """``op``'s body (or ``body``, a rescheduled one) over its placeholder buffers, scratch
    tensors allocated; ``buffer_of`` gives the buffer of any other tensor it reads (those that
    inlined inputs read).
    """
    bmap: dict[Tensor, Buffer] = {}
    for t, b in zip(op.inputs, op.input_placeholders, strict=True):
        bmap[t] = b
    for t, b in zip(op.outputs, op.output_placeholders, strict=True):
        bmap[t] = b
    result: S.Stmt = _HybridToBuffers(op.name, bmap, buffer_of).visit(
        op.body if body is None else body
    )
    return result


def bind_hybrid_body(
    op: HybridOp,
    inputs: Sequence[Buffer],
    outputs: Sequence[Buffer],
    stage: Stage | None = None,
    bounds: Bounds | None = None,
    buffer_of: Callable[[Tensor], Buffer] | None = None,
) -> S.Stmt:
    """``op``'s statement reading ``inputs`` and writing ``outputs`` (the real buffers), its
    loops as ``stage`` schedules them (bound by ``bounds``), inlined inputs substituted (reading
    tensors that ``buffer_of`` places).
    """
    body = op.body
    if bounds is not None:
        body = inline_inputs(op, body, bounds)
    if stage is not None and bounds is not None and _is_scheduled(stage):
        body = schedule_loops(op, stage, bounds, body)
    extern = ExternOp(
        op.name,
        op.tag,
        op.attrs,
        op.inputs,
        op.input_placeholders,
        op.output_placeholders,
        hybrid_buffer_body(op, body, buffer_of),
    )
    bound = bind_extern_body(extern, inputs, outputs)
    return S.AttrStmt(const(0), "extern_scope", const(0), bound)


def _is_scheduled(stage: Stage) -> bool:
    return bool(
        stage.relations or stage.kinds or stage.pragmas or stage.leaf_iter_vars != list(stage.axis)
    )


def inline_inputs(op: HybridOp, body: S.Stmt, bounds: Bounds) -> S.Stmt:
    """``body`` with each read of an inlined input replaced by what that input computes."""
    inlined: dict[Tensor, tuple[Stage, PrimExpr]] = {}
    for t in op.inputs:
        st = bounds.sch.stage_of(t)
        if st is not None and st.attach == "inline":
            inlined[t] = (st, bounds.bodies[st][t.value_index])
    if not inlined:
        return body

    class _Inline(IRMutator):
        def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
            node = self.generic_visit(node)
            found = inlined.get(node.producer)
            if found is None:
                return node
            st, value = found
            vmap = {iv.var: i for iv, i in zip(st.axis, node.indices, strict=True)}
            result: PrimExpr = substitute(value, vmap)
            return result

        def visit_ProducerStore(self, node: ProducerStore) -> S.Stmt:
            if node.producer in inlined:
                raise TVMValueError(
                    f"hybrid {op.name!r} writes {node.producer.name}, which is inlined; "
                    "compute it at the root"
                )
            result: S.Stmt = self.generic_visit(node)
            return result

    result: S.Stmt = _Inline().visit(body)
    return result


def schedule_loops(
    op: HybridOp, stage: Stage, bounds: Bounds, body: S.Stmt | None = None
) -> S.Stmt:
    """``op``'s body (or ``body``) with its loop nest rebuilt over ``stage``'s leaf axes."""
    axes = [iv.var for iv in stage.axis]
    found: list[S.For] = []

    class _Nest(IRMutator):
        def visit_For(self, node: S.For) -> S.Stmt:
            if node.loop_var is not axes[0]:
                result: S.Stmt = self.generic_visit(node)
                return result
            loop: S.Stmt = node
            for var in axes:
                if not isinstance(loop, S.For) or loop.loop_var is not var:
                    raise TVMValueError(
                        f"hybrid {op.name!r}: its loops {', '.join(v.name for v in axes)} are "
                        "not one perfect nest, so they cannot be scheduled"
                    )
                found.append(loop)
                loop = loop.body
            return _rebuild(stage, bounds, loop, {f.loop_var: f.kind for f in found})

    result: S.Stmt = _Nest().visit(op.body if body is None else body)
    if not found:
        raise TVMValueError(f"hybrid {op.name!r}: its loops were not found in its statement")
    return result


def _rebuild(stage: Stage, bounds: Bounds, inner: S.Stmt, kinds: dict[Var, S.ForKind]) -> S.Stmt:
    info = bounds.leaf(stage)
    vmap: dict[Var, Any] = dict(info.root_value)
    body: S.Stmt = substitute(inner, vmap)
    for _, cond in reversed(info.guards):
        body = S.IfThenElse(Call("bool", "tir.likely", (cond,)), body)
    for iv in reversed(stage.leaf_iter_vars):
        kind = _KINDS.get(stage.kinds.get(iv, ""), kinds.get(iv.var, S.ForKind.SERIAL))
        extent = substitute(info.extent[iv], vmap)
        body = S.For(info.loop_var[iv], const(0), extent, kind, body, stage.pragmas.get(iv, {}))
    return body


def _scope(tensor: Tensor, requested: str) -> str:
    if requested == "local":
        return "local"
    size = 1
    for d in tensor.shape:
        if not isinstance(d, IntImm):
            return "global"
        size *= d.value
    nbytes = size * DataType.parse(tensor.dtype).bits // 8
    return "local" if nbytes <= _MAX_STACK_BYTES else "global"


class _HybridToBuffers(IRMutator):
    def __init__(
        self, name: str, bmap: dict[Tensor, Buffer], buffer_of: Callable[[Tensor], Buffer] | None
    ) -> None:
        self.name = name
        self.bmap = bmap
        self.buffer_of = buffer_of

    def _buffer(self, tensor: Tensor) -> Buffer:
        buf = self.bmap.get(tensor)
        if buf is None and self.buffer_of is not None:
            buf = self.buffer_of(tensor)
        if buf is None:
            raise TVMValueError(
                f"hybrid {self.name!r}: tensor {tensor.name} is used but is neither an input, "
                "an output nor realized in the script"
            )
        return buf

    def visit_ProducerRealize(self, node: ProducerRealize) -> S.Stmt:
        t = node.producer
        scope = _scope(t, node.storage_scope)
        buf = Buffer(Var(t.name, "handle"), t.dtype, t.shape, t.name, scope=scope)
        self.bmap[t] = buf
        body: S.Stmt = self.visit(node.body)
        del self.bmap[t]
        return S.Allocate(buf, body)

    def visit_ProducerStore(self, node: ProducerStore) -> S.Stmt:
        indices = tuple(self.visit(i) for i in node.indices)
        return S.BufferStore(self._buffer(node.producer), self.visit(node.value), indices)

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        indices = tuple(self.visit(i) for i in node.indices)
        return BufferLoad(self._buffer(node.producer), indices)

    def visit_AttrStmt(self, node: S.AttrStmt) -> S.Stmt:
        if node.key == "thread_extent" and isinstance(node.node, IterVar):
            raise TVMValueError(
                f"hybrid {self.name!r}: the script binds a loop to {node.node.thread_tag}; "
                "pytvm compiles for CPUs, use parallel() instead of bind()"
            )
        result: S.Stmt = self.generic_visit(node)
        return result
