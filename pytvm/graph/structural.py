"""Structural equality and hashing of graph IR: same operators, attributes, types, constants
and sharing, parameters matched by position (names may differ).

``structural_hash`` reads exactly what ``structural_equal`` compares, so equal graphs hash
equal: each node of the post order contributes its kind, type, operator, attributes, constant
values and the post-order positions of its arguments (the sharing), a parameter its position.
Names (of variables and calls) are read by neither.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..ffi.errors import TVMValueError
from .expr import Call, Constant, Expr, Function, TupleGetItem, Var
from .functor import children, post_order

__all__ = ["assert_structural_equal", "structural_equal", "structural_hash"]


class _Compare:
    def __init__(self) -> None:
        self.pairs: dict[int, int] = {}  # id in a -> id in b
        self.why = ""

    def function(self, a: Function, b: Function) -> bool:
        if len(a.params) != len(b.params):
            return self.fail(f"{len(a.params)} vs {len(b.params)} parameters")
        if a.attrs.items_ != b.attrs.items_:
            return self.fail(f"function attributes {a.attrs} vs {b.attrs}")
        for pa, pb in zip(a.params, b.params, strict=True):
            if pa.type_annotation != pb.type_annotation:
                return self.fail(
                    f"parameter {pa.name}: {pa.type_annotation} vs {pb.type_annotation}"
                )
            self.pairs[id(pa)] = id(pb)
        return self.expr(a.body, b.body)

    def fail(self, why: str) -> bool:
        self.why = self.why or why
        return False

    def expr(self, a: Expr, b: Expr) -> bool:
        order_a, order_b = post_order(a), post_order(b)
        if len(order_a) != len(order_b):
            return self.fail(f"{len(order_a)} vs {len(order_b)} nodes")
        for x, y in zip(order_a, order_b, strict=True):
            if not self.node(x, y):
                return False
            self.pairs[id(x)] = id(y)
        return True

    def node(self, x: Expr, y: Expr) -> bool:  # noqa: PLR0911
        if type(x) is not type(y):
            return self.fail(f"{type(x).__name__} vs {type(y).__name__}")
        if x.checked_type != y.checked_type:
            return self.fail(f"type {x.checked_type} vs {y.checked_type}")
        if isinstance(x, Var):
            return self.pairs.get(id(x)) == id(y) or self.fail(f"free variable {x.name}")
        if isinstance(x, Constant):
            assert isinstance(y, Constant)
            return np.array_equal(x.data, y.data) or self.fail("constants differ")
        if isinstance(x, Call):
            assert isinstance(y, Call)
            if isinstance(x.op, Function) or isinstance(y.op, Function):
                if not (isinstance(x.op, Function) and isinstance(y.op, Function)):
                    return self.fail("a call of a function vs an operator")
                if not _Compare().function(x.op, y.op):
                    return self.fail("called functions differ")
            elif x.op != y.op:
                return self.fail(f"operator {x.op} vs {y.op}")
            if x.attrs.items_ != y.attrs.items_:
                return self.fail(f"{x.op_name}: attributes {x.attrs} vs {y.attrs}")
        if isinstance(x, TupleGetItem) and x.index != y.index:  # type: ignore[union-attr]
            return self.fail("tuple index differs")
        kids_x, kids_y = children(x), children(y)
        if len(kids_x) != len(kids_y):
            return self.fail("argument counts differ")
        return all(self.pairs.get(id(c)) == id(d) for c, d in zip(kids_x, kids_y, strict=True)) or (
            self.fail(f"{getattr(x, 'op_name', type(x).__name__)}: arguments differ")
        )


def structural_equal(a: Any, b: Any) -> bool:
    """Whether two functions, modules or expressions have the same structure."""
    return _explain(a, b) == ""


def _explain(a: Any, b: Any) -> str:
    cmp = _Compare()
    fa, fb = getattr(a, "functions", None), getattr(b, "functions", None)
    if fa is not None and fb is not None:
        if sorted(fa) != sorted(fb):
            return f"functions {sorted(fa)} vs {sorted(fb)}"
        for name in fa:
            if not _Compare().function(fa[name], fb[name]):
                return f"@{name}: " + _explain(fa[name], fb[name])
        return ""
    if isinstance(a, Function) and isinstance(b, Function):
        return "" if cmp.function(a, b) else cmp.why or "differ"
    return "" if cmp.expr(a, b) else cmp.why or "differ"


def assert_structural_equal(a: Any, b: Any) -> None:
    """Raise ``TVMValueError`` saying where ``a`` and ``b`` first differ."""
    why = _explain(a, b)
    if why:
        raise TVMValueError(f"graphs differ: {why}")


def structural_hash(node: Any) -> int:
    """A hash equal for structurally equal functions, modules and expressions.

    Examples
    --------
    >>> from pytvm import graph as g
    >>> def relu() -> g.Function:
    ...     x = g.Var("x", g.TensorType((4,), "float32"))
    ...     return g.Function((x,), g.call("nn.relu", x))
    >>> structural_hash(relu()) == structural_hash(relu())
    True
    """
    return hash(_shape(node))


def _shape(node: Any) -> Any:
    functions = getattr(node, "functions", None)
    if functions is not None:
        return tuple(sorted((name, _function_shape(f)) for name, f in functions.items()))
    if isinstance(node, Function):
        return _function_shape(node)
    return _expr_shape(node, {})


def _function_shape(func: Function) -> Any:
    params = {id(p): i for i, p in enumerate(func.params)}
    head = (len(func.params), func.attrs.items_, tuple(p.type_annotation for p in func.params))
    return head, _expr_shape(func.body, params)


def _expr_shape(root: Expr, params: dict[int, int]) -> Any:
    """Per node of the post order: what ``_Compare.node`` compares, arguments by position."""
    position: dict[int, int] = {}
    shape: list[Any] = []
    for i, x in enumerate(post_order(root)):
        position[id(x)] = i
        if isinstance(x, Var):
            own: Any = params.get(id(x), -1)
        elif isinstance(x, Constant):
            own = _constant_bytes(x.data)
        elif isinstance(x, Call):
            op = _function_shape(x.op) if isinstance(x.op, Function) else x.op
            own = (op, x.attrs.items_)
        elif isinstance(x, TupleGetItem):
            own = x.index
        else:
            own = None
        kids = tuple(position[id(c)] for c in children(x))
        shape.append((type(x).__name__, x.checked_type, own, kids))
    return tuple(shape)


def _constant_bytes(data: np.ndarray) -> bytes:
    """The bytes of ``data`` with ``-0.0`` read as ``0.0`` (``np.array_equal`` calls them equal)."""
    if data.dtype.kind in "fc":
        data = np.where(data == 0, np.zeros_like(data), data)
    return data.tobytes()
