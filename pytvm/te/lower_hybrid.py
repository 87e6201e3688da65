"""Lowering hybrid operations: their statement over tensors, turned into an extern's statement.

A ``HybridOp``'s body stores to and loads from tensors and realizes scratch tensors. Lowering
rewrites it over buffers (each input and output tensor becomes the op's placeholder buffer,
each realized tensor an allocation) and then binds the placeholders to the real buffers
exactly as an extern's statement is bound (:func:`pytvm.te.lower_extern.bind_extern_body`).
A realized tensor of constant size up to 1 KiB lives on the stack (TVM's limit for stack
allocations on CPUs), any other in a workspace.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..ffi.dtype import DataType
from ..ffi.errors import TVMValueError
from ..tir import stmt as S
from ..tir.expr import Buffer, BufferLoad, IntImm, IterVar, PrimExpr, ProducerLoad, Var
from ..tir.functor import IRMutator
from ..tir.producer import ProducerRealize, ProducerStore
from .extern import ExternOp
from .hybrid.op import HybridOp
from .lower_extern import bind_extern_body
from .tensor import Tensor

__all__ = ["bind_hybrid_body", "hybrid_buffer_body"]

_MAX_STACK_BYTES = 1024


def hybrid_buffer_body(op: HybridOp) -> S.Stmt:
    """``op``'s body over its placeholder buffers, scratch tensors allocated."""
    bmap: dict[Tensor, Buffer] = {}
    for t, b in zip(op.inputs, op.input_placeholders, strict=True):
        bmap[t] = b
    for t, b in zip(op.outputs, op.output_placeholders, strict=True):
        bmap[t] = b
    body: S.Stmt = _ToBuffers(op.name, bmap).visit(op.body)
    return body


def bind_hybrid_body(op: HybridOp, inputs: Sequence[Buffer], outputs: Sequence[Buffer]) -> S.Stmt:
    """``op``'s statement reading ``inputs`` and writing ``outputs`` (the real buffers)."""
    extern = ExternOp(
        op.name,
        op.tag,
        op.attrs,
        op.inputs,
        op.input_placeholders,
        op.output_placeholders,
        hybrid_buffer_body(op),
    )
    return bind_extern_body(extern, inputs, outputs)


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


class _ToBuffers(IRMutator):
    def __init__(self, name: str, bmap: dict[Tensor, Buffer]) -> None:
        self.name = name
        self.bmap = bmap

    def _buffer(self, tensor: Tensor) -> Buffer:
        buf = self.bmap.get(tensor)
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
