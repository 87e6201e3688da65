"""The global function registry (seed 002): one process-wide, thread-safe name -> PackedFunc map."""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable
from typing import Any, Literal, TypeVar, overload

from .errors import TVMAttributeError, TVMTypeError, TVMValueError
from .function import PackedFunc, as_packed_func

__all__ = [
    "get_global_func",
    "init_api",
    "list_global_func_names",
    "register_func",
    "register_global_func",
    "registry_version",
    "remove_global_func",
]


class _State:
    """The registry's lock and its change counter."""

    lock = threading.Lock()
    version = 0


def _reset_lock_after_fork() -> None:
    # A forked child (an RPC server's session worker) has only the forking thread; a lock some
    # other thread held at fork time would stay held forever.
    _State.lock = threading.Lock()


os.register_at_fork(after_in_child=_reset_lock_after_fork)
_functions: dict[str, PackedFunc] = {}

F = TypeVar("F", bound=Callable[..., Any])


def registry_version() -> int:
    """A counter bumped on every change, so callers can cache lookups safely."""
    return _State.version


def _register(name: str, func: Callable[..., Any], override: bool) -> PackedFunc:
    if not isinstance(name, str) or not name:
        raise TVMTypeError(f"a global function name must be a non-empty str, got {name!r}")
    packed = as_packed_func(func, name)
    with _State.lock:
        if name in _functions and not override:
            raise TVMValueError(
                f"global function {name!r} is already registered; pass override=True to replace it"
            )
        _functions[name] = packed
        _State.version += 1
    return packed


@overload
def register_func(func_name: F, f: None = None, override: bool = False) -> F: ...
@overload
def register_func(func_name: str, f: None = None, override: bool = False) -> Callable[[F], F]: ...
@overload
def register_func(func_name: str, f: F, override: bool = False) -> F: ...


def register_func(func_name: Any, f: Any = None, override: bool = False) -> Any:
    """Register a global function, as a decorator (with or without a name) or directly.

    Examples
    --------
    >>> @register_func("example.add_one", override=True)
    ... def add_one(x):
    ...     return x + 1
    >>> get_global_func("example.add_one")(41)
    42
    >>> _ = register_func("example.twice", lambda x: 2 * x, override=True)
    >>> get_global_func("example.twice")(4)
    8
    """
    if callable(func_name) and f is None:
        _register(func_name.__name__, func_name, override)
        return func_name
    if f is not None:
        _register(func_name, f, override)
        return f

    def decorate(func: F) -> F:
        _register(func_name, func, override)
        return func

    return decorate


#: TVM 0.27's name for :func:`register_func` (``tvm.register_global_func``): same arguments,
#: decorator forms and ``override``.
register_global_func = register_func


def register_packed(name: str, func: PackedFunc, override: bool = False) -> PackedFunc:
    """Register an existing ``PackedFunc`` (e.g. one that C handed over) under ``name``."""
    return _register(name, func, override)


@overload
def get_global_func(name: str, allow_missing: Literal[False] = False) -> PackedFunc: ...
@overload
def get_global_func(name: str, allow_missing: bool) -> PackedFunc | None: ...


def get_global_func(name: str, allow_missing: bool = False) -> PackedFunc | None:
    """The global function ``name``; None if missing and ``allow_missing``, else an error."""
    func = _functions.get(name)
    if func is None and not allow_missing:
        raise TVMAttributeError(f"global function {name!r} is not registered")
    return func


def list_global_func_names() -> list[str]:
    """Names of every registered global function, sorted."""
    with _State.lock:
        return sorted(_functions)


def remove_global_func(name: str) -> None:
    """Unregister ``name``; an error naming it if it is not registered."""
    with _State.lock:
        if _functions.pop(name, None) is None:
            raise TVMAttributeError(f"cannot remove global function {name!r}: not registered")
        _State.version += 1


def init_api(namespace: str, module_name: str) -> None:
    """Set every global function ``<namespace>.<name>`` as attribute ``name`` of a module.

    Only direct children are set (``rpc.Connect`` for ``rpc``, not ``rpc.server.upload``), as
    seed 003's ``_init_api``.
    """
    target = sys.modules[module_name]
    prefix = namespace + "."
    for full_name in list_global_func_names():
        if not full_name.startswith(prefix):
            continue
        short = full_name[len(prefix) :]
        if "." in short:
            continue
        setattr(target, short, _functions[full_name])
