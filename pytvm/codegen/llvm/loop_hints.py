"""Loop pragmas → LLVM loop metadata: what a schedule tells LLVM's loop passes.

A schedule annotates a loop with ``stage.pragma(axis, "loop_vectorize", False)`` (the loop's
``pragma_loop_vectorize`` annotation) to keep LLVM's loop vectorizer off it, or
``stage.pragma(axis, "loop_unroll", False)`` to keep LLVM from unrolling it. Both are hints for
code that is better left as written: a loop whose vectorized form would scatter or gather, or
one whose unrolled form costs more compile time than it saves. The C backend ignores them.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["LoopHint", "loop_hints"]

#: An ``llvm.loop`` option node: its name, then its boolean operand if it has one.
LoopHint = tuple[str] | tuple[str, bool]


def loop_hints(annotations: Mapping[str, Any]) -> tuple[LoopHint, ...]:
    """The ``llvm.loop`` options a loop's pragma annotations ask for.

    >>> loop_hints({"pragma_loop_vectorize": False, "pragma_loop_unroll": False})
    (('llvm.loop.vectorize.enable', False), ('llvm.loop.unroll.disable',))
    >>> loop_hints({"pragma_auto_unroll_max_step": 16})
    ()
    """
    hints: list[LoopHint] = []
    vectorize = annotations.get("pragma_loop_vectorize")
    if vectorize is not None:
        hints.append(("llvm.loop.vectorize.enable", bool(vectorize)))
    unroll = annotations.get("pragma_loop_unroll")
    if unroll is not None:
        hints.append(("llvm.loop.unroll.enable",) if unroll else ("llvm.loop.unroll.disable",))
    return tuple(hints)
