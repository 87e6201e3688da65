"""``te.tag_scope``: give every compute declared inside a block or a function one tag.

Examples
--------
>>> from pytvm import te
>>> A = te.placeholder((4,), name="A")
>>> with te.tag_scope(tag="scale"):
...     B = te.compute((4,), lambda i: A[i] * 2.0, name="B")
>>> B.op.tag
'scale'
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from types import TracebackType
from typing import Any, TypeVar

from ..ffi.errors import TVMValueError

__all__ = ["TagScope", "current_tag", "tag_scope"]

F = TypeVar("F", bound=Callable[..., Any])


class _Stack(threading.local):
    def __init__(self) -> None:
        self.scopes: list[TagScope] = []


_STACK = _Stack()


class TagScope:
    """The tag the computes declared while it is entered receive.

    Usable as a ``with`` block or as a decorator (then each call of the function enters it).
    """

    def __init__(self, tag: str) -> None:
        if not isinstance(tag, str):
            raise TVMValueError(f"tag_scope: the tag must be a string, got {tag!r}")
        self.tag = tag

    @staticmethod
    def get_current() -> TagScope | None:
        """The innermost entered scope (None outside every scope)."""
        return _STACK.scopes[-1] if _STACK.scopes else None

    def __enter__(self) -> TagScope:
        if _STACK.scopes:
            raise TVMValueError(
                f"tag_scope({self.tag!r}) inside tag_scope({_STACK.scopes[-1].tag!r}): "
                "nested tag scopes are not allowed; tag the inner computes explicitly"
            )
        _STACK.scopes.append(self)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        _STACK.scopes.pop()

    def __call__(self, func: F) -> F:
        """``func`` entering this scope on every call (the decorator form)."""

        @functools.wraps(func)
        def tagged(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)

        return tagged  # type: ignore[return-value]


def tag_scope(tag: str) -> TagScope:
    """A scope that tags the computes declared in it (TVM's ``te.tag_scope``)."""
    return TagScope(tag)


def current_tag(tag: str, name: str) -> str:
    """The tag a compute named ``name`` gets: ``tag``, or the scope's when one is entered.

    Raises
    ------
    TVMValueError
        When a scope is entered and ``tag`` is not empty (TVM forbids nesting tags).
    """
    scope = TagScope.get_current()
    if scope is None:
        return tag
    if tag:
        raise TVMValueError(
            f"compute {name!r}: tag {tag!r} given inside tag_scope({scope.tag!r}); nested tags "
            "are not allowed, drop one of them"
        )
    return scope.tag
