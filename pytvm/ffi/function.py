"""``PackedFunc``: the one callable type, whether Python, compiled C or a remote server runs it."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

from .object import Object, register_object

__all__ = ["PackedFunc", "PyFunction", "as_packed_func"]


@register_object("ffi.Function")
class PackedFunc(Object):
    """A type-erased function: called with any number of FFI values, returns one FFI value.

    Concrete kinds: :class:`PyFunction` (a Python callable), ``CFunction`` (a compiled C packed
    function) and, with RPC, remote functions. All are called the same way.

    Examples
    --------
    >>> f = as_packed_func(lambda a, b: a + b, name="add")
    >>> f(1, 2), isinstance(f, PackedFunc)
    (3, True)
    """

    __slots__ = ("name",)

    def __init__(self, name: str = "") -> None:
        self.name = name

    def __call__(self, *args: Any) -> Any:
        """Call the function with ``args``; subclasses implement it."""
        raise NotImplementedError(f"{type(self).__name__} does not implement __call__")

    def __repr__(self) -> str:
        return f"<PackedFunc {self.name or '<anonymous>'} ({type(self).__name__})>"


class PyFunction(PackedFunc):
    """A packed function backed by a Python callable."""

    __slots__ = ("callable",)

    def __init__(self, func: Callable[..., Any], name: str = "") -> None:
        self.name = name or getattr(func, "__name__", "")
        self.callable = func

    # Calling goes straight to the wrapped callable: no extra Python frame per call.
    __call__ = property(operator.attrgetter("callable"))


def as_packed_func(func: Callable[..., Any] | PackedFunc, name: str = "") -> PackedFunc:
    """Wrap a Python callable as a ``PackedFunc`` (a ``PackedFunc`` is returned as is)."""
    if isinstance(func, PackedFunc):
        return func
    if not callable(func):
        raise TypeError(f"expected a callable for a packed function, got {type(func).__name__}")
    return PyFunction(func, name)
