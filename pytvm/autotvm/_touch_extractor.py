"""Per-loop "touch" statistics of a lowered kernel (TVM's ``src/autotvm/touch_extractor.cc``).

One walk over the loop IR records, for every loop (in order of first appearance), its extent,
nesting depth, annotation (serial, parallel, vectorized, unrolled), the products of the extents
above and below it, the floating-point ``+ - * /`` directly inside it, and for every buffer
access site inside it a :class:`TouchPattern`:

- ``stride``: the index's coefficient of this loop's variable (0: the access does not move
  with the loop). Where the variable sits under a division, modulo or a product of two
  variables the coefficient is taken as 1 times the constants around it (TVM's index parser
  does the same);
- ``count``: how many distinct elements the loop nest from here inwards touches (the product
  of the extents of the loops at and below this one whose variable moves the access);
- ``reuse``: the product of the extents of the loops at and below this one that do not move it;
- ``thread_count`` / ``thread_reuse``: on a parallel loop, its count and reuse divided by those
  of the serial nest directly inside it (TVM's "base" of a parallel level).

An access site is named ``<buffer>_<k>``: the ``k``-th access to that buffer in the walk
(TVM's naming). ``mod`` is not analysed (always -1, "unbounded"), as in TVM's extractor.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from ..tir import expr as E
from ..tir import stmt as S
from ..tir.dtype import is_float
from ..tir.functor import IRVisitor

__all__ = ["ANNOTATIONS", "ItervarFeature", "TouchExtractor", "TouchPattern", "index_strides"]

#: TVM's ``AnnotationType`` order; the one-hot columns of a loop's ``_attr_`` feature.
ANNOTATIONS = (
    "blockIdx.x",
    "blockIdx.y",
    "blockIdx.z",
    "threadIdx.x",
    "threadIdx.y",
    "threadIdx.z",
    "unroll",
    "vec",
    "parallel",
    "serial",
    "vthread",
)
_KIND_ANN = {
    S.ForKind.SERIAL: ANNOTATIONS.index("serial"),
    S.ForKind.PARALLEL: ANNOTATIONS.index("parallel"),
    S.ForKind.VECTORIZED: ANNOTATIONS.index("vec"),
    S.ForKind.UNROLLED: ANNOTATIONS.index("unroll"),
}
_PARALLEL = ANNOTATIONS.index("parallel")


@dataclass(slots=True)
class TouchPattern:
    """How one access site moves with one loop (see the module)."""

    stride: int = 0
    mod: int = -1
    count: int = 1
    reuse: int = 1
    thread_count: int = 0
    thread_reuse: int = 0


@dataclass(slots=True)
class ItervarFeature:
    """The statistics of one loop (see the module)."""

    name: str
    length: int
    nest_level: int
    ann: int
    topdown_product: int
    order: int
    bottomup_product: int = -1
    add_ct: int = 0
    mul_ct: int = 0
    div_ct: int = 0
    touch_feature: dict[str, TouchPattern] = field(default_factory=dict)


def _parallel_level(ann: int) -> int:
    """TVM's ``ParallelLevel``: 2 for blocks, 1 for threads and parallel loops, else 0."""
    if ann <= ANNOTATIONS.index("blockIdx.z"):
        return 2
    if ann <= ANNOTATIONS.index("threadIdx.z") or ann == _PARALLEL:
        return 1
    return 0


def index_strides(index: E.PrimExpr) -> dict[E.Var, int]:
    """The coefficient of each variable of ``index`` (see the module for the non-linear case).

    Examples
    --------
    >>> from pytvm import tir
    >>> i, j = tir.Var("i", "int32"), tir.Var("j", "int32")
    >>> sorted((v.name, c) for v, c in index_strides(i * 16 + j * 2 + 3).items())
    [('i', 16), ('j', 2)]
    """
    memo: dict[int, dict[E.Var, int]] = {}

    def opaque(e: Any) -> dict[E.Var, int]:
        """Every variable below ``e`` with coefficient 1 (division, modulo, calls...)."""
        out: dict[E.Var, int] = {}
        for f in dataclasses.fields(e):
            child = getattr(e, f.name)
            for c in child if isinstance(child, tuple) else (child,):
                if isinstance(c, E.PrimExpr):
                    out.update(dict.fromkeys(walk(c), 1))
        return out

    def walk(e: Any) -> dict[E.Var, int]:
        found = memo.get(id(e))
        if found is not None:
            return found
        if isinstance(e, E.Var):
            out = {e: 1}
        elif isinstance(e, E.Add | E.Sub):
            out = dict(walk(e.a))
            sign = 1 if isinstance(e, E.Add) else -1
            for v, c in walk(e.b).items():
                out[v] = out.get(v, 0) + sign * c
        elif isinstance(e, E.Mul) and isinstance(e.b, E.IntImm):
            out = {v: c * int(e.b.value) for v, c in walk(e.a).items()}
        elif isinstance(e, E.Mul) and isinstance(e.a, E.IntImm):
            out = {v: c * int(e.a.value) for v, c in walk(e.b).items()}
        elif isinstance(e, E.Cast | E.Broadcast):
            out = walk(e.value)
        elif isinstance(e, E.Ramp):
            out = walk(e.base)
        else:
            out = opaque(e) if dataclasses.is_dataclass(e) else {}
        memo[id(e)] = out
        return out

    return {v: c for v, c in walk(index).items() if c != 0}


