"""Parsing a hybrid script (a Python function in a small subset) into a ``HybridOp``.

The rules the parser reads as:

* Arguments are tensors, variables, constants or lists of those; ``output_tensor`` declares
  the outputs and ``allocate`` scratch tensors; the function returns its outputs.
* A name bound once to a constant and never stored again is that constant; any other assigned
  name is a one-element scratch tensor, realized (``ProducerRealize``) at the end of the scope
  it was declared in, as scratch tensors are.
* ``range``/``parallel``/``vectorize``/``unroll`` build loops; ``const_range`` is unrolled
  while parsing, its variable a Python int; ``bind`` binds a GPU thread axis.
* An ``if`` whose condition simplifies to a constant keeps only the branch taken.
* Calling another hybrid script inlines its body, its outputs becoming scratch tensors here.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping, Sequence
from enum import Enum
from typing import Any

from ...ffi.errors import TVMValueError
from ...tir import op as _op
from ...tir import stmt as S
from ...tir.arith import Analyzer
from ...tir.expr import (
    FloatImm,
    IntImm,
    IterVar,
    Not,
    PrimExpr,
    ProducerLoad,
    Range,
    Select,
    Var,
    const,
    convert,
)
from ...tir.expr_operators import match_types
from ...tir.functor import IRMutator
from ...tir.producer import ProducerRealize, ProducerStore
from ..operation import placeholder
from ..tensor import Tensor
from .calls import INTRINSICS, LoopSpec, TensorDecl, call_intrinsic
from .op import HybridOp, make_hybrid_op
from .usage import Declaration, declarations

__all__ = ["source_to_op"]


class Kind(Enum):
    """What a name of the script stands for."""

    INPUT = "input"
    LOOP_VAR = "loop var"
    CONST_LOOP_VAR = "const loop var"
    THREAD = "thread"
    CONST = "const"
    SCALAR = "scalar"  # a one-element scratch tensor
    OUTPUT = "output"
    BUFFER = "buffer"  # a scratch tensor (allocate, or a called script's output)


def _fail(node: ast.AST, message: str) -> TVMValueError:
    return TVMValueError(f"hybrid script, line {getattr(node, 'lineno', '?')}: {message}")


def _floordiv(a: Any, b: Any) -> Any:
    if isinstance(a, PrimExpr) or isinstance(b, PrimExpr):
        return _op.floordiv(a, b)
    return a // b


def _floormod(a: Any, b: Any) -> Any:
    if isinstance(a, PrimExpr) or isinstance(b, PrimExpr):
        return _op.floormod(a, b)
    return a % b


_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: _floordiv,
    ast.Mod: _floormod,
    ast.BitOr: operator.or_,
    ast.BitAnd: operator.and_,
    ast.BitXor: operator.xor,
    ast.LShift: operator.lshift,
    ast.RShift: operator.rshift,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
}

_NOP = S.Evaluate(const(0))


def _block(stmts: Sequence[S.Stmt | None]) -> S.Stmt:
    kept = [s for s in stmts if s is not None and s is not _NOP]
    return S.seq(*kept) if kept else _NOP


def _is_literal(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_is_literal(v) for v in value)
    return isinstance(value, (bool, int, float, str, IntImm, FloatImm))


class HybridParser(ast.NodeVisitor):
    """Visits the function's AST and builds its body (TVM's ``HybridParser``)."""

    def __init__(
        self,
        args: Sequence[Any],
        usage: Mapping[str, Declaration],
        callables: Mapping[str, Any],
        closure: Mapping[str, Any],
    ) -> None:
        self.args = list(args)
        self.usage = usage
        self.callables = callables
        self.closure = closure
        self.symbols: dict[str, tuple[Kind, Any]] = {}
        self.threads: dict[str, IterVar] = {}
        self.func_name = ""
        self.outputs: list[Tensor] = []
        self.returned = False
        self.ana = Analyzer()
        self._scopes: dict[Tensor, str] = {}  # storage scope of each allocated tensor

    # ------------------------------------------------------------------ symbols and scopes

    def _declare(self, node: ast.AST, name: str, kind: Kind, value: Any) -> None:
        if name in self.symbols:
            raise _fail(node, f"{name} is declared twice")
        if kind is Kind.THREAD:
            tag = value.thread_tag
            known = self.threads.setdefault(tag, value)
            assert known.dom is not None and value.dom is not None  # bind() gives a range
            if known is not value and not _equal(known.dom.extent, value.dom.extent):
                raise _fail(node, f"every bind of {tag} must have the same extent")
            value = known
        self.symbols[name] = (kind, value)

    def _lookup(self, name: str) -> tuple[Kind | None, Any]:
        found = self.symbols.get(name)
        return (None, None) if found is None else found

    def _realize_scope(self, scope: ast.AST, body: S.Stmt) -> S.Stmt:
        """``body`` inside realizations of the scratch tensors declared in ``scope``."""
        for name, decl in self.usage.items():
            if decl.scope is not scope or name not in self.symbols:
                continue
            kind, tensor = self.symbols[name]
            if kind not in (Kind.SCALAR, Kind.BUFFER):
                continue
            scope_name = "global" if kind is Kind.SCALAR else self._scopes.get(tensor, "global")
            if scope_name == "global":
                body = self._wrap_threads(body)
            bounds = tuple(Range(const(0, d.dtype), d) for d in tensor.shape)
            body = ProducerRealize(tensor, bounds, const(True), body, scope_name)
            del self.symbols[name]
        return body

    def _wrap_threads(self, body: S.Stmt) -> S.Stmt:
        for axis in self.threads.values():
            assert axis.dom is not None
            body = S.AttrStmt(axis, "thread_extent", axis.dom.extent, body)
        self.threads = {}
        return body

    def _stmts(self, nodes: Sequence[ast.stmt]) -> S.Stmt:
        return _block([self.visit(n) for n in nodes if not _is_docstring(n)])

    # ------------------------------------------------------------------ statements

    def visit_Module(self, node: ast.Module) -> S.Stmt:
        funcs = [n for n in node.body if isinstance(n, ast.FunctionDef)]
        if len(funcs) != 1:
            raise _fail(node, "the source must hold exactly one function")
        result: S.Stmt = self.visit(funcs[0])
        return result

    def visit_FunctionDef(self, node: ast.FunctionDef) -> S.Stmt:
        self.func_name = node.name
        for arg, value in zip(node.args.args, self.args, strict=True):
            self._declare(arg, arg.arg, Kind.INPUT, value)
        body = self._realize_scope(node, self._stmts(node.body))
        if not self.returned:
            raise _fail(node, f"{node.name} returns nothing; return its output tensors")
        return self._wrap_threads(body)

    def visit_Expr(self, node: ast.Expr) -> S.Stmt:
        value = self.visit(node.value)
        return S.Evaluate(convert(value)) if isinstance(value, (PrimExpr, int)) else _NOP

    def visit_Pass(self, node: ast.Pass) -> S.Stmt:
        return _NOP

    def visit_Assert(self, node: ast.Assert) -> S.Stmt:
        message = self.visit(node.msg) if node.msg is not None else ""
        if not isinstance(message, str):
            raise _fail(node, "an assertion's message must be a string")
        return S.AssertStmt(self._bool(node, self.visit(node.test)), message, _NOP)

    def visit_Return(self, node: ast.Return) -> S.Stmt:
        if any(kind is Kind.LOOP_VAR for kind, _ in self.symbols.values()):
            raise _fail(node, "return inside a loop")
        value = node.value
        elts = value.elts if isinstance(value, ast.Tuple) else [value]
        if not all(isinstance(e, ast.Name) for e in elts):
            raise _fail(node, "return output tensors by name (one, or a tuple)")
        names = [e.id for e in elts]  # type: ignore[union-attr]
        if len(set(names)) != len(names):
            raise _fail(node, "a tensor is returned twice")
        outs: list[Tensor] = []
        for name in names:
            kind, tensor = self._lookup(name)
            if kind is not Kind.OUTPUT:
                raise _fail(node, f"{name} is not an output_tensor")
            outs.append(tensor)
        self.outputs = outs
        self.returned = True
        return _NOP

    def visit_If(self, node: ast.If) -> S.Stmt:
        cond = self.ana.simplify(self._bool(node, self.visit(node.test)))
        if isinstance(cond, IntImm):
            return self._stmts(node.body if cond.value else node.orelse)
        then = self._stmts(node.body)
        other = self._stmts(node.orelse) if node.orelse else None
        return S.IfThenElse(cond, then, other)

    def visit_For(self, node: ast.For) -> S.Stmt:
        spec = self.visit(node.iter)
        if not isinstance(spec, LoopSpec):
            raise _fail(node, "a loop must iterate a loop intrinsic (range, unroll, bind, ...)")
        name = node.target.id  # type: ignore[attr-defined]
        if spec.unrolled_in_python:
            low, ext = self.ana.simplify(spec.low), self.ana.simplify(spec.extent)
            if not (isinstance(low, IntImm) and isinstance(ext, IntImm)):
                raise _fail(node, "const_range needs constant bounds")
            bodies = []
            for k in range(low.value, low.value + ext.value):
                self._declare(node, name, Kind.CONST_LOOP_VAR, k)
                bodies.append(self._realize_scope(node, self._stmts(node.body)))
                del self.symbols[name]
            return _block(bodies)
        if spec.thread is not None:
            self._declare(node, name, Kind.THREAD, spec.thread)
            body = self._realize_scope(node, self._stmts(node.body))
            del self.symbols[name]
            return body
        extent = self.ana.simplify(spec.extent)
        var = Var(name, extent.dtype)
        low = self.ana.simplify(spec.low)
        offset = var if isinstance(low, IntImm) and low.value == 0 else var + low
        self._declare(node, name, Kind.LOOP_VAR, offset)
        body = self._realize_scope(node, self._stmts(node.body))
        del self.symbols[name]
        return S.For(var, const(0, var.dtype), extent, spec.kind, body)

    def visit_Assign(self, node: ast.Assign) -> S.Stmt:
        if len(node.targets) != 1:
            raise _fail(node, "chained assignment (a = b = ...) is not supported")
        target = node.targets[0]
        value = self.visit(node.value)
        if isinstance(value, HybridOp):
            return self._bind_call(node, target, value)
        if isinstance(target, ast.Name):
            return self._assign_name(node, target, value)
        tensor, indices = self._store_target(target)
        return self._store(node, tensor, indices, value)

    def visit_AugAssign(self, node: ast.AugAssign) -> S.Stmt:
        tensor, indices = self._store_target(node.target)
        old = ProducerLoad(tensor, indices)
        return self._store(
            node, tensor, indices, _BINARY[type(node.op)](old, self.visit(node.value))
        )

    def _assign_name(self, node: ast.Assign, target: ast.Name, value: Any) -> S.Stmt:
        name = target.id
        kind = self._lookup(name)[0]
        if kind in (Kind.LOOP_VAR, Kind.CONST_LOOP_VAR, Kind.INPUT):
            raise _fail(node, f"{name} cannot be assigned (a loop variable or an argument)")
        decl = self.usage[name]
        if decl.node is target:  # the declaration
            if isinstance(value, TensorDecl):
                tensor = placeholder(value.shape, value.dtype, name)
                if value.scope == "output":
                    self._declare(node, name, Kind.OUTPUT, tensor)
                else:
                    self._scopes[tensor] = value.scope
                    self._declare(node, name, Kind.BUFFER, tensor)
                return _NOP
            value = self._simplified(node, value)
            if isinstance(value, (IntImm, FloatImm)) and ast.Store not in decl.uses:
                self._declare(node, name, Kind.CONST, value)
                return _NOP
            self._declare(node, name, Kind.SCALAR, placeholder((1,), value.dtype, name))
        tensor, indices = self._store_target(target)
        return self._store(node, tensor, indices, value)

    def _bind_call(self, node: ast.Assign, target: ast.expr, op: HybridOp) -> S.Stmt:
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        if len(names) != op.num_outputs or not all(isinstance(n, ast.Name) for n in names):
            raise _fail(node, f"bind the {op.num_outputs} outputs of {op.name} to names")
        rmap = {}
        for k, n in enumerate(names):
            tensor = op.output(k)
            self._declare(node, n.id, Kind.BUFFER, tensor)  # type: ignore[attr-defined]
            rmap[op.outputs[k]] = tensor
        return _ReplaceTensors(rmap).visit(op.body)  # type: ignore[no-any-return]

    def _store_target(self, target: ast.expr) -> tuple[Tensor, tuple[PrimExpr, ...]]:
        if isinstance(target, ast.Name):
            kind, scalar = self._lookup(target.id)
            if kind is not Kind.SCALAR:
                raise _fail(target, f"cannot store to {target.id}")
            return scalar, (const(0),)
        if not isinstance(target, ast.Subscript):
            raise _fail(target, "store to a name or an element of a tensor")
        base, indices = self._subscript_parts(target)
        if not isinstance(base, Tensor) or len(indices) != len(base.shape):
            raise _fail(target, "stores need a tensor indexed in every dimension")
        return base, indices

    def _store(
        self, node: ast.AST, tensor: Tensor, indices: tuple[PrimExpr, ...], value: Any
    ) -> S.Stmt:
        expr = self._simplified(node, value)
        if expr.dtype != tensor.dtype:
            expr = expr.astype(tensor.dtype)
        return ProducerStore(tensor, expr, indices)

    def _simplified(self, node: ast.AST, value: Any) -> PrimExpr:
        if isinstance(value, (Tensor, TensorDecl, LoopSpec, tuple, list, str)) or value is None:
            raise _fail(node, f"expected a scalar expression, got {value!r}")
        return self.ana.simplify(convert(value))

    def _bool(self, node: ast.AST, value: Any) -> PrimExpr:
        expr = convert(value)
        return expr if expr.dtype == "bool" else expr != 0

    # ------------------------------------------------------------------ expressions

    def visit_Name(self, node: ast.Name) -> Any:
        found = self.symbols.get(node.id)
        if found is None:
            if node.id in self.closure:
                value = self.closure[node.id]
                if not _is_literal(value):
                    raise _fail(node, f"captured {node.id} must be a constant, got {value!r}")
                return value
            raise _fail(node, f"unknown name {node.id}")
        kind, value = found
        if kind is Kind.THREAD:
            return value.var
        if kind is Kind.SCALAR:
            return ProducerLoad(value, (const(0),))
        return value

    def visit_Constant(self, node: ast.Constant) -> Any:
        value = node.value
        if isinstance(value, str) or value is None:
            return value
        if isinstance(value, bool):
            return const(value, "bool")
        if isinstance(value, int):
            return const(value, "int32")
        if isinstance(value, float):
            return const(value, "float32")
        raise _fail(node, f"unsupported constant {value!r}")

    def visit_Tuple(self, node: ast.Tuple) -> tuple[Any, ...]:
        return tuple(self.visit(e) for e in node.elts)

    def visit_List(self, node: ast.List) -> tuple[Any, ...]:
        return tuple(self.visit(e) for e in node.elts)

    def visit_Attribute(self, node: ast.Attribute) -> Any:
        base = self.visit(node.value)
        if node.attr not in ("shape", "dtype", "ndim") or not isinstance(base, Tensor):
            raise _fail(node, f"only a tensor's shape, dtype and ndim can be read, not {node.attr}")
        return getattr(base, node.attr)

    def _subscript_parts(self, node: ast.Subscript) -> tuple[Any, tuple[PrimExpr, ...]]:
        """The tensor (or sequence) ``node`` indexes and its indices so far."""
        index = self.visit(node.slice)
        indices = index if isinstance(node.slice, ast.Tuple) else (index,)
        if isinstance(node.value, ast.Subscript):
            base, outer = self._subscript_parts(node.value)
        else:
            base, outer = self.visit(node.value), ()
        if isinstance(base, (tuple, list)) and not outer:
            for i in indices:
                k = self.ana.simplify(convert(i))
                if not isinstance(k, IntImm):
                    raise _fail(node, "a list argument must be indexed with constants")
                base = base[k.value]
            return base, ()
        if not isinstance(base, Tensor):
            raise _fail(node, f"cannot index {base!r}")
        return base, (*outer, *(convert(i) for i in indices))

    def visit_Subscript(self, node: ast.Subscript) -> Any:
        base, indices = self._subscript_parts(node)
        if not isinstance(base, Tensor):
            return base
        if len(indices) != len(base.shape):
            if isinstance(node.ctx, ast.Load) and len(indices) < len(base.shape):
                return base[indices] if indices else base
            raise _fail(node, f"{base.name} has {len(base.shape)} dimensions")
        return ProducerLoad(base, indices)

    def visit_BinOp(self, node: ast.BinOp) -> Any:
        op = _BINARY.get(type(node.op))
        if op is None:
            raise _fail(node, f"operator {type(node.op).__name__} is not supported")
        return op(self.visit(node.left), self.visit(node.right))

    def visit_UnaryOp(self, node: ast.UnaryOp) -> Any:
        value = self.visit(node.operand)
        if isinstance(node.op, ast.USub):
            return -value
        if isinstance(node.op, ast.UAdd):
            return value
        if isinstance(node.op, ast.Not):
            return Not(self._bool(node, value))
        if isinstance(node.op, ast.Invert):
            return ~value
        raise _fail(node, f"operator {type(node.op).__name__} is not supported")

    def visit_Compare(self, node: ast.Compare) -> PrimExpr:
        values = [self.visit(node.left), *(self.visit(c) for c in node.comparators)]
        parts = []
        for k, op in enumerate(node.ops):
            fn = _BINARY.get(type(op))
            if fn is None:
                raise _fail(node, f"comparison {type(op).__name__} is not supported")
            parts.append(convert(fn(values[k], values[k + 1])))
        return _op.all(*parts)

    def visit_BoolOp(self, node: ast.BoolOp) -> PrimExpr:
        values = [self._bool(node, self.visit(v)) for v in node.values]
        return _op.all(*values) if isinstance(node.op, ast.And) else _op.any(*values)

    def visit_IfExp(self, node: ast.IfExp) -> PrimExpr:
        cond = self._bool(node, self.visit(node.test))
        then, other = convert(self.visit(node.body)), convert(self.visit(node.orelse))
        then, other = match_types(then, other)
        return Select(cond, then, other)

    def visit_Call(self, node: ast.Call) -> Any:
        if not isinstance(node.func, ast.Name):
            raise _fail(node, "only calls of plain names are supported")
        name = node.func.id
        args = [self.visit(a) for a in node.args]
        if name in INTRINSICS:
            return call_intrinsic(name, args)
        func = self.callables.get(name, self.closure.get(name))
        if not callable(func):
            raise _fail(node, f"{name} is not a function")
        outs = func(*args)
        first = outs[0] if isinstance(outs, (list, tuple)) else outs
        if not isinstance(first, Tensor) or not isinstance(first.op, HybridOp):
            raise _fail(node, f"{name}() must be a hybrid script (it returned {outs!r})")
        return first.op

    def generic_visit(self, node: ast.AST) -> Any:
        raise _fail(node, f"{type(node).__name__} is not supported in a hybrid script")


def _equal(a: PrimExpr, b: PrimExpr) -> bool:
    diff = Analyzer().simplify(convert(a) - convert(b))
    return isinstance(diff, IntImm) and diff.value == 0


def _is_docstring(node: ast.stmt) -> bool:
    return (
        isinstance(node, ast.Expr)
        and isinstance(node.value, ast.Constant)
        and isinstance(node.value.value, str)
    )


class _ReplaceTensors(IRMutator):
    """A called script's body writing and reading this script's tensors."""

    def __init__(self, rmap: Mapping[Tensor, Tensor]) -> None:
        self.rmap = rmap

    def visit_ProducerStore(self, node: ProducerStore) -> S.Stmt:
        node = self.generic_visit(node)
        new = self.rmap.get(node.producer)
        return node if new is None else ProducerStore(new, node.value, node.indices)

    def visit_ProducerLoad(self, node: ProducerLoad) -> PrimExpr:
        node = self.generic_visit(node)
        new = self.rmap.get(node.producer)
        return node if new is None else ProducerLoad(new, node.indices)


def source_to_op(
    src: str | ast.AST,
    args: Sequence[Any],
    callables: Mapping[str, Any],
    closure: Mapping[str, Any],
) -> Tensor | list[Tensor]:
    """The outputs of the ``HybridOp`` that the one function in ``src`` builds from ``args``.

    ``callables`` are the names the function may call (its module's globals); ``closure`` the
    constants it captures.
    """
    root = ast.parse(src) if isinstance(src, str) else src
    usage = declarations(root, len(args), callables, closure)
    parser = HybridParser(args, usage, callables, closure)
    body = parser.visit(root)
    inputs: list[Tensor] = []

    def collect(value: Any) -> None:
        if isinstance(value, Tensor):
            inputs.append(value)
        elif isinstance(value, (tuple, list)):
            for item in value:
                collect(item)

    for arg in args:
        collect(arg)
    op = make_hybrid_op(parser.func_name, "HybridOp", None, inputs, parser.outputs, body)
    outs = [op.output(k) for k in range(op.num_outputs)]
    return outs[0] if len(outs) == 1 else outs
