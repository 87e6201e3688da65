"""``unroll_loop``: unrolled loops of constant extent are expanded, one copy per iteration.

``ForKind.UNROLLED`` loops with a constant extent are expanded (the variable substituted by
``min + k``); with a symbolic extent they become serial. ``config["tir.UnrollLoop"]`` adds
TVM's automatic unrolling: a serial loop of constant extent whose whole body takes at most
``auto_max_step`` steps (statements executed, counting inner loops), or whose extent is at most
``auto_max_extent``, and which has no loop left inside and fewer than ``auto_max_depth`` unrolled
levels inside, is unrolled too. ``explicit_unroll=False`` marks such loops
``UNROLLED`` for the C compiler instead of expanding them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any

from ...ffi.errors import TVMValueError
from ...ir.transform import Pass, PassContext, map_functions
from .. import expr as E
from .. import stmt as S
from ..expr import IntImm
from ..function import IRModule, PrimFunc
from ..functor import IRMutator, substitute

__all__ = ["UnrollLoop", "unroll_loop"]

_DEFAULT_MAX_DEPTH = 8
_OPTIONS = frozenset(
    {"auto_max_step", "auto_max_depth", "auto_max_extent", "explicit_unroll", "unroll_local_access"}
)


@dataclass(frozen=True, slots=True, eq=False)
class _Unrolled(S.Stmt):
    """Marks the copies of one unrolled loop while the pass runs (to count unrolled levels)."""

    body: S.Stmt


class _Unwrap(IRMutator):
    def visit__Unrolled(self, node: _Unrolled) -> S.Stmt:
        return self.visit(node.body)  # type: ignore[no-any-return]

    def visit_SeqStmt(self, node: S.SeqStmt) -> S.Stmt:
        items = [self.visit(x) for x in node.seq]
        if all(a is b for a, b in zip(items, node.seq, strict=True)):
            return node
        return S.seq(*items)  # flattens the unwrapped copies


def _unrolled_depth(s: S.Stmt) -> int:
    if isinstance(s, _Unrolled):
        return 1 + _unrolled_depth(s.body)
    if isinstance(s, S.SeqStmt):
        return max((_unrolled_depth(x) for x in s.seq), default=0)
    inner = [getattr(s, name, None) for name in ("body", "then_case", "else_case")]
    return max((_unrolled_depth(x) for x in inner if isinstance(x, S.Stmt)), default=0)


def _steps(s: S.Stmt) -> float:
    if isinstance(s, _Unrolled):
        return _steps(s.body)
    if isinstance(s, S.SeqStmt):
        return sum(_steps(x) for x in s.seq)
    if isinstance(s, S.For):
        if not isinstance(s.extent, IntImm):
            return math.inf
        return s.extent.value * _steps(s.body)
    if isinstance(s, S.IfThenElse):
        return 1 + max(_steps(s.then_case), _steps(s.else_case) if s.else_case else 0)
    body = getattr(s, "body", None)
    return 1 + (_steps(body) if isinstance(body, S.Stmt) else 0)


def _depth(s: S.Stmt) -> int:
    if isinstance(s, S.SeqStmt):
        return max((_depth(x) for x in s.seq), default=0)
    inner = [getattr(s, name, None) for name in ("body", "then_case", "else_case")]
    deepest = max((_depth(x) for x in inner if isinstance(x, S.Stmt)), default=0)
    return deepest + (1 if isinstance(s, S.For) else 0)


class _Unroll(IRMutator):
    def __init__(self, options: dict[str, Any]) -> None:
        self.max_step = int(options.get("auto_max_step", 0))
        self.max_depth = int(options.get("auto_max_depth", _DEFAULT_MAX_DEPTH))
        self.max_extent = int(options.get("auto_max_extent", 0))
        self.explicit = bool(options.get("explicit_unroll", True))
        # Unrolled copies of a loop level (1 for a loop with no loops left inside).
        self.levels: dict[int, int] = {}

    def visit_For(self, node: S.For) -> Any:
        node = self.generic_visit(node)
        const = isinstance(node.extent, IntImm)
        auto = (
            node.kind is S.ForKind.SERIAL
            and isinstance(node.extent, IntImm)
            and _depth(node.body) == 0  # no loop left inside (TVM's normal_loop_depth == 0)
            and _unrolled_depth(node.body) < self.max_depth
            and (
                node.extent.value * _steps(node.body) <= self.max_step
                or node.extent.value <= self.max_extent
            )
        )
        if node.kind is not S.ForKind.UNROLLED and not auto:
            return node
        if not const:
            return replace(node, kind=S.ForKind.SERIAL)
        if not self.explicit:
            return replace(node, kind=S.ForKind.UNROLLED)
        assert isinstance(node.extent, IntImm)
        copies = [
            substitute(node.body, {node.loop_var: E.binary(E.Add, node.min, k)})
            for k in range(node.extent.value)
        ]
        if not copies:
            return S.Evaluate(IntImm("int32", 0))
        return _Unrolled(S.seq(*copies))


def _unroll_func(func: PrimFunc, options: dict[str, Any]) -> PrimFunc:
    body = _Unroll(options).visit(func.body)
    body = _Unwrap().visit(body)
    return func if body is func.body else func.with_body(body)


def unroll_loop(mod: IRModule, ctx: PassContext) -> IRModule:
    """Expand unrolled loops (and, with ``tir.UnrollLoop`` options, small serial ones)."""
    options = dict(ctx.get("tir.UnrollLoop", {}) or {})
    unknown = sorted(set(options) - _OPTIONS)
    if unknown:
        raise TVMValueError(
            f"PassContext config tir.UnrollLoop: unknown option(s) {unknown}; expected some of "
            f"{sorted(_OPTIONS)}"
        )
    return map_functions(mod, lambda f: _unroll_func(f, options))


UnrollLoop = Pass("unroll_loop", 0, unroll_loop)
