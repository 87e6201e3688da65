"""Objects: type keys, type indices and the Python classes registered for them (seed 003).

Every object class carries a ``type key`` (``"runtime.Module"``) and a ``type index``: static
indices for the keys tvm-ffi fixes (``ffi.Module`` = 73, ...), dynamic ones from 128 up in order
of registration. An object crosses the C boundary as an opaque handle tagged with its type index;
the handle maps back to the very same Python object, so identity and class survive a round trip.
"""

from __future__ import annotations

import itertools
import threading
import weakref
from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from .errors import TVMKeyError, TVMTypeError, TVMValueError
from .type_index import STATIC_TYPE_KEYS, TypeIndex

__all__ = [
    "Object",
    "object_from_handle",
    "register_object",
    "type_index_to_class",
    "type_index_to_key",
    "type_key_to_index",
]

_lock = threading.Lock()
_KEY_TO_INDEX: dict[str, int] = dict(STATIC_TYPE_KEYS)
_INDEX_TO_KEY: dict[int, str] = {index: key for key, index in STATIC_TYPE_KEYS.items()}
_INDEX_TO_CLASS: dict[int, type[Object]] = {}
_dynamic_indices = itertools.count(int(TypeIndex.DYN_OBJECT_BEGIN))

# Live objects by handle: lets a handle that comes back from C find its Python object.
_LIVE: weakref.WeakValueDictionary[int, Object] = weakref.WeakValueDictionary()


def _index_for_key(type_key: str) -> int:
    with _lock:
        index = _KEY_TO_INDEX.get(type_key)
        if index is None:
            index = next(_dynamic_indices)
            _KEY_TO_INDEX[type_key] = index
            _INDEX_TO_KEY[index] = type_key
        return index


def type_key_to_index(type_key: str) -> int:
    """The type index of a registered type key; ``KeyError`` if unknown."""
    try:
        return _KEY_TO_INDEX[type_key]
    except KeyError:
        raise TVMKeyError(f"object type key {type_key!r} is not registered") from None


def type_index_to_key(type_index: int) -> str:
    """The type key of a type index; ``KeyError`` if unknown."""
    try:
        return _INDEX_TO_KEY[type_index]
    except KeyError:
        raise TVMKeyError(f"object type index {type_index} is not registered") from None


def type_index_to_class(type_index: int) -> type[Object] | None:
    """The Python class registered for a type index, if any."""
    return _INDEX_TO_CLASS.get(type_index)


class Object:
    """Base of every object: carries ``type_key``/``type_index`` and a stable ``handle``.

    Subclasses are declared with :func:`register_object`. A subclass whose state is made by a
    registered constructor function calls ``self.__init_handle_by_constructor__(f, *args)``.
    """

    __slots__ = ("__dict__", "__weakref__")
    _type_key: ClassVar[str] = "ffi.Object"
    _type_index: ClassVar[int] = int(TypeIndex.OBJECT)

    @property
    def type_key(self) -> str:
        """The registered type key of this object's class."""
        return self._type_key

    @property
    def type_index(self) -> int:
        """The type index of this object's class."""
        return self._type_index

    @property
    def handle(self) -> int:
        """The opaque handle this object travels as through C; stable while it lives."""
        key = id(self)
        if _LIVE.get(key) is not self:
            _LIVE[key] = self
        return key

    def __init_handle_by_constructor__(self, fconstructor: Callable[..., Any], *args: Any) -> None:
        """Fill ``self`` from the object a constructor function returns.

        ``self`` takes over the returned object's state and becomes the object its handle
        names, so later round trips through C return ``self``.
        """
        made = fconstructor(*args)
        if not isinstance(made, Object):
            raise TVMTypeError(
                f"constructor {getattr(fconstructor, 'name', fconstructor)!r} "
                f"returned {type(made).__name__}, expected an object"
            )
        if not isinstance(made, type(self)) and not isinstance(self, type(made)):
            raise TVMTypeError(f"constructor returned a {made.type_key}, expected {self.type_key}")
        self.__dict__.update(made.__dict__)
        _LIVE[id(self)] = self

    def same_as(self, other: object) -> bool:
        """Reference equality, as TVM's ``same_as``."""
        return self is other

    def __repr__(self) -> str:
        return f"<{self._type_key} object at {id(self):#x}>"


_O = TypeVar("_O", bound=type)


def register_object(type_key: str | type | None = None) -> Any:
    """Class decorator: register an ``Object`` subclass under a type key.

    Static keys (``ffi.Module``...) keep tvm-ffi's index; new keys get indices from 128 up.

    Examples
    --------
    >>> @register_object("example.Point")
    ... class Point(Object):
    ...     def __init__(self, x: int) -> None:
    ...         self.x = x
    >>> type_key_to_index("example.Point") >= 128, type_index_to_class(Point._type_index) is Point
    (True, True)
    """

    def register(cls: _O, key: str) -> _O:
        if not (isinstance(cls, type) and issubclass(cls, Object)):
            raise TVMTypeError(f"register_object expects an Object subclass, got {cls!r}")
        index = _index_for_key(key)
        previous = _INDEX_TO_CLASS.get(index)
        if previous is not None and previous.__qualname__ != cls.__qualname__:
            raise TVMValueError(
                f"object type key {key!r} is already registered to "
                f"{previous.__module__}.{previous.__qualname__}"
            )
        cls._type_key = key
        cls._type_index = index
        _INDEX_TO_CLASS[index] = cls
        return cls

    if isinstance(type_key, str):
        key = type_key
        return lambda cls: register(cls, key)
    if type_key is None:
        return lambda cls: register(cls, cls.__name__)
    return register(type_key, type_key.__name__)


register_object("ffi.Object")(Object)


def object_from_handle(handle: int, type_index: int) -> Object:
    """The live object a handle names; ``ValueError`` if it is gone or of another type."""
    obj = _LIVE.get(handle)
    if obj is None:
        raise TVMValueError(
            f"object handle {handle:#x} (type index {type_index}) does not name a "
            "live object; it was freed or never came from this process"
        )
    expected = _INDEX_TO_CLASS.get(type_index)
    if obj.type_index != type_index and expected is not None and not isinstance(obj, expected):
        raise TVMValueError(
            f"object handle {handle:#x} came back tagged with type index {type_index} "
            f"({expected.__qualname__}) but names a {type(obj).__qualname__} "
            f"(type index {obj.type_index}); the C side mixed up its type codes"
        )
    return obj
