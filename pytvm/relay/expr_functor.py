"""TVM's ``relay.expr_functor``: visitors over the graph IR, dispatching on the node's kind.

Subclass :class:`ExprVisitor` and override ``visit_call`` (and the others) to walk a graph;
each node is visited once however many consumers it has. :class:`ExprMutator` rebuilds the
graph from what its ``visit_*`` methods return.

Examples
--------
>>> from pytvm import relay
>>> from pytvm.relay.expr_functor import ExprVisitor
>>> x = relay.var("x", shape=(2,))
>>> y = relay.add(relay.exp(x), relay.exp(x))
>>> class Ops(ExprVisitor):
...     def __init__(self):
...         super().__init__()
...         self.ops = []
...     def visit_call(self, call):
...         self.ops.append(call.op)
...         super().visit_call(call)
>>> v = Ops()
>>> v.visit(y)
>>> v.ops
['add', 'exp', 'exp']
"""

from __future__ import annotations

from typing import Any

from ..ffi.errors import TVMTypeError
from ..graph import Call, Constant, Function, Tuple, TupleGetItem, Var

__all__ = ["ExprFunctor", "ExprMutator", "ExprVisitor"]


class ExprFunctor:
    """Dispatch ``visit(expr)`` to ``visit_<kind>``, memoized by node identity."""

    def __init__(self) -> None:
        self.memo_map: dict[int, Any] = {}

    def visit(self, expr: Any) -> Any:
        """The result of the ``visit_*`` method for ``expr``'s kind (computed once per node)."""
        key = id(expr)
        if key in self.memo_map:
            return self.memo_map[key][1]
        if isinstance(expr, Function):
            result = self.visit_function(expr)
        elif isinstance(expr, Call):
            result = self.visit_call(expr)
        elif isinstance(expr, Var):
            result = self.visit_var(expr)
        elif isinstance(expr, Constant):
            result = self.visit_constant(expr)
        elif isinstance(expr, Tuple):
            result = self.visit_tuple(expr)
        elif isinstance(expr, TupleGetItem):
            result = self.visit_tuple_getitem(expr)
        else:
            raise TVMTypeError(f"{type(self).__name__}.visit: not a graph expression: {expr!r}")
        self.memo_map[key] = (expr, result)  # keep expr alive so its id is not reused
        return result

    def visit_function(self, fn: Function) -> Any:
        """A function node."""
        raise NotImplementedError

    def visit_call(self, call: Call) -> Any:
        """An operator call (or a call of a function)."""
        raise NotImplementedError

    def visit_var(self, var: Var) -> Any:
        """A variable."""
        raise NotImplementedError

    def visit_constant(self, const: Constant) -> Any:
        """A constant."""
        raise NotImplementedError

    def visit_tuple(self, tup: Tuple) -> Any:
        """A tuple of expressions."""
        raise NotImplementedError

    def visit_tuple_getitem(self, t: TupleGetItem) -> Any:
        """One field of a tuple."""
        raise NotImplementedError


class ExprVisitor(ExprFunctor):
    """Visit every node reachable from the root, children first in argument order."""

    def visit_function(self, fn: Function) -> None:
        """Visit the parameters, then the body."""
        for param in fn.params:
            self.visit(param)
        self.visit(fn.body)

    def visit_call(self, call: Call) -> None:
        """Visit the called function (when not an operator name), then the arguments."""
        if isinstance(call.op, Function):
            self.visit(call.op)
        for arg in call.args:
            self.visit(arg)

    def visit_var(self, var: Var) -> None:
        """Nothing below a variable."""

    def visit_constant(self, const: Constant) -> None:
        """Nothing below a constant."""

    def visit_tuple(self, tup: Tuple) -> None:
        """Visit the fields."""
        for field in tup.fields:
            self.visit(field)

    def visit_tuple_getitem(self, t: TupleGetItem) -> None:
        """Visit the tuple."""
        self.visit(t.tuple_value)


class ExprMutator(ExprFunctor):
    """Rebuild the graph from the visited children; a node whose children did not change is
    kept as it is.
    """

    def visit_function(self, fn: Function) -> Function:
        """The function with its body mutated (parameters mutated too)."""
        params = [self.visit(p) for p in fn.params]
        body = self.visit(fn.body)
        unchanged = body is fn.body and all(a is b for a, b in zip(params, fn.params, strict=True))
        return fn if unchanged else Function(params, body, fn.attrs)

    def visit_call(self, call: Call) -> Call:
        """The call with its arguments (and called function) mutated."""
        op = self.visit(call.op) if isinstance(call.op, Function) else call.op
        args = [self.visit(a) for a in call.args]
        if op is call.op and all(a is b for a, b in zip(args, call.args, strict=True)):
            return call
        return Call(op, args, call.attrs, call.name)

    def visit_var(self, var: Var) -> Var:
        """The variable itself."""
        return var

    def visit_constant(self, const: Constant) -> Constant:
        """The constant itself."""
        return const

    def visit_tuple(self, tup: Tuple) -> Tuple:
        """The tuple with its fields mutated."""
        fields = [self.visit(f) for f in tup.fields]
        if all(a is b for a, b in zip(fields, tup.fields, strict=True)):
            return tup
        return Tuple(fields)

    def visit_tuple_getitem(self, t: TupleGetItem) -> TupleGetItem:
        """The item of the mutated tuple."""
        value = self.visit(t.tuple_value)
        return t if value is t.tuple_value else TupleGetItem(value, t.index)
