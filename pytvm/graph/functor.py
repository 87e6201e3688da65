"""Walking and rewriting graph expressions, iteratively (deep models hit no recursion limit)."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .expr import Call, Expr, Function, Tuple, TupleGetItem, Var

__all__ = [
    "children",
    "free_vars",
    "post_order",
    "rewrite",
    "rewrite_function",
    "rewrite_pairs",
]


def children(expr: Expr) -> tuple[Expr, ...]:
    """The expressions ``expr`` reads directly (a called function's body is not one)."""
    if isinstance(expr, Call):
        return tuple(expr.args)
    if isinstance(expr, Tuple):
        return tuple(expr.fields)
    if isinstance(expr, TupleGetItem):
        return (expr.tuple_value,)
    return ()


def post_order(*roots: Expr) -> list[Expr]:
    """Every expression reachable from ``roots``, each once, producers before consumers."""
    order: list[Expr] = []
    seen: set[int] = set()
    for root in roots:
        stack: list[tuple[Expr, Iterator[Expr]]] = []
        if id(root) in seen:
            continue
        seen.add(id(root))
        stack.append((root, iter(children(root))))
        while stack:
            node, pending = stack[-1]
            for child in pending:
                if id(child) not in seen:
                    seen.add(id(child))
                    stack.append((child, iter(children(child))))
                    break
            else:
                stack.pop()
                order.append(node)
    return order


def free_vars(expr: Expr) -> list[Var]:
    """The variables ``expr`` reads, in order of first appearance (post order)."""
    return [e for e in post_order(expr) if isinstance(e, Var)]


def _rebuilt(node: Expr, mapped: dict[int, Expr]) -> Expr:
    """``node`` with its children replaced by their mapped values (itself when none changed)."""
    kids = children(node)
    new = tuple(mapped[id(k)] for k in kids)
    if all(a is b for a, b in zip(kids, new, strict=True)):
        return node
    if isinstance(node, Call):
        return Call(node.op, new, node.attrs, node.name)
    if isinstance(node, Tuple):
        return Tuple(new)
    assert isinstance(node, TupleGetItem)
    return TupleGetItem(new[0], node.index)


def rewrite(
    roots: tuple[Expr, ...], fn: Callable[[Expr], Expr | None]
) -> tuple[tuple[Expr, ...], dict[int, Expr]]:
    """Rewrite bottom-up: each node is rebuilt from its rewritten children, then ``fn`` may
    replace it (returning ``None`` keeps it). Shared nodes are rewritten once.

    Returns the rewritten roots and the map from ``id`` of every old node to its new node.
    """
    return rewrite_pairs(roots, lambda old, new: fn(new))


def rewrite_pairs(
    roots: tuple[Expr, ...], fn: Callable[[Expr, Expr], Expr | None]
) -> tuple[tuple[Expr, ...], dict[int, Expr]]:
    """:func:`rewrite` where ``fn(old, new)`` also sees the node of the input graph (whose
    arguments are the input graph's, e.g. to count their consumers there).
    """
    mapped: dict[int, Expr] = {}
    for node in post_order(*roots):
        new = _rebuilt(node, mapped)
        out = fn(node, new)
        mapped[id(node)] = new if out is None else out
    return tuple(mapped[id(r)] for r in roots), mapped


def rewrite_function(func: Function, fn: Callable[[Expr], Expr | None]) -> Function:
    """``func`` with its body rewritten by ``fn`` (parameters kept unless a rewrite drops them)."""
    (body,), _ = rewrite((func.body,), fn)
    if body is func.body:
        return func
    return Function(func.params, body, func.attrs)