def _flat_stride_index(buffer: E.Buffer, indices: tuple[E.PrimExpr, ...]) -> dict[E.Var, int]:
    """Coefficients of the variables in the row-major (or strided) element offset."""
    strides: list[int] = []
    acc = 1
    for k in reversed(range(len(indices))):
        given = buffer.strides[k] if buffer.strides else None
        strides.append(int(given.value) if isinstance(given, E.IntImm) else acc)
        dim = buffer.shape[k] if k < len(buffer.shape) else None
        acc *= int(dim.value) if isinstance(dim, E.IntImm) else 1
    strides.reverse()
    total: dict[E.Var, int] = {}
    for index, stride in zip(indices, strides, strict=True):
        for v, c in index_strides(index).items():
            total[v] = total.get(v, 0) + c * stride
    return total


class TouchExtractor(IRVisitor):
    """Walk a statement and fill :attr:`itervars` (one :class:`ItervarFeature` per loop)."""

    def __init__(self) -> None:
        self.itervars: list[ItervarFeature] = []
        self._stack: list[tuple[E.Var, ItervarFeature]] = []
        self._buffer_counter: dict[str, int] = {}
        self._topdown = 1

    def analyze(self, stmt: S.Stmt) -> list[ItervarFeature]:
        """The loops of ``stmt`` with their statistics, in order of appearance."""
        self.visit(stmt)
        return self.itervars

    # loops
    def visit_For(self, node: S.For) -> None:
        length = int(node.extent.value) if isinstance(node.extent, E.IntImm) else -1
        self._topdown *= length
        fea = ItervarFeature(
            node.loop_var.name,
            length,
            len(self._stack) + 1,
            _KIND_ANN[node.kind],
            self._topdown,
            len(self.itervars),
        )
        self.itervars.append(fea)
        self._stack.append((node.loop_var, fea))
        self.visit(node.body)
        self._exit()

    def _exit(self) -> None:
        _, fea = self._stack[-1]
        for buf, pat in fea.touch_feature.items():
            for _, upper in self._stack:  # this loop and those around it
                if pat.stride != 0:
                    upper.touch_feature[buf].count *= fea.length
                else:
                    upper.touch_feature[buf].reuse *= fea.length
        self._stack.pop()
        if fea.length != 0:
            self._topdown //= fea.length
        fea.bottomup_product = max(
            (p.count * p.reuse for p in fea.touch_feature.values()), default=-1
        )
        level = _parallel_level(fea.ann)
        if self._stack and _parallel_level(self._stack[-1][1].ann) == level + 1:
            for buf, pat in fea.touch_feature.items():
                for _, upper in self._stack:
                    if _parallel_level(upper.ann) == level + 1:
                        up = upper.touch_feature[buf]
                        up.thread_reuse, up.thread_count = -pat.reuse, -pat.count
        for pat in fea.touch_feature.values():
            if pat.thread_count < 0:
                pat.thread_count = pat.count // -pat.thread_count
                pat.thread_reuse = pat.reuse // -pat.thread_reuse

    # memory accesses
    def _enter_mem(self, buffer: E.Buffer, indices: tuple[E.PrimExpr, ...]) -> None:
        k = self._buffer_counter.get(buffer.name, 0)
        self._buffer_counter[buffer.name] = k + 1
        site = f"{buffer.name}_{k}"
        strides = _flat_stride_index(buffer, indices)
        for var, fea in self._stack:
            fea.touch_feature[site] = TouchPattern(stride=strides.get(var, 0))

    def visit_BufferStore(self, node: S.BufferStore) -> None:
        self._enter_mem(node.buffer, node.indices)
        self.generic_visit(node)

    def visit_BufferLoad(self, node: E.BufferLoad) -> None:
        self._enter_mem(node.buffer, node.indices)
        self.generic_visit(node)

    # arithmetic
    def _count(self, node: E.BinaryOp, what: str) -> None:
        if self._stack and is_float(node.dtype):
            fea = self._stack[-1][1]
            setattr(fea, what, getattr(fea, what) + 1)
        self.generic_visit(node)

    def visit_Add(self, node: E.Add) -> None:
        self._count(node, "add_ct")

    def visit_Sub(self, node: E.Sub) -> None:
        self._count(node, "add_ct")

    def visit_Mul(self, node: E.Mul) -> None:
        self._count(node, "mul_ct")

    def visit_Div(self, node: E.Div) -> None:
        self._count(node, "div_ct")

    def visit_Mod(self, node: E.Mod) -> None:
        self._count(node, "div_ct")
