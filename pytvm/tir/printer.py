"""Readable text of the loop IR, in the style of TVM's ``primfn`` printout.

Distinct variables that share a name print with a suffix (``i``, ``i_1``), so the text never
suggests two variables are one.
"""

from __future__ import annotations

from typing import Any

from . import expr as E
from . import function as F
from . import stmt as S

__all__ = ["expr_to_text", "func_to_text", "stmt_to_text"]

_INDENT = "  "
_CALL_NAMES = {E.FloorDiv: "floordiv", E.FloorMod: "floormod", E.Min: "min", E.Max: "max"}


class _Names:
    """Unique printed names for variables and buffers, in order of first use."""

    def __init__(self) -> None:
        self._given: dict[int, str] = {}
        self._taken: set[str] = set()

    def of(self, obj: Any, base: str) -> str:
        key = id(obj)
        name = self._given.get(key)
        if name is None:
            name, n = base or "v", 0
            while name in self._taken:
                n += 1
                name = f"{base}_{n}"
            self._given[key] = name
            self._taken.add(name)
        return name


class _Printer:
    def __init__(self) -> None:
        self.names = _Names()
        self._keep: list[Any] = []  # printed nodes stay alive, so their ids stay unique

    def var(self, v: E.Var) -> str:
        self._keep.append(v)
        return self.names.of(v, v.name)

    def buffer(self, b: E.Buffer) -> str:
        self._keep.append(b)
        return self.names.of(b, b.name)

    # ------------------------------------------------------------------ expressions

    def expr(self, e: Any) -> str:  # noqa: PLR0911, PLR0912 - one case per node kind
        if isinstance(e, E.Var):
            return self.var(e)
        if isinstance(e, E.IntImm):
            if e.dtype == "bool":
                return "True" if e.value else "False"
            return str(e.value) if e.dtype == "int32" else f"{e.value}{_suffix(e.dtype)}"
        if isinstance(e, E.FloatImm):
            return f"{e.value!r}{_suffix(e.dtype)}"
        if isinstance(e, E.StringImm):
            return repr(e.value)
        if isinstance(e, E.BinaryOp):
            name = _CALL_NAMES.get(type(e))
            if name is not None:
                return f"{name}({self.expr(e.a)}, {self.expr(e.b)})"
            return f"({self.expr(e.a)} {e.symbol} {self.expr(e.b)})"
        if isinstance(e, E.Not):
            return f"!{self.expr(e.a)}"
        if isinstance(e, E.Select):
            args = (e.condition, e.true_value, e.false_value)
            return f"select({', '.join(self.expr(a) for a in args)})"
        if isinstance(e, E.Cast):
            return f"{e.dtype}({self.expr(e.value)})"
        if isinstance(e, E.Let):
            return f"(let {self.var(e.var)} = {self.expr(e.value)} in {self.expr(e.body)})"
        if isinstance(e, E.Call):
            op = e.op.removeprefix("tir.")
            return f"{op}({', '.join(self.expr(a) for a in e.args)})"
        if isinstance(e, E.Ramp):
            return f"ramp({self.expr(e.base)}, {self.expr(e.stride)}, {e.lanes})"
        if isinstance(e, E.Broadcast):
            return f"broadcast({self.expr(e.value)}, {e.lanes})"
        if isinstance(e, E.BufferLoad):
            return f"{self.buffer(e.buffer)}[{', '.join(self.expr(i) for i in e.indices)}]"
        if isinstance(e, E.ProducerLoad):
            name = getattr(e.producer, "name", "tensor")
            return f"{name}[{', '.join(self.expr(i) for i in e.indices)}]"
        if isinstance(e, E.Reduce):
            return self.reduce(e)
        if isinstance(e, E.IterVar):
            return self.var(e.var)
        return f"<{type(e).__name__}>"

    def reduce(self, e: E.Reduce) -> str:
        source = ", ".join(self.expr(s) for s in e.source)
        axes = ", ".join(self.var(a.var) for a in e.axis)
        text = f"{e.combiner.name}({source}, axis=[{axes}]"
        if not (isinstance(e.condition, E.IntImm) and e.condition.value):
            text += f", where={self.expr(e.condition)}"
        if len(e.source) > 1:
            text += f", value_index={e.value_index}"
        return text + ")"

    # ------------------------------------------------------------------ statements

    def stmt(self, s: S.Stmt, depth: int) -> list[str]:  # noqa: PLR0911 - one case per kind
        pad = _INDENT * depth
        if isinstance(s, S.SeqStmt):
            return [line for item in s.seq for line in self.stmt(item, depth)]
        if isinstance(s, S.For):
            kind = "" if s.kind is S.ForKind.SERIAL else f" {s.kind.value}"
            notes = "".join(f" {k}={v!r}" for k, v in s.annotations.items())
            head = (
                f"{pad}for ({self.var(s.loop_var)}: {s.loop_var.dtype}, {self.expr(s.min)}, "
                f"{self.expr(s.extent)}){kind}{notes} {{"
            )
            return [head, *self.stmt(s.body, depth + 1), pad + "}"]
        if isinstance(s, S.BufferStore):
            index = ", ".join(self.expr(i) for i in s.indices)
            return [f"{pad}{self.buffer(s.buffer)}[{index}] = {self.expr(s.value)}"]
        if isinstance(s, S.Allocate):
            b = s.buffer
            shape = ", ".join(self.expr(d) for d in b.shape)
            head = f"{pad}allocate({self.buffer(b)}: {b.dtype}, [{shape}], {b.scope!r})"
            return [head, *self.stmt(s.body, depth)]
        if isinstance(s, S.IfThenElse):
            lines = [f"{pad}if {self.expr(s.condition)} {{", *self.stmt(s.then_case, depth + 1)]
            if s.else_case is not None:
                lines += [pad + "} else {", *self.stmt(s.else_case, depth + 1)]
            return [*lines, pad + "}"]
        if isinstance(s, S.LetStmt):
            head = f"{pad}{self.var(s.var)}: {s.var.dtype} = {self.expr(s.value)}"
            return [head, *self.stmt(s.body, depth)]
        if isinstance(s, S.AttrStmt):
            node = self.expr(s.node) if isinstance(s.node, E.ExprOp) else str(s.node)
            head = f"{pad}attr [{node}] {s.key!r} = {self.expr(s.value)}"
            return [head, *self.stmt(s.body, depth)]
        if isinstance(s, S.AssertStmt):
            head = f"{pad}assert({self.expr(s.condition)}, {s.message!r})"
            return [head, *self.stmt(s.body, depth)]
        if isinstance(s, S.Evaluate):
            return [pad + self.expr(s.value)]
        return [f"{pad}<{type(s).__name__}>"]

    def func(self, f: F.PrimFunc) -> str:
        for b in f.buffer_map.values():  # buffers keep their names; their data vars get suffixes
            self.buffer(b)
        params = ", ".join(f"{self.var(p)}: {p.dtype}" for p in f.params)
        attrs = ", ".join(f"{k!r}: {v!r}" for k, v in f.attrs.items())
        lines = [f"primfn({params}) -> ()", f"{_INDENT}attr = {{{attrs}}}"]
        if f.buffer_map:
            buffers = []
            for b in f.buffer_map.values():
                shape = ", ".join(self.expr(d) for d in b.shape)
                strides = ", ".join(self.expr(d) for d in b.strides)
                buffers.append(
                    f"{self.buffer(b)}: Buffer({self.var(b.data)}: Pointer({b.dtype}), "
                    f"{b.dtype}, [{shape}], [{strides}])"
                )
            lines.append(f"{_INDENT}buffers = {{{', '.join(buffers)}}}")
            pairs = ", ".join(f"{self.var(v)}: {self.buffer(b)}" for v, b in f.buffer_map.items())
            lines.append(f"{_INDENT}buffer_map = {{{pairs}}} {{")
        else:
            lines[-1] += " {"
        return "\n".join([*lines, *self.stmt(f.body, 1), "}"])


def _suffix(dtype: str) -> str:
    code = {"float": "f", "int": "i", "uint": "u", "bfloat": "bf"}
    for prefix, short in code.items():
        if dtype.startswith(prefix) and dtype[len(prefix) :].isdigit():
            return short + dtype[len(prefix) :]
    return f"<{dtype}>"


def expr_to_text(e: Any) -> str:
    """One expression as text."""
    return _Printer().expr(e)


def stmt_to_text(s: S.Stmt) -> str:
    """A statement as indented text."""
    return "\n".join(_Printer().stmt(s, 0))


def func_to_text(f: F.PrimFunc) -> str:
    """A PrimFunc as ``primfn(...)`` text."""
    return _Printer().func(f)


E.set_text_hook(expr_to_text)
S.set_text_hook(stmt_to_text)
F.set_text_hook(func_to_text)
