"""The TVMScript parser: a ``@T.prim_func`` function's Python source into a loop-IR ``PrimFunc``.

The source (``inspect.getsource``) is parsed with ``ast`` and translated statement by
statement; nothing in it runs. Python expressions outside the kernel body (annotations, loop
callees, shapes, names of constants) are evaluated in the function's globals and closure.

The subset, and what each construct becomes:

- parameters: ``x: T.int32`` (any ``T.<dtype>``) is a scalar ``Var``; ``A: T.Buffer((n, m),
  "float32")`` a handle bound to a buffer in ``buffer_map``; ``-> T.<dtype>`` the return type
  (``-> None`` or nothing: no return value);
- ``for i in range(n)``, ``range(a, b)``, ``T.serial(n)``, ``T.serial(a, b)``: a serial ``For``;
  ``for i, j in T.grid(n, m)``: nested serial loops;
- ``A[i] = e``, ``A[i, j] += e``: ``BufferStore``; ``A[i]`` in an expression: ``BufferLoad``;
- ``x = e`` and ``x: T.int32 = e``: ``LetStmt`` over the statements after it;
- ``if c: ... else: ...``: ``IfThenElse``; ``a if c else b``: ``Select``;
- ``+ - * / // %``, unary ``-``, comparisons, ``and``/``or``/``not``, ``min``/``max``;
- literals (``int`` -> int32, ``float`` -> float32, ``bool``) and ``T.float32(x)``-style casts
  (a cast of a literal is a constant of that type);
- ``return e``: ``Evaluate(Call(<return type>, "tir.ret", [e]))``, TVM's ``T.ret``;
- a docstring and ``pass`` are skipped.

Anything else raises :class:`pytvm.ffi.errors.DiagnosticError` naming the file, the line and the
construct.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import itertools
import textwrap
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from ..ffi.errors import DiagnosticError
from ..tir.buffer import decl_buffer
from ..tir.expr import (
    Buffer,
    BufferLoad,
    Call,
    Cast,
    FloatImm,
    IntImm,
    Not,
    PrimExpr,
    Select,
    Var,
    const,
)
from ..tir.function import PrimFunc
from ..tir.op import max as tir_max
from ..tir.op import min as tir_min
from ..tir.stmt import BufferStore, Evaluate, For, ForKind, IfThenElse, LetStmt, SeqStmt, Stmt

__all__ = ["BufferAnnotation", "DType", "grid", "parse_prim_func", "serial"]


@dataclass(frozen=True, slots=True)
class DType:
    """A dtype of TVMScript (``T.int32``): an annotation, or a cast when called."""

    name: str

    def __call__(self, value: int | float | PrimExpr) -> PrimExpr:
        """``value`` as this type: a constant of it, or a cast."""
        if isinstance(value, int | float):
            return const(value, self.name)
        return value if value.dtype == self.name else Cast(self.name, value)


@dataclass(frozen=True, slots=True)
class BufferAnnotation:
    """``T.Buffer(shape, dtype)``: the annotation of a buffer parameter."""

    shape: tuple[int | PrimExpr, ...]
    dtype: str = "float32"

    def __init__(self, shape: Sequence[int | PrimExpr] | int, dtype: str = "float32") -> None:
        dims = tuple(shape) if isinstance(shape, Sequence) else (shape,)
        object.__setattr__(self, "shape", dims)
        object.__setattr__(self, "dtype", dtype)


def serial(start: int, stop: int | None = None) -> range:
    """A serial loop's range (``T.serial(n)``, ``T.serial(a, b)``); run as Python, a range."""
    return range(start) if stop is None else range(start, stop)


def grid(*extents: int) -> Iterator[tuple[int, ...]]:
    """Nested serial loops (``for i, j in T.grid(n, m)``); run as Python, their index tuples."""
    return itertools.product(*map(range, extents))


