"""Schedule records (TVM's ``te.keep_schedule_record``): a snapshot after every primitive.

Under ``PassContext(config={"te.keep_schedule_record": True})`` a new schedule keeps
``schedule_record`` (a copy of itself first as created, then after each primitive) and
``primitive_record`` (``"vanilla"``, then each primitive's name). Primitives built from others
(``tile`` is split, split, reorder) record the ones they apply.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from ...ir.transform import PassContext

__all__ = ["KEEP_RECORD_OPTION", "Recorder", "keep_record", "recorded"]

#: The ``PassContext`` option that turns recording on.
KEEP_RECORD_OPTION = "te.keep_schedule_record"

P = ParamSpec("P")
R = TypeVar("R")
S = TypeVar("S")


class Recorder(Protocol):
    """What a primitive records into: a schedule that keeps a record (or does not)."""

    def record(self, primitive: str) -> None:
        """Note that ``primitive`` was applied."""


def keep_record() -> bool:
    """Whether schedules made now keep a record (the current ``PassContext``'s option)."""
    return bool(PassContext.current().get(KEEP_RECORD_OPTION, False))


def recorded(
    name: str, owner: Callable[[Any], Recorder | None] | None = None
) -> Callable[[Callable[Concatenate[S, P], R]], Callable[Concatenate[S, P], R]]:
    """Record primitive ``name`` into ``owner(self)`` (``self`` itself when no ``owner``) each
    time the method succeeds.
    """

    def wrap(fn: Callable[Concatenate[S, P], R]) -> Callable[Concatenate[S, P], R]:
        def inner(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
            result = fn(self, *args, **kwargs)
            sch: Any = self if owner is None else owner(self)
            if sch is not None:
                sch.record(name)
            return result

        functools.update_wrapper(inner, fn)
        return inner

    return wrap
