"""``String`` and ``Shape``: tvm-ffi's string and shape objects as Python ``str`` and ``tuple``.

As in tvm-ffi (``tvm_ffi.core.String``, ``tvm_ffi.Shape``) they subclass the built-in, so they
go wherever a ``str`` or a tuple of ints goes; they carry the type key and index of the object
they stand for (``ffi.String`` = 65, ``ffi.Shape`` = 69). The global functions ``ffi.String``
and ``ffi.Shape`` make them, as TVM's do.
"""

from __future__ import annotations

import operator
from collections.abc import Iterable
from typing import ClassVar, SupportsIndex

from .errors import TVMTypeError
from .registry import register_func
from .type_index import TypeIndex

__all__ = ["Shape", "String"]


class String(str):
    """An ``ffi.String``: a ``str`` that keeps the FFI object type.

    Examples
    --------
    >>> s = String("abc")
    >>> s == "abc", isinstance(s, str), s.type_key
    (True, True, 'ffi.String')
    """

    __slots__ = ()
    type_key: ClassVar[str] = "ffi.String"
    type_index: ClassVar[int] = int(TypeIndex.STR)

    def __repr__(self) -> str:
        return f"String({str.__repr__(self)})"


class Shape(tuple[int, ...]):
    """An ``ffi.Shape``: an immutable tuple of ints (a tensor's shape).

    Examples
    --------
    >>> s = Shape((2, 3))
    >>> s == (2, 3), s[1], len(s), s.type_index
    (True, 3, 2, 69)
    """

    __slots__ = ()
    type_key: ClassVar[str] = "ffi.Shape"
    type_index: ClassVar[int] = int(TypeIndex.SHAPE)

    def __new__(cls, content: Iterable[SupportsIndex] = ()) -> Shape:
        """A shape of the integer dimensions ``content``."""
        if isinstance(content, (str, bytes)) or not isinstance(content, Iterable):
            raise TVMTypeError(
                f"Shape expects an iterable of ints, got {type(content).__name__}: "
                "write Shape((2, 3)), or call the global function ffi.Shape(2, 3)"
            )
        dims = []
        for i, dim in enumerate(content):
            try:
                dims.append(operator.index(dim))
            except TypeError:
                raise TVMTypeError(
                    f"Shape dimension {i} must be an int, got {type(dim).__name__} {dim!r}"
                ) from None
        return super().__new__(cls, dims)

    def __repr__(self) -> str:
        return f"Shape({tuple(self)!r})"


@register_func("ffi.String", override=True)
def _make_string(value: str) -> String:
    if not isinstance(value, str):
        raise TVMTypeError(f"ffi.String expects a str, got {type(value).__name__}")
    return String(value)


@register_func("ffi.Shape", override=True)
def _make_shape(*dims: int) -> Shape:
    return Shape(dims)
