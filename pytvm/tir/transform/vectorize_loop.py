"""``vectorize_loop``: a vectorized loop of constant extent becomes one vector statement.

The loop variable becomes ``Ramp(min, 1, lanes)``; loop-invariant values become
``Broadcast``; arithmetic, comparisons, ``Select``, casts and pure float intrinsics work lane-wise;
a load or store whose index is linear in the variable gets a ``Ramp`` index. The loop falls back
to a serial loop (never to wrong code) when its body has an inner loop, a guard (``if``), an
allocation, ``if_then_else``, a store index that is not a ramp (non-linear, or loop-invariant as
in a reduction into one element), a gather load, or a read of a buffer it writes at another
index; also when the extent is not constant or above 64 lanes, or when
``config["tir.disable_vectorize"]`` is set.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..arith.linear import expr_key
from ..dot_product import DOT_U8S8_S32
from ..expr import IntImm, PrimExpr, Var, lanes_of, with_lanes
from ..function import IRModule, PrimFunc
from ..functor import IRMutator, IRVisitor, substitute
from ..op import FLOAT_INTRINSICS

__all__ = ["MAX_LANES", "VectorizeLoop", "vectorize_loop"]

#: Loops wider than this stay serial.
MAX_LANES = 64
_MIN_LANES = 2
_PURE_CALLS = frozenset(
    [*(f"tir.{name}" for name in FLOAT_INTRINSICS), "tir.reinterpret", DOT_U8S8_S32]
)


class _Unsupported(Exception):
    pass


class _Hazards(IRVisitor):
    """Stores of the body by buffer data, and loads of buffers the body also stores to."""

    def __init__(self) -> None:
        self.stores: dict[Var, set[Any]] = {}
        self.loads: list[tuple[Var, Any]] = []

    def visit_BufferStore(self, node: S.BufferStore) -> None:
        self.stores.setdefault(node.buffer.data, set()).add(expr_key(node.indices))
        self.generic_visit(node)

    def visit_BufferLoad(self, node: E.BufferLoad) -> None:
        self.loads.append((node.buffer.data, expr_key(node.indices)))
        self.generic_visit(node)

    def safe(self) -> bool:
        return all(data not in self.stores or key in self.stores[data] for data, key in self.loads)


class _Vectorizer:
    def __init__(self, var: Var, start: PrimExpr, lanes: int) -> None:
        self.var = var
        self.lanes = lanes
        self.ramp = E.Ramp(start, IntImm(var.dtype, 1), lanes)

    def vec(self, e: PrimExpr) -> PrimExpr:
        return e if lanes_of(e.dtype) > 1 else E.Broadcast(e, self.lanes)

    def expr(self, e: PrimExpr) -> PrimExpr:  # noqa: PLR0911, PLR0912 - one case per node kind
        if isinstance(e, Var):
            return self.ramp if e is self.var else e
        if isinstance(e, (IntImm, E.FloatImm, E.StringImm)):
            return e
        if isinstance(e, (E.Ramp, E.Broadcast, E.Let, E.Reduce, E.ProducerLoad)):
            raise _Unsupported(type(e).__name__)
        if isinstance(e, E.BinaryOp):
            return self.binary(e, self.expr(e.a), self.expr(e.b))
        if isinstance(e, E.Not):
            a = self.expr(e.a)
            return e if a is e.a else E.Not(a)
        if isinstance(e, E.Select):
            c, t, f = self.expr(e.condition), self.expr(e.true_value), self.expr(e.false_value)
            if c is e.condition and t is e.true_value and f is e.false_value:
                return e
            if lanes_of(c.dtype) == 1 and lanes_of(t.dtype) == lanes_of(f.dtype) == 1:
                return E.Select(c, t, f)
            return E.Select(self.vec(c), self.vec(t), self.vec(f))
        if isinstance(e, E.Cast):
            v = self.expr(e.value)
            if v is e.value:
                return e
            return E.Cast(with_lanes(e.dtype, lanes_of(v.dtype)), v)
        if isinstance(e, E.BufferLoad):
            indices = tuple(self.expr(i) for i in e.indices)
            if all(a is b for a, b in zip(indices, e.indices, strict=True)):
                return e
            if len(indices) != 1 or not isinstance(indices[0], E.Ramp):
                raise _Unsupported(f"gather load of {e.buffer.name}")
            return E.BufferLoad(e.buffer, indices)
        if isinstance(e, E.Call):
            args = tuple(self.expr(a) for a in e.args)
            if all(a is b for a, b in zip(args, e.args, strict=True)):
                return e
            if e.op not in _PURE_CALLS:
                raise _Unsupported(f"call {e.op}")
            return E.Call(with_lanes(e.dtype, self.lanes), e.op, tuple(self.vec(a) for a in args))
        raise _Unsupported(type(e).__name__)

    def binary(self, e: E.BinaryOp, a: PrimExpr, b: PrimExpr) -> PrimExpr:
        if a is e.a and b is e.b:
            return e
        cls = type(e)
        va, vb = lanes_of(a.dtype) > 1, lanes_of(b.dtype) > 1
        if not va and not vb:
            return E.binary(cls, a, b)
        ramp = self._ramp_rule(cls, a, b, va, vb)
        return ramp if ramp is not None else cls(self.vec(a), self.vec(b))

    def _ramp_rule(
        self, cls: type[E.BinaryOp], a: PrimExpr, b: PrimExpr, va: bool, vb: bool
    ) -> PrimExpr | None:
        """Keep ramps linear: ramp +- scalar, ramp +- ramp, ramp * scalar (integers)."""
        n = self.lanes
        if cls in (E.Add, E.Sub):
            if isinstance(a, E.Ramp) and isinstance(b, E.Ramp):
                return E.Ramp(E.binary(cls, a.base, b.base), E.binary(cls, a.stride, b.stride), n)
            if isinstance(a, E.Ramp) and not vb:
                return E.Ramp(E.binary(cls, a.base, b), a.stride, n)
            if isinstance(b, E.Ramp) and not va and cls is E.Add:
                return E.Ramp(E.binary(cls, a, b.base), b.stride, n)
        if cls is E.Mul and E.is_int(a.dtype):
            if isinstance(a, E.Ramp) and not vb:
                return E.Ramp(E.binary(E.Mul, a.base, b), E.binary(E.Mul, a.stride, b), n)
            if isinstance(b, E.Ramp) and not va:
                return E.Ramp(E.binary(E.Mul, a, b.base), E.binary(E.Mul, a, b.stride), n)
        return None

    def stmt(self, s: S.Stmt) -> S.Stmt:
        if isinstance(s, S.SeqStmt):
            return S.SeqStmt(tuple(self.stmt(x) for x in s.seq))
        if isinstance(s, S.BufferStore):
            indices = tuple(self.expr(i) for i in s.indices)
            if len(indices) != 1 or not isinstance(indices[0], E.Ramp):
                raise _Unsupported(f"store to {s.buffer.name} at a non-ramp index")
            stride = indices[0].stride
            if not (isinstance(stride, IntImm) and stride.value != 0):
                raise _Unsupported(f"store to {s.buffer.name} with stride {stride}")
            return S.BufferStore(s.buffer, self.vec(self.expr(s.value)), indices)
        if isinstance(s, S.LetStmt):
            return self.stmt(substitute(s.body, {s.var: s.value}))
        raise _Unsupported(type(s).__name__)


class _VectorizeLoops(IRMutator):
    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def visit_For(self, node: S.For) -> Any:  # noqa: PLR0911 - one fallback per reason
        node = self.generic_visit(node)
        if node.kind is not S.ForKind.VECTORIZED:
            return node
        serial = replace(node, kind=S.ForKind.SERIAL)
        extent = node.extent
        if not self.enabled or not isinstance(extent, IntImm):
            return serial
        if extent.value < _MIN_LANES:
            return serial
        if extent.value > MAX_LANES:
            return serial
        hazards = _Hazards()
        hazards.visit(node.body)
        if not hazards.safe():
            return serial
        try:
            return _Vectorizer(node.loop_var, node.min, extent.value).stmt(node.body)
        except _Unsupported:
            return serial


def _vectorize_func(func: PrimFunc, enabled: bool) -> PrimFunc:
    body = _VectorizeLoops(enabled).visit(func.body)
    return func if body is func.body else func.with_body(body)


def vectorize_loop(mod: IRModule, ctx: PassContext) -> IRModule:
    """Turn vectorized loops into vector statements (serial where that is not possible)."""
    enabled = not ctx.get("tir.disable_vectorize", False)
    return map_functions(mod, lambda f: _vectorize_func(f, enabled))


VectorizeLoop = Pass("vectorize_loop", 0, vectorize_loop, required=("flatten_buffer",))
