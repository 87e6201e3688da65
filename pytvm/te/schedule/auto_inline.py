"""Inlining stages by their shape of computation: element-wise, broadcast, injective."""

from __future__ import annotations

from collections.abc import Callable

from ...tir.expr import ProducerLoad, Var
from ...tir.functor import IRVisitor
from .schedule import Schedule
from .stage import Stage

__all__ = ["AutoInlineBroadcast", "AutoInlineElemWise", "AutoInlineInjective"]


def _is_injective(stage: Stage) -> bool:
    return not stage.reduce_axis


def _is_elemwise(stage: Stage) -> bool:
    """Every read indexes its tensor with exactly the stage's axis variables, in order."""
    axis = [iv.var for iv in stage.axis]
    ok = True

    class _Check(IRVisitor):
        def visit_ProducerLoad(self, node: ProducerLoad) -> None:
            nonlocal ok
            if len(node.indices) != len(axis) or any(
                not (isinstance(i, Var) and i is v) for i, v in zip(node.indices, axis)
            ):
                ok = False
            self.generic_visit(node)

    for b in stage.body:
        _Check().visit(b)
    return _is_injective(stage) and ok


def _is_broadcast(stage: Stage) -> bool:
    return _is_injective(stage) and stage.op.tag == "broadcast"


def _inline_where(sch: Schedule, test: Callable[[Stage], bool]) -> None:
    for stage in sch.compute_stages:
        if not stage.is_output and stage.attach == "root" and test(stage):
            stage.compute_inline()


def AutoInlineElemWise(sch: Schedule) -> None:
    """Inline every element-wise stage that is not an output."""
    _inline_where(sch, _is_elemwise)


def AutoInlineBroadcast(sch: Schedule) -> None:
    """Inline every stage tagged ``broadcast`` (and element-wise ones) that is not an output."""
    _inline_where(sch, lambda s: _is_elemwise(s) or _is_broadcast(s))


def AutoInlineInjective(sch: Schedule) -> None:
    """Inline every stage without a reduction that is not an output."""
    _inline_where(sch, _is_injective)
