"""The dataflow of a computation: which tensors each operation reads, and a post-order of it."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from ..tensor import Operation, Tensor

__all__ = ["CreateReadGraph", "GetSubGraph", "PostDFSOrder"]


def CreateReadGraph(roots: Sequence[Operation]) -> dict[Operation, list[Tensor]]:
    """Each operation ``roots`` need, with the tensors it reads (TVM's ``CreateReadGraph``).

    Examples
    --------
    >>> from pytvm import te
    >>> A = te.placeholder((4,), name="A")
    >>> B = te.compute((4,), lambda i: A[i] + 1.0, name="B")
    >>> g = CreateReadGraph([B.op])
    >>> [t.name for t in g[B.op]], g[A.op]
    (['A'], [])
    """
    graph: dict[Operation, list[Tensor]] = {}
    stack = list(roots)
    while stack:
        op = stack.pop()
        if op in graph:
            continue
        graph[op] = list(op.input_tensors)
        stack.extend(t.op for t in graph[op])
    return graph


def PostDFSOrder(
    roots: Sequence[Operation], graph: Mapping[Operation, Sequence[Tensor]]
) -> list[Operation]:
    """The operations of ``graph`` reachable from ``roots``, every one after what it reads."""
    order: list[Operation] = []
    seen: set[Operation] = set()

    def visit(op: Operation) -> None:
        if op in seen:
            return
        seen.add(op)
        for t in graph.get(op, ()):
            visit(t.op)
        order.append(op)

    for op in roots:
        visit(op)
    return order


def GetSubGraph(
    outputs: Sequence[Tensor], inputs: Sequence[Tensor], include_inputs: bool = False
) -> list[Operation]:
    """The operations on a path from ``outputs`` to ``inputs``, each after what it reads."""
    boundary = {t.op for t in inputs}
    reaches: dict[Operation, bool] = {}
    result: list[Operation] = []

    def visit(op: Operation) -> bool:
        if op in reaches:
            return reaches[op]
        if op in boundary:
            reaches[op] = True
            if include_inputs:
                result.append(op)
            return True
        reaches[op] = False  # a cycle cannot reach through itself
        found = False
        for t in op.input_tensors:
            found = visit(t.op) or found
        reaches[op] = found
        if found:
            result.append(op)
        return found

    for t in outputs:
        visit(t.op)
    return result
