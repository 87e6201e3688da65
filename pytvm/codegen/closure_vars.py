"""The variables a parallel loop's body captures from the function around it."""

from __future__ import annotations

from ..ffi.errors import TVMValueError
from ..tir import expr as E
from ..tir import stmt as S
from ..tir.functor import IRVisitor
from .scalar_return import has_return

__all__ = ["free_vars", "parallel_captures"]


def parallel_captures(kernel: str, loop: S.For, dev_id: E.Var) -> list[E.Var]:
    """What the closure of parallel ``loop`` in ``kernel`` captures (see :func:`free_vars`).

    Raises when the loop's body returns from the kernel (``tir.ret``): a closure cannot.
    """
    if has_return(loop.body):
        raise TVMValueError(
            f"{kernel}: a parallel loop cannot return from the kernel (tir.ret in its "
            "body); return after the loop"
        )
    return free_vars(loop, dev_id)


def free_vars(s: S.Stmt, dev_id: E.Var) -> list[E.Var]:
    """Variables ``s`` uses but does not bind (what a closure must capture), in first-use order,
    always ending with ``dev_id`` (the device of the kernel's workspaces).
    """
    used: list[E.Var] = []
    bound: set[int] = set()

    class _Collect(IRVisitor):
        def visit_Var(self, node: E.Var) -> None:
            if id(node) not in bound and all(node is not u for u in used):
                used.append(node)

        def visit_For(self, node: S.For) -> None:
            bound.add(id(node.loop_var))
            self.generic_visit(node)

        def visit_LetStmt(self, node: S.LetStmt) -> None:
            bound.add(id(node.var))
            self.generic_visit(node)

        def visit_Let(self, node: E.Let) -> None:
            bound.add(id(node.var))
            self.generic_visit(node)

        def visit_Allocate(self, node: S.Allocate) -> None:
            bound.add(id(node.buffer.data))
            self.generic_visit(node)

        def visit_BufferLoad(self, node: E.BufferLoad) -> None:
            self.visit_Var(node.buffer.data)
            self.generic_visit(node)

        def visit_BufferStore(self, node: S.BufferStore) -> None:
            self.visit_Var(node.buffer.data)
            self.generic_visit(node)

    _Collect().visit(s)
    # Loop and let variables are bound before their uses in a walk, except for a parallel loop's
    # own variable, which the closure defines.
    result = [v for v in used if id(v) not in bound]
    if all(v is not dev_id for v in result):
        result.append(dev_id)
    return result
