"""``Attrs``: the immutable, hashable attributes of an operator call."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ffi.errors import TVMKeyError, TVMTypeError

__all__ = ["Attrs", "freeze"]


def freeze(value: Any) -> Any:
    """``value`` made immutable and hashable (lists become tuples, numpy scalars Python ones)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        return tuple(freeze(v) for v in value.tolist())
    if isinstance(value, np.generic):
        return value.item()
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    raise TVMTypeError(f"Attrs: value {value!r} of type {type(value).__name__} is not supported")


@dataclass(frozen=True, slots=True)
class Attrs(Mapping[str, Any]):
    """Sorted ``(name, value)`` pairs; read like a dict (``attrs["strides"]``, ``attrs.get``)."""

    items_: tuple[tuple[str, Any], ...] = ()

    @staticmethod
    def of(values: Mapping[str, Any] | None = None, **kwargs: Any) -> Attrs:
        """Attributes from a mapping and keywords."""
        merged = {**(values or {}), **kwargs}
        return Attrs(tuple(sorted((k, freeze(v)) for k, v in merged.items())))

    def __getitem__(self, key: str) -> Any:
        for k, v in self.items_:
            if k == key:
                return v
        raise TVMKeyError(f"no attribute {key!r}; the attributes are {[k for k, _ in self.items_]}")

    def __iter__(self) -> Iterator[str]:
        return (k for k, _ in self.items_)

    def __len__(self) -> int:
        return len(self.items_)

    def with_values(self, **kwargs: Any) -> Attrs:
        """A copy with ``kwargs`` set."""
        return Attrs.of(dict(self.items_), **kwargs)

    def __str__(self) -> str:
        return ", ".join(f"{k}={_show(v)}" for k, v in self.items_)


def _show(value: Any) -> str:
    if isinstance(value, tuple):
        return "[" + ", ".join(_show(v) for v in value) + "]"
    if isinstance(value, str):
        return repr(value)
    return str(value)
