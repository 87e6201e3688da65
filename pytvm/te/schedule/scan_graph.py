"""The dataflow around scans: a scan's body, its fixed-point axes, and each stage's attach path.

``ScanGetBody`` is every operation on a path from a scan's updates to its state placeholders or
its declared inputs (what must run inside the scan's loop). ``ScanFixPointAnalysis`` tells, for
each spatial axis of the scan, whether row ``t`` at index ``i`` only ever reads the state at the
same ``i`` (then the axis could be split across threads without a barrier): 1 when proved, 0
otherwise. ``CreateAttachPath`` lists, for each stage, the loops it sits in, innermost first.
"""

from __future__ import annotations

from collections.abc import Sequence

from ...ir.container import Array, Map
from ...tir.expr import IterVar, PrimExpr, ProducerLoad, Var, const
from ...tir.functor import IRVisitor
from ..scan import ScanOp
from ..tensor import ComputeOp, Operation, Tensor
from .graph import GetSubGraph
from .schedule import Schedule

__all__ = ["CreateAttachPath", "ScanFixPointAnalysis", "ScanGetBody"]

#: (operation, output index, dimension): one dimension of one tensor.
_DimKey = tuple[Operation, int, int]


def ScanGetBody(scan_op: Operation) -> Array[Operation]:
    """The operations a scan runs each step (between its updates and its states or inputs)."""
    if not isinstance(scan_op, ScanOp):
        raise TypeError(f"ScanGetBody expects a scan operation, got {scan_op}")
    return Array(GetSubGraph(scan_op.update, [*scan_op.state_placeholder, *scan_op.inputs]))


def _key(t: Tensor, dim: int) -> _DimKey:
    return (t.op, t.value_index, dim)


def _loads(op: ComputeOp) -> list[ProducerLoad]:
    found: list[ProducerLoad] = []

    class _Collect(IRVisitor):
        def visit_ProducerLoad(self, node: ProducerLoad) -> None:
            found.append(node)
            self.generic_visit(node)

    for b in op.body:
        _Collect().visit(b)
    return found


def _vars_in(e: PrimExpr) -> list[Var]:
    found: list[Var] = []

    class _Collect(IRVisitor):
        def visit_Var(self, node: Var) -> None:
            found.append(node)

    _Collect().visit(e)
    return found


def _reach_graph(ops: Sequence[Operation]) -> dict[_DimKey, list[_DimKey]]:
    """For each dimension of each op's output, the input dimensions its indices touch."""
    members = set(ops)
    reach: dict[_DimKey, list[_DimKey]] = {}
    for op in ops:
        if isinstance(op, ScanOp):
            for k, u in enumerate(op.update):
                for d in range(1, len(u.shape)):
                    reach.setdefault((op, k, d), []).extend([_key(u, d), _key(op.init[k], d)])
        elif isinstance(op, ComputeOp):
            axis_dim = {iv.var: (op, 0, d) for d, iv in enumerate(op.axis)}
            for key in axis_dim.values():
                reach.setdefault(key, [])
            for load in _loads(op):
                if load.producer.op not in members:
                    continue
                for d, index in enumerate(load.indices):
                    for v in _vars_in(index):
                        if v in axis_dim:
                            reach[axis_dim[v]].append(_key(load.producer, d))
    return reach


def ScanFixPointAnalysis(scan_op: Operation) -> Map[IterVar, PrimExpr]:
    """For each spatial axis of the scan: 1 if each row only reads the state at its own index
    of that axis (a fixed point), else 0.
    """
    if not isinstance(scan_op, ScanOp):
        raise TypeError(f"ScanFixPointAnalysis expects a scan operation, got {scan_op}")
    body = list(ScanGetBody(scan_op))
    exact, failed = _exact_reach(scan_op, body)
    states = {_key(s, d) for s in scan_op.state_placeholder for d in range(len(s.shape))}
    reach: dict[_DimKey, list[_DimKey]] | None = None
    result: Map[IterVar, PrimExpr] = Map()
    sp = 0
    for k, u in enumerate(scan_op.update):
        for d in range(1, len(u.shape)):
            axis = scan_op.spatial_axis_[sp]
            sp += 1
            key, target = _key(u, d), _key(scan_op.state_placeholder[k], d)
            if axis in failed or exact.get(key) is not axis:
                result[axis] = const(0)
                continue
            if reach is None:
                reach = _reach_graph(body)
            result[axis] = const(1 if _reaches_only(reach, key, target, states) else 0)
    return result


def _exact_reach(
    scan_op: ScanOp, body: list[Operation]
) -> tuple[dict[_DimKey, IterVar], set[IterVar]]:
    """Which spatial axis each body dimension reads at exactly its own index, and the axes
    read elsewhere (through a non-trivial index, or mixed with another axis).
    """
    exact: dict[_DimKey, IterVar] = {}
    failed: set[IterVar] = set()
    sp = 0
    for k, u in enumerate(scan_op.update):
        for d in range(1, len(u.shape)):
            exact[_key(scan_op.state_placeholder[k], d)] = scan_op.spatial_axis_[sp]
            sp += 1

    def merge(dst: _DimKey, src: _DimKey) -> None:
        if src not in exact:
            return
        if dst not in exact:
            exact[dst] = exact[src]
        elif exact[dst] is not exact[src]:
            failed.update((exact[dst], exact[src]))

    for op in body:
        if isinstance(op, ScanOp):
            for k, u in enumerate(op.update):
                for d in range(1, len(u.shape)):
                    merge((op, k, d), _key(u, d))
                    merge((op, k, d), _key(op.init[k], d))
        elif isinstance(op, ComputeOp):
            axis_dim = {iv.var: d for d, iv in enumerate(op.axis)}
            for load in _loads(op):
                for d, index in enumerate(load.indices):
                    src = _key(load.producer, d)
                    if isinstance(index, Var) and index in axis_dim:
                        for out in range(op.num_outputs):
                            merge((op, out, axis_dim[index]), src)
                    elif src in exact:
                        failed.add(exact[src])
    return exact, failed


def _reaches_only(
    reach: dict[_DimKey, list[_DimKey]], start: _DimKey, target: _DimKey, states: set[_DimKey]
) -> bool:
    """Whether every state dimension reachable from ``start`` is ``target``."""
    seen = {start}
    stack = [start]
    while stack:
        key = stack.pop()
        if key != target and key in states:
            return False
        for nxt in reach.get(key, []):
            if nxt not in seen:
                seen.add(nxt)
                stack.append(nxt)
    return True


def CreateAttachPath(sch: Schedule) -> Map[Operation, Array[IterVar]]:
    """For each stage's operation, the loops it is computed inside, innermost first."""
    paths: Map[Operation, Array[IterVar]] = Map()
    for stage in sch.stages:
        path: list[IterVar] = []
        seen: set[int] = set()
        current = stage
        while current.attach == "at" and current.attach_stage is not None:
            if id(current) in seen:
                raise ValueError(f"CreateAttachPath: compute_at makes a cycle at {stage.name}")
            seen.add(id(current))
            parent, ivar = current.attach_stage, current.attach_ivar
            leaves = parent.leaf_iter_vars
            pos = next((k for k, iv in enumerate(leaves) if iv is ivar), None)
            if pos is None:
                raise ValueError(
                    f"CreateAttachPath: {stage.name}'s attach point is not a loop of {parent.name}"
                )
            path.extend(reversed(leaves[: pos + 1]))
            current = parent
        paths.setdefault(stage.op, Array(path))
    return paths
