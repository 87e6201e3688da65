"""Which expressions both code generators may compute where their value is not needed (both
sides of a select as vector operations, the right side of a short-circuit operator).
"""

from __future__ import annotations

from ..tir import expr as E
from ..tir.expr import is_float
from ..tir.functor import IRVisitor

__all__ = ["speculatable"]


def speculatable(e: E.PrimExpr) -> bool:
    """Whether ``e`` may be computed when its value is not needed: it reads no memory and
    cannot trap (an integer division only by a constant other than 0 and -1).
    """
    safe = True

    class _Check(IRVisitor):
        def visit_BufferLoad(self, node: E.BufferLoad) -> None:
            nonlocal safe
            safe = False

        def _division(self, node: E.BinaryOp) -> None:
            nonlocal safe
            divisor = node.b
            known = isinstance(divisor, E.IntImm) and divisor.value not in (0, -1)
            if not is_float(node.dtype) and not known:
                safe = False
            self.generic_visit(node)

        visit_Div = visit_Mod = visit_FloorDiv = visit_FloorMod = _division

    _Check().visit(e)
    return safe