#: Arguments of ``range(stop)`` / ``range(start, stop)``.
_RANGE_ARGS = (1, 2)
_BINARY: dict[type[ast.operator], Callable[[Any, Any], PrimExpr]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.Div: lambda a, b: a / b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], PrimExpr]] = {
    ast.Lt: lambda a, b: a < b,
    ast.LtE: lambda a, b: a <= b,
    ast.Gt: lambda a, b: a > b,
    ast.GtE: lambda a, b: a >= b,
    ast.Eq: lambda a, b: a == b,
    ast.NotEq: lambda a, b: a != b,
}


def parse_prim_func(func: Callable[..., Any], private: bool = False) -> PrimFunc:
    """The ``PrimFunc`` of ``func``'s source (see the module docstring for the subset)."""
    return _PrimFuncParser(func).prim_func(private)


class _PrimFuncParser:
    def __init__(self, func: Callable[..., Any]) -> None:
        try:
            lines, first = inspect.getsourcelines(func)
        except (OSError, TypeError) as err:
            raise DiagnosticError(
                f"@T.prim_func {getattr(func, '__qualname__', func)!r}: its source is not "
                f"available ({err}); define it in a file"
            ) from err
        self.file = inspect.getsourcefile(func) or "<unknown>"
        self.offset = first - 1
        tree = ast.parse(textwrap.dedent("".join(lines)))
        node = tree.body[0]
        if not isinstance(node, ast.FunctionDef):
            raise self.error(node, f"{type(node).__name__} (a prim_func must be a def)")
        self.node = node
        closure = inspect.getclosurevars(func)
        self.env: dict[str, Any] = {
            **vars(builtins),
            **func.__globals__,
            **closure.nonlocals,
        }
        self.scope: dict[str, Var | Buffer] = {}
        self.ret_dtype: str | None = None

    # ------------------------------------------------------------------ helpers

    def error(self, node: ast.AST, what: str) -> DiagnosticError:
        line = getattr(node, "lineno", 0) + self.offset
        return DiagnosticError(
            f"{self.file}:{line}: {what} is outside pytvm's TVMScript subset (see "
            "pytvm.script.parser for what is supported)"
        )

    def python(self, node: ast.expr) -> Any:
        """Evaluate ``node`` as Python in the function's environment (annotations, callees)."""
        try:
            code = compile(ast.fix_missing_locations(ast.Expression(node)), self.file, "eval")
            return eval(code, dict(self.env))
        except Exception as err:
            raise self.error(node, f"{ast.unparse(node)!r} ({err})") from err

    # ------------------------------------------------------------------ function

    def prim_func(self, private: bool) -> PrimFunc:
        args = self.node.args
        if args.vararg or args.kwarg or args.kwonlyargs or args.defaults or args.posonlyargs:
            raise self.error(self.node, "*args, **kwargs, keyword-only or default parameters")
        params: list[Var] = []
        buffer_map: dict[Var, Buffer] = {}
        for arg in args.args:
            if arg.annotation is None:
                raise self.error(arg, f"parameter {arg.arg!r} without a T.<dtype> or T.Buffer")
            ann = self.python(arg.annotation)
            if isinstance(ann, DType):
                var = Var(arg.arg, ann.name)
                params.append(var)
                self.scope[arg.arg] = var
            elif isinstance(ann, BufferAnnotation):
                buf = decl_buffer(ann.shape, ann.dtype, arg.arg)
                params.append(buf.data)
                buffer_map[buf.data] = buf
                self.scope[arg.arg] = buf
            else:
                raise self.error(arg, f"parameter annotation {ast.unparse(arg.annotation)!r}")
        returns = self.node.returns
        ret = None if returns is None else self.python(returns)
        if isinstance(ret, DType):
            self.ret_dtype = ret.name
        elif returns is not None and ret is not None:  # ``-> None`` or none: no return value
            raise self.error(self.node, f"return annotation {ast.unparse(returns)!r}")
        body = self.stmts(self.node.body)
        attrs: dict[str, Any] = {"tir.noalias": True}
        if not private:
            attrs["global_symbol"] = self.node.name
        return PrimFunc(tuple(params), body, buffer_map, attrs)

    # ------------------------------------------------------------------ statements

    def stmts(self, nodes: Sequence[ast.stmt]) -> Stmt:
        out: list[Stmt] = []
        for index, node in enumerate(nodes):
            if isinstance(node, ast.Pass) or (
                isinstance(node, ast.Expr)
                and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)
            ):
                continue
            if isinstance(node, ast.Assign | ast.AnnAssign) and self._binds_name(node):
                out.append(self.let(node, nodes[index + 1 :]))
                break
            out.append(self.stmt(node))
        if not out:
            return Evaluate(const(0))
        return out[0] if len(out) == 1 else SeqStmt(tuple(out))

    @staticmethod
    def _binds_name(node: ast.Assign | ast.AnnAssign) -> bool:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target]
        return len(targets) == 1 and isinstance(targets[0], ast.Name)

    def let(self, node: ast.Assign | ast.AnnAssign, rest: Sequence[ast.stmt]) -> Stmt:
        target = node.targets[0] if isinstance(node, ast.Assign) else node.target
        assert isinstance(target, ast.Name)
        if node.value is None:
            raise self.error(node, f"declaration of {target.id!r} without a value")
        value = self.expr(node.value)
        if isinstance(node, ast.AnnAssign):
            ann = self.python(node.annotation)
            if not isinstance(ann, DType):
                raise self.error(node, f"annotation {ast.unparse(node.annotation)!r}")
            value = ann(value)
        var = Var(target.id, value.dtype)
        outer = self.scope.get(target.id)
        self.scope[target.id] = var
        body = self.stmts(rest)
        if outer is None:
            del self.scope[target.id]
        else:
            self.scope[target.id] = outer
        return LetStmt(var, value, body)

    def stmt(self, node: ast.stmt) -> Stmt:
        if isinstance(node, ast.For):
            return self.loop(node)
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            return self.store(node.targets[0], self.expr(node.value), node)
        if isinstance(node, ast.AugAssign) and type(node.op) in _BINARY:
            old = self.expr(node.target)
            return self.store(node.target, _BINARY[type(node.op)](old, self.expr(node.value)), node)
        if isinstance(node, ast.If):
            else_case = self.stmts(node.orelse) if node.orelse else None
            return IfThenElse(self.expr(node.test), self.stmts(node.body), else_case)
        if isinstance(node, ast.Return) and node.value is not None:
            if self.ret_dtype is None:
                raise self.error(node, "return without a '-> T.<dtype>' annotation")
            value = DType(self.ret_dtype)(self.expr(node.value))
            return Evaluate(Call(self.ret_dtype, "tir.ret", (value,)))
        raise self.error(node, f"statement {type(node).__name__} ({ast.unparse(node)!r})")

    def store(self, target: ast.expr, value: PrimExpr, node: ast.stmt) -> Stmt:
        if not isinstance(target, ast.Subscript):
            raise self.error(node, f"assignment to {ast.unparse(target)!r}")
        buf, indices = self.subscript(target)
        if isinstance(value, IntImm | FloatImm) and value.dtype != buf.dtype:
            value = const(value.value, buf.dtype)
        if value.dtype != buf.dtype:
            raise self.error(
                node,
                f"store of a {value.dtype} value into {buf.dtype} buffer {buf.name} (cast it "
                f"with T.{buf.dtype}(...))",
            )
        return BufferStore(buf, value, indices)

    def loop(self, node: ast.For) -> Stmt:
        if node.orelse:
            raise self.error(node, "for ... else")
        if not isinstance(node.iter, ast.Call):
            raise self.error(node, f"loop over {ast.unparse(node.iter)!r}")
        callee = self.python(node.iter.func)
        args = [self.expr(a) for a in node.iter.args]
        if node.iter.keywords or not args:
            raise self.error(node, f"loop over {ast.unparse(node.iter)!r}")
        if callee is grid:
            ranges = [(const(0, a.dtype), a) for a in args]
        elif callee in (range, serial) and len(args) in _RANGE_ARGS:
            lo, hi = (const(0, args[0].dtype), args[0]) if len(args) == 1 else args
            ranges = [(lo, hi - lo)]
        else:
            raise self.error(node, f"loop over {ast.unparse(node.iter)!r}")
        names = node.target.elts if isinstance(node.target, ast.Tuple) else [node.target]
        if len(names) != len(ranges) or not all(isinstance(n, ast.Name) for n in names):
            raise self.error(node, f"loop target {ast.unparse(node.target)!r}")
        loop_vars = [Var(n.id, lo.dtype) for n, (lo, _) in zip(names, ranges, strict=True)]  # type: ignore[attr-defined]
        saved = dict(self.scope)
        self.scope.update({v.name: v for v in loop_vars})
        body = self.stmts(node.body)
        self.scope = saved
        for var, (lo, extent) in reversed(list(zip(loop_vars, ranges, strict=True))):
            body = For(var, lo, extent, ForKind.SERIAL, body)
        return body

    # ------------------------------------------------------------------ expressions

    def subscript(self, node: ast.Subscript) -> tuple[Buffer, tuple[PrimExpr, ...]]:
        buf = self.scope.get(node.value.id) if isinstance(node.value, ast.Name) else None
        if not isinstance(buf, Buffer):
            raise self.error(node, f"subscript of {ast.unparse(node.value)!r} (not a buffer)")
        items = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
        if any(isinstance(item, ast.Slice) for item in items):
            raise self.error(node, f"slice {ast.unparse(node)!r}")
        return buf, tuple(self.expr(item) for item in items)

    def expr(self, node: ast.expr) -> PrimExpr:  # noqa: PLR0911 - one return per construct
        if isinstance(node, ast.Constant) and isinstance(node.value, bool | int | float):
            return const(node.value)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
            return _BINARY[type(node.op)](self.expr(node.left), self.expr(node.right))
        if isinstance(node, ast.UnaryOp):
            return self.unary(node)
        if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _COMPARE:
            compare = _COMPARE[type(node.ops[0])]
            return compare(self.expr(node.left), self.expr(node.comparators[0]))
        if isinstance(node, ast.BoolOp):
            return self.boolean(node)
        if isinstance(node, ast.IfExp):
            return Select(self.expr(node.test), self.expr(node.body), self.expr(node.orelse))
        if isinstance(node, ast.Subscript):
            buf, indices = self.subscript(node)
            return BufferLoad(buf, indices)
        if isinstance(node, ast.Call):
            return self.call(node)
        raise self.error(node, f"expression {type(node).__name__} ({ast.unparse(node)!r})")

    def unary(self, node: ast.UnaryOp) -> PrimExpr:
        operand = self.expr(node.operand)
        if isinstance(node.op, ast.USub):
            return -operand
        if isinstance(node.op, ast.Not):
            return Not(operand)
        if isinstance(node.op, ast.UAdd):
            return operand
        raise self.error(node, f"operator {ast.unparse(node)!r}")

    def boolean(self, node: ast.BoolOp) -> PrimExpr:
        values = [self.expr(v) for v in node.values]
        result = values[0]
        for value in values[1:]:
            result = result & value if isinstance(node.op, ast.And) else result | value
        return result

    def name(self, node: ast.Name) -> PrimExpr:
        bound = self.scope.get(node.id)
        if isinstance(bound, Var):
            return bound
        if bound is not None:
            raise self.error(node, f"buffer {node.id!r} used as a value (index it: {node.id}[i])")
        value = self.env.get(node.id)
        if isinstance(value, bool | int | float):
            return const(value)
        raise self.error(node, f"name {node.id!r} (not a parameter, loop variable or number)")

    def call(self, node: ast.Call) -> PrimExpr:
        callee = self.python(node.func)
        args = [self.expr(a) for a in node.args]
        if node.keywords:
            raise self.error(node, f"keyword arguments in {ast.unparse(node)!r}")
        if isinstance(callee, DType) and len(args) == 1:
            value = args[0]
            if isinstance(value, IntImm | FloatImm):
                return const(value.value, callee.name)
            return callee(value)
        if callee in (min, max) and len(args) > 1:
            return (tir_min if callee is min else tir_max)(*args)
        raise self.error(node, f"call {ast.unparse(node)!r}")
