"""TVM's ``tvm.ir.container`` (``tvm.container``): ``Map`` and ``Array`` of IR nodes.

pytvm's IR lives in Python, so the containers are the built-in ones with TVM's names: a
``Map`` is a ``dict`` (``InferBound`` returns one, keyed by ``IterVar``), an ``Array`` an
immutable ``tuple``. Both compare and hash as their built-in bases do.

Examples
--------
>>> from pytvm.ir.container import Array, Map
>>> m = Map({"a": 1})
>>> isinstance(m, dict), m["a"], Array([1, 2])[1]
(True, 1, 2)
"""

from __future__ import annotations

from typing import Any, TypeVar

__all__ = ["Array", "Map"]

K = TypeVar("K")
V = TypeVar("V")
T = TypeVar("T")


class Map(dict[K, V]):
    """TVM's ``Map``: keys (IR nodes compare by identity) to values."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Map({dict.__repr__(self)})"


class Array(tuple[T, ...]):
    """TVM's ``Array``: an immutable sequence of IR nodes."""

    __slots__ = ()

    def __repr__(self) -> str:
        return f"Array({list(self)!r})"

    def __getitem__(self, index: Any) -> Any:
        value = tuple.__getitem__(self, index)
        return Array(value) if isinstance(index, slice) else value
