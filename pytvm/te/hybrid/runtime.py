"""The hybrid script's Python emulator: numpy meanings of its intrinsics (TVM's
``hybrid.runtime``).

Calling a hybrid function with numpy arrays runs its Python body with :data:`HYBRID_GLOBALS`
put into the function's module globals for the duration of the call (loops become ``range``,
``output_tensor`` a zero array, ``sqrt`` numpy's), then restores the globals as they were.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ...target.target import Target

__all__ = [
    "HYBRID_GLOBALS",
    "allocate",
    "bind",
    "const_range",
    "enter_hybrid_runtime",
    "output_tensor",
    "parallel",
    "restore_runtime",
    "unroll",
    "vectorize",
]


class bind:
    """A loop bound to a GPU thread axis, emulated as a serial loop of ``extent`` steps."""

    def __init__(self, _thread_tag: str, extent: int) -> None:
        self.extent = int(extent)

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.extent))


def allocate(shape: Any, dtype: str = "float32", scope: str = "global") -> np.ndarray[Any, Any]:
    """A zero-filled array of ``shape`` and ``dtype`` (``scope`` only matters on devices)."""
    del scope
    dims = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return np.zeros(tuple(int(d) for d in dims), dtype=dtype)


#: The script's names for these, importable so that linters know them in a script's module.
output_tensor = allocate
unroll = vectorize = parallel = const_range = range


def _rsqrt(x: Any) -> Any:
    return np.ones_like(x) / np.sqrt(x)


def _popcount(x: Any) -> int:
    """Ones in the two's-complement bits of ``x`` (its own width for numpy integers)."""
    value = int(x)
    if value < 0:
        bits = np.dtype(x.dtype).itemsize * 8 if isinstance(x, np.integer) else 64
        value &= (1 << bits) - 1
    return bin(value).count("1")


def _sigmoid(x: Any) -> Any:
    return 1 / (1 + np.exp(-x))


def _max_num_threads(allow_none: bool = True) -> int:
    target = Target.current(allow_none)
    if target is None:
        raise ValueError("max_num_threads(): no target is current; use `with Target(...)`")
    threads = getattr(target, "max_num_threads", None)
    if threads is None:
        raise ValueError(f"max_num_threads(): target {target} has no thread limit (not a GPU)")
    return int(threads)


def _inf(dtype: str) -> Any:
    return np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).max


def _ninf(dtype: str) -> Any:
    return -np.inf if np.dtype(dtype).kind == "f" else np.iinfo(dtype).min


HYBRID_GLOBALS: dict[str, Callable[..., Any] | type] = {
    "unroll": range,
    "vectorize": range,
    "parallel": range,
    "const_range": range,
    "bind": bind,
    "allocate": allocate,
    "output_tensor": allocate,
    "sqrt": np.sqrt,
    "rsqrt": _rsqrt,
    "log": np.log,
    "tanh": np.tanh,
    "power": np.power,
    "exp": np.exp,
    "sigmoid": _sigmoid,
    "popcount": _popcount,
    "round": round,
    "likely": lambda cond: cond,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "int8": np.int8,
    "int16": np.int16,
    "int32": np.int32,
    "int64": np.int64,
    "float16": np.float16,
    "float32": np.float32,
    "float64": np.float64,
    "ceil_div": lambda a, b: (a + b - 1) // b,
    "max_num_threads": _max_num_threads,
    "inf": _inf,
    "ninf": _ninf,
}

_MISSING = object()


def enter_hybrid_runtime(func: Callable[..., Any]) -> list[tuple[str, Any]]:
    """Put the intrinsics into ``func``'s globals; returns what they shadowed, for
    :func:`restore_runtime`.
    """
    scope = func.__globals__
    shadowed = [(name, scope.get(name, _MISSING)) for name in HYBRID_GLOBALS]
    scope.update(HYBRID_GLOBALS)
    return shadowed


def restore_runtime(func: Callable[..., Any], shadowed: list[tuple[str, Any]]) -> None:
    """Undo :func:`enter_hybrid_runtime`: the globals hold what they held before."""
    scope = func.__globals__
    for name, old in shadowed:
        if old is _MISSING:
            scope.pop(name, None)
        else:
            scope[name] = old
