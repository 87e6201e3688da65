"""Rendering a lowered kernel as hybrid script source (TVM's ``hybrid.dump``).

The kernel is a ``PrimFunc`` still in multi-dimensional buffer form (before flattening): its
input tensors and variables become the script's arguments, its output buffers
``output_tensor`` declarations that the script returns, allocations ``allocate`` calls, loops
``range``/``parallel``/``vectorize``/``unroll``. Every variable and buffer gets a distinct
Python name that shadows no intrinsic.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Sequence
from typing import Any

from ...ffi.errors import TVMValueError
from ...tir import expr as E
from ...tir import stmt as S
from ...tir.function import PrimFunc
from .calls import INTRINSICS
from .runtime import HYBRID_GLOBALS

__all__ = ["dump_hybrid"]

_INDENT = "    "
_LOOPS = {
    S.ForKind.SERIAL: "range",
    S.ForKind.PARALLEL: "parallel",
    S.ForKind.VECTORIZED: "vectorize",
    S.ForKind.UNROLLED: "unroll",
}
_BINARY: dict[type[E.PrimExpr], str] = {
    E.Add: "+",
    E.Sub: "-",
    E.Mul: "*",
    E.FloorDiv: "//",
    E.FloorMod: "%",
    E.LT: "<",
    E.LE: "<=",
    E.GT: ">",
    E.GE: ">=",
    E.EQ: "==",
    E.NE: "!=",
    E.And: "and",
    E.Or: "or",
}
_CALLS = {
    "tir.sqrt": "sqrt",
    "tir.rsqrt": "rsqrt",
    "tir.log": "log",
    "tir.exp": "exp",
    "tir.tanh": "tanh",
    "tir.sigmoid": "sigmoid",
    "tir.pow": "power",
    "tir.popcount": "popcount",
    "tir.round": "round",
    "tir.likely": "likely",
}
_RESERVED = {*HYBRID_GLOBALS, *INTRINSICS, "True", "False", "None"}


def _fail(what: str) -> TVMValueError:
    return TVMValueError(f"hybrid dump: {what} has no hybrid script spelling")


class _ScriptNames:
    """Distinct Python identifiers for IR objects, keyed by identity."""

    def __init__(self, reserved: set[str]) -> None:
        self.taken = set(reserved)
        self.given: dict[int, str] = {}

    def __call__(self, obj: Any, hint: str) -> str:
        found = self.given.get(id(obj))
        if found is not None:
            return found
        base = re.sub(r"\W", "_", hint) or "v"
        if base[0].isdigit() or keyword.iskeyword(base):
            base = "_" + base
        name, k = base, 1
        while name in self.taken:
            name, k = f"{base}_{k}", k + 1
        self.taken.add(name)
        self.given[id(obj)] = name
        return name


class _Dumper:
    def __init__(self, func_name: str) -> None:
        self.names = _ScriptNames({*_RESERVED, func_name})
        self.lines: list[str] = []

    def buffer(self, buf: E.Buffer) -> str:
        return self.names(buf.data, buf.name)

    def shape(self, shape: Sequence[E.PrimExpr]) -> str:
        dims = [self.expr(d) for d in shape]
        return f"({dims[0]},)" if len(dims) == 1 else f"({', '.join(dims)})"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append(_INDENT * depth + text)

    # ------------------------------------------------------------------ statements

    def stmt(self, s: S.Stmt, depth: int) -> None:  # noqa: PLR0912 - one case per kind
        if isinstance(s, S.SeqStmt):
            for item in s.seq:
                self.stmt(item, depth)
        elif isinstance(s, S.For):
            var = self.names(s.loop_var, s.loop_var.name)
            bounds = self.expr(s.extent)
            if not (isinstance(s.min, E.IntImm) and s.min.value == 0):
                bounds = f"{self.expr(s.min)}, {self.expr(s.min + s.extent)}"
            self.emit(depth, f"for {var} in {_LOOPS[s.kind]}({bounds}):")
            self.block(s.body, depth + 1)
        elif isinstance(s, S.BufferStore):
            index = ", ".join(self.expr(i) for i in s.indices)
            self.emit(depth, f"{self.buffer(s.buffer)}[{index}] = {self.expr(s.value)}")
        elif isinstance(s, S.Allocate):
            b = s.buffer
            decl = f"allocate({self.shape(b.shape)}, {b.dtype!r}, {b.scope!r})"
            self.emit(depth, f"{self.buffer(b)} = {decl}")
            self.stmt(s.body, depth)
        elif isinstance(s, S.IfThenElse):
            self.emit(depth, f"if {self.expr(s.condition)}:")
            self.block(s.then_case, depth + 1)
            if s.else_case is not None:
                self.emit(depth, "else:")
                self.block(s.else_case, depth + 1)
        elif isinstance(s, S.LetStmt):
            self.emit(depth, f"{self.names(s.var, s.var.name)} = {self.expr(s.value)}")
            self.stmt(s.body, depth)
        elif isinstance(s, S.AttrStmt):
            if s.key == "thread_extent":
                raise _fail("a thread binding (GPU kernels)")
            self.stmt(s.body, depth)
        elif isinstance(s, S.AssertStmt):
            self.emit(depth, f"assert {self.expr(s.condition)}, {s.message!r}")
            self.stmt(s.body, depth)
        elif isinstance(s, S.Evaluate):
            if not isinstance(s.value, (E.IntImm, E.FloatImm)):
                raise _fail(f"the call {s.value}")
        else:
            raise _fail(f"a {type(s).__name__} statement")

    def block(self, s: S.Stmt, depth: int) -> None:
        before = len(self.lines)
        self.stmt(s, depth)
        if len(self.lines) == before:
            self.emit(depth, "pass")

    # ------------------------------------------------------------------ expressions

    def expr(self, e: E.PrimExpr) -> str:  # noqa: PLR0911, PLR0912 - one case per kind
        if isinstance(e, E.IntImm):
            if e.dtype == "bool":
                return str(bool(e.value))
            return str(e.value) if e.dtype == "int32" else f"{e.dtype}({e.value})"
        if isinstance(e, E.FloatImm):
            return self.float_imm(e)
        if isinstance(e, E.Var):
            return self.names(e, e.name)
        if isinstance(e, E.BufferLoad):
            return f"{self.buffer(e.buffer)}[{', '.join(self.expr(i) for i in e.indices)}]"
        symbol = _BINARY.get(type(e))
        if symbol is not None:
            return f"({self.expr(e.a)} {symbol} {self.expr(e.b)})"  # type: ignore[attr-defined]
        if isinstance(e, E.Div):
            if e.dtype.startswith(("int", "uint")):
                raise _fail("integer division rounding toward zero")
            return f"({self.expr(e.a)} / {self.expr(e.b)})"
        if isinstance(e, (E.Min, E.Max)):
            name = "min" if isinstance(e, E.Min) else "max"
            return f"{name}({self.expr(e.a)}, {self.expr(e.b)})"
        if isinstance(e, E.Not):
            return f"(not {self.expr(e.a)})"
        if isinstance(e, E.Select):
            cond, t, f = e.condition, e.true_value, e.false_value
            return f"({self.expr(t)} if {self.expr(cond)} else {self.expr(f)})"
        if isinstance(e, E.Cast):
            if e.dtype == "bool":
                return f"({self.expr(e.value)} != 0)"
            return f"{e.dtype}({self.expr(e.value)})"
        if isinstance(e, E.Call):
            return self.call(e)
        raise _fail(f"the expression {e}")

    def float_imm(self, e: E.FloatImm) -> str:
        if math.isinf(e.value):
            return f"{'inf' if e.value > 0 else 'ninf'}({e.dtype!r})"
        if math.isnan(e.value):
            raise _fail("a NaN constant")
        return repr(e.value) if e.dtype == "float32" else f"{e.dtype}({e.value!r})"

    def call(self, e: E.Call) -> str:
        op = getattr(e.op, "name", e.op)
        if op == "tir.if_then_else":
            cond, t, f = e.args
            return f"({self.expr(t)} if {self.expr(cond)} else {self.expr(f)})"
        name = _CALLS.get(str(op))
        if name is None:
            raise _fail(f"the call of {op}")
        return f"{name}({', '.join(self.expr(a) for a in e.args)})"


def dump_hybrid(func: PrimFunc, inputs: Sequence[Any], name: str) -> str:
    """The hybrid script of ``func`` whose first ``len(inputs)`` parameters are the inputs and
    the rest its outputs.
    """
    d = _Dumper(name)
    args, outs = [], []
    for k, param in enumerate(func.params):
        buf = func.buffer_map.get(param)
        text = d.names(param, param.name) if buf is None else d.buffer(buf)
        if k < len(inputs):
            args.append(text)
        elif buf is None:
            raise TVMValueError(f"hybrid dump: output {k - len(inputs)} is not a tensor")
        else:
            outs.append(text)
            d.emit(1, f"{text} = output_tensor({d.shape(buf.shape)}, {buf.dtype!r})")
    d.block(func.body, 1)
    d.emit(1, f"return {', '.join(outs)}")
    return "\n".join([f"def {name}({', '.join(args)}):", *d.lines]) + "\n"
