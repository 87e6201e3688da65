"""``flatten_buffer``: multi-dimensional buffer accesses become 1-D (row-major or by strides).

Every buffer used in the body is replaced by a 1-D buffer over the same data variable with
shape ``(prod(shape),)``; an access ``A[i, j]`` becomes ``A[i * stride0 + j * stride1]`` (the
buffer's strides, else compact row-major ones), plus ``elem_offset`` when it is not zero. The
``buffer_map`` keeps the N-d parameter buffers, so the code generator still binds and checks
argument shapes. The function is marked ``attrs["tir.flattened"] = True``.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..expr import Buffer, IntImm, PrimExpr
from ..function import IRModule, PrimFunc
from ..functor import IRMutator

__all__ = ["FlattenBuffer", "flat_index", "flatten_buffer"]


def _strides(buf: Buffer) -> tuple[PrimExpr, ...]:
    if buf.strides:
        return buf.strides
    out: list[PrimExpr] = []
    acc: PrimExpr = IntImm(buf.shape[0].dtype if buf.shape else "int32", 1)
    for dim in reversed(buf.shape):
        out.append(acc)
        acc = E.binary(E.Mul, acc, dim)
    return tuple(reversed(out))


def flat_index(buf: Buffer, indices: tuple[PrimExpr, ...]) -> PrimExpr:
    """The 1-D element index of ``buf[indices]``."""
    total: PrimExpr | None = None
    for index, stride in zip(indices, _strides(buf), strict=True):
        term = E.binary(E.Mul, index, stride)
        total = term if total is None else E.binary(E.Add, total, term)
    if total is None:
        total = IntImm("int32", 0)
    offset = buf.elem_offset
    if offset is not None and not (isinstance(offset, IntImm) and offset.value == 0):
        total = E.binary(E.Add, total, offset)
    return total


class _Flatten(IRMutator):
    def __init__(self) -> None:
        self.flat: dict[Buffer, Buffer] = {}

    def buffer(self, buf: Buffer) -> Buffer:
        found = self.flat.get(buf)
        if found is None:
            if buf.ndim == 1 and not buf.strides:
                found = buf
            else:
                size: PrimExpr = IntImm("int32", 1)
                for dim in buf.shape:
                    size = E.binary(E.Mul, size, dim)
                found = replace(buf, shape=(size,), strides=())
            self.flat[buf] = found
        return found

    def visit_BufferLoad(self, node: E.BufferLoad) -> Any:
        indices = tuple(self.visit(i) for i in node.indices)
        flat = self.buffer(node.buffer)
        if flat is node.buffer and all(a is b for a, b in zip(indices, node.indices, strict=True)):
            return node
        return E.BufferLoad(flat, (flat_index(node.buffer, indices),))

    def visit_BufferStore(self, node: S.BufferStore) -> Any:
        indices = tuple(self.visit(i) for i in node.indices)
        value = self.visit(node.value)
        flat = self.buffer(node.buffer)
        return S.BufferStore(flat, value, (flat_index(node.buffer, indices),))

    def visit_Allocate(self, node: S.Allocate) -> Any:
        return S.Allocate(self.buffer(node.buffer), self.visit(node.body))

    def visit_AttrStmt(self, node: S.AttrStmt) -> Any:
        target = self.buffer(node.node) if isinstance(node.node, Buffer) else node.node
        return replace(node, node=target, value=self.visit(node.value), body=self.visit(node.body))


def _flatten_func(func: PrimFunc) -> PrimFunc:
    body = _Flatten().visit(func.body)
    return func.with_body(body).with_attr("tir.flattened", True)


def flatten_buffer(mod: IRModule, ctx: PassContext) -> IRModule:
    """Rewrite every buffer access of every function to a 1-D access."""
    del ctx
    return map_functions(mod, _flatten_func)


FlattenBuffer = Pass("flatten_buffer", 0, flatten_buffer)
