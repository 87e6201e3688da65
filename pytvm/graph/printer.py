"""Relay-like text of graph IR: one numbered line per node, types in comments."""

from __future__ import annotations

from typing import Any

import numpy as np

from .expr import Call, Constant, Expr, Function, Tuple, TupleGetItem, Var
from .functor import post_order

__all__ = ["astext"]

_SMALL_CONSTANT = 8  # constants with at most this many elements are printed by value


class _GraphPrinter:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.counter = 0

    def function(self, func: Function, name: str, indent: str) -> str:
        params = ", ".join(f"%{p.name}: {p.type_annotation}" for p in func.params)
        attrs = f" /* {func.attrs} */" if len(func.attrs) else ""
        head = f"{name}({params}) -> {func.checked_type}{attrs} {{"
        names: dict[int, str] = {id(p): f"%{p.name}" for p in func.params}
        body_lines: list[str] = []
        for node in post_order(func.body):
            if id(node) in names:
                continue
            names[id(node)] = self.node(node, names, body_lines, indent + "  ")
        body_lines.append(f"{indent}  {names[id(func.body)]}")
        return "\n".join([head, *body_lines, indent + "}"])

    def node(self, node: Expr, names: dict[int, str], out: list[str], indent: str) -> str:
        if isinstance(node, Var):
            return f"%{node.name}"
        if isinstance(node, Constant):
            return _constant(node)
        if isinstance(node, Call):
            if isinstance(node.op, Function):
                fn_name = f"%{self.counter}"
                self.counter += 1
                out.append(f"{indent}{fn_name} = " + self.function(node.op, "fn ", indent) + ";")
                callee = fn_name
            else:
                callee = node.op
            args = [names[id(a)] for a in node.args]
            if len(node.attrs):
                args.append(str(node.attrs))
            text = f"{callee}({', '.join(args)})"
        elif isinstance(node, Tuple):
            text = "(" + ", ".join(names[id(f)] for f in node.fields) + ")"
        else:
            assert isinstance(node, TupleGetItem)
            text = f"{names[id(node.tuple_value)]}.{node.index}"
        name = f"%{self.counter}"
        self.counter += 1
        tag = f" /* {node.name} */" if isinstance(node, Call) and node.name else ""
        out.append(f"{indent}{name} = {text};{tag} /* ty={node.checked_type} */")
        return name


def _constant(node: Constant) -> str:
    data = node.data
    if data.size <= _SMALL_CONSTANT:
        values = np.array2string(data.reshape(-1), separator=", ")
        return f"const({values}, {data.dtype})" if data.ndim else f"{data.item()}{_suffix(data)}"
    return f"meta[Constant]{{{node.checked_type}}}"


def _suffix(data: np.ndarray) -> str:
    return "f" if data.dtype == np.float32 else f"<{data.dtype}>"


def astext(obj: Any) -> str:
    """The text of an ``IRModule``, a ``Function`` or an expression."""
    functions = getattr(obj, "functions", None)  # an IRModule
    if functions is not None:
        return "\n".join(_GraphPrinter().function(f, f"def @{n}", "") for n, f in functions.items())
    if isinstance(obj, Function):
        return _GraphPrinter().function(obj, "fn ", "")
    printer = _GraphPrinter()
    names: dict[int, str] = {}
    lines: list[str] = []
    for node in post_order(obj):
        names[id(node)] = printer.node(node, names, lines, "")
    return "\n".join([*lines, names[id(obj)]])
