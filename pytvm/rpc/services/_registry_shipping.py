"""Keeping the fork server's global functions equal to the server process's: what to send, and
applying what was sent.

A session sees the global functions of the server process as they are when it connects, but its
worker is forked by the fork server, another process. So the server sends the fork server every
change of its registry (``ffi.registry``) before it asks for a worker:

* A name whose function is not the one the fork server has is sent, pickled with ``cloudpickle``:
  a module-level function by reference (the fork server imports its module), a lambda, closure
  or bound method by value. Functions compare by identity on the server's side.
* A name the server no longer has is removed there.
* What the fork server already holds from its own imports is not sent: its ``hello`` lists each
  name with a reference key, and a server function with the same key is taken as that one. The
  key is ``module:qualname`` for a module-level Python function; ``module:qualname@file:line``
  for another function without closure cells (a lambda an import registered: the same code
  over the same module's globals, so the fork server's own ``lambda: _CPU_API`` returns its own
  CPU device API, not a pickled copy of the server's); ``compiled`` for a C function.
* A compiled (C) function is never pickled: it comes from the libraries the fork server loads.
  A function that cannot be sent (or that the fork server cannot load) is logged once, naming it
  and the reason, and is absent from sessions (calling it raises the usual "not registered").

Loading a shipment may import modules that register functions of their own; the fork server
puts its registry back to what the server said, so imports never add or replace a name.
"""

from __future__ import annotations

import pickle
import sys
import types
from typing import Any

from ...ffi.c_function import CFunction
from ...ffi.function import PackedFunc, PyFunction
from ...ffi.registry import (
    get_global_func,
    list_global_func_names,
    register_func,
    registry_version,
    remove_global_func,
)

__all__ = ["RegistryShipper", "apply_shipment", "dumps_callable", "reference_key", "registry_keys"]

#: The reference key of every C function: one the fork server loaded is taken as the server's.
COMPILED = "compiled"


def reference_key(func: PackedFunc) -> str | None:
    """What identifies ``func`` across processes (see the module docstring), or None."""
    if isinstance(func, CFunction):
        return COMPILED
    if not isinstance(func, PyFunction):
        return None
    target = func.callable
    module, qualname = getattr(target, "__module__", None), getattr(target, "__qualname__", None)
    if not isinstance(module, str) or not isinstance(qualname, str) or module == "__main__":
        return None
    found: Any = sys.modules.get(module)
    for part in qualname.split("."):
        found = getattr(found, part, None)
    if found is target:
        return f"{module}:{qualname}"
    if isinstance(target, types.FunctionType) and target.__closure__ is None:
        code = target.__code__
        return f"{module}:{qualname}@{code.co_filename}:{code.co_firstlineno}"
    return None


def registry_keys() -> dict[str, str | None]:
    """Every registered name with its :func:`reference_key`."""
    return {name: reference_key(func) for name, func in _registered().items()}


def _registered() -> dict[str, PackedFunc]:
    """Every registered name with its function, now (a name removed meanwhile is left out)."""
    found = {}
    for name in list_global_func_names():
        func = get_global_func(name, allow_missing=True)
        if func is not None:
            found[name] = func
    return found


def dumps_callable(func: object) -> bytes:
    """``func`` pickled with cloudpickle (module-level functions by reference)."""
    import cloudpickle  # only a server that ships functions needs it

    return bytes(cloudpickle.dumps(func, protocol=pickle.HIGHEST_PROTOCOL))


class RegistryShipper:
    """The server's side: what the fork server holds, and the changes still to send.

    Parameters
    ----------
    remote : dict of str to (str or None)
        The fork server's names and reference keys (its ``hello``).
    """

    def __init__(self, remote: dict[str, str | None]) -> None:
        # name -> the server's function the fork server holds under it (or that could not be
        # sent), or the reference key of a function the fork server had from its own imports.
        self._remote: dict[str, object] = dict(remote)
        #: The registry version the last shipment brought the fork server to (-1: none yet).
        self.version = -1

    def changes(self) -> tuple[dict[str, bytes], list[str], list[tuple[str, str]]] | None:
        """The registry changes since the last call, or None if there are none: the functions
        to send (name -> pickle), the names to remove, and the functions that cannot be sent
        (name, reason) to log.
        """
        version = registry_version()  # read first: a change made meanwhile shows up next time
        if version == self.version:
            return None
        current = _registered()
        update: dict[str, bytes] = {}
        remove = [name for name in self._remote if name not in current]
        unsendable: list[tuple[str, str]] = []
        for name in remove:
            del self._remote[name]
        for name, func in current.items():
            held = self._remote.get(name)
            if held is func:
                continue
            key = reference_key(func)
            if isinstance(held, str) and held == key:
                self._remote[name] = func  # the fork server imported this very function
                continue
            self._remote[name] = func
            reason = _unsendable_reason(func)
            if reason is None:
                try:
                    update[name] = dumps_callable(func.callable)  # type: ignore[attr-defined]
                    continue
                except Exception as err:  # whatever the pickler rejects
                    reason = f"cannot be pickled: {type(err).__name__}: {err}"
            unsendable.append((name, reason))
            remove.append(name)  # the fork server must not keep an older function under it
        self.version = version
        return update, remove, unsendable


def _unsendable_reason(func: PackedFunc) -> str | None:
    if isinstance(func, CFunction):
        return (
            "a compiled function the server process loaded; pass its library as load_library "
            "to have it in sessions"
        )
    if not isinstance(func, PyFunction):
        return f"a {type(func).__name__} is not a Python function"
    return None


def apply_shipment(update: dict[str, bytes], remove: list[str]) -> list[tuple[str, str]]:
    """The fork server's side: register ``update`` (name -> pickled callable), unregister
    ``remove``, and undo what imports did to other names meanwhile; returns the functions that
    could not be loaded (name, reason), which are now absent.
    """
    before = _registered()
    loaded: dict[str, Any] = {}
    failed: list[tuple[str, str]] = []
    for name, blob in update.items():
        try:
            loaded[name] = pickle.loads(blob)
        except Exception as err:  # e.g. its module does not import here
            reason = f"cannot be loaded by the fork server: {type(err).__name__}: {err}"
            failed.append((name, reason))
    for name in list_global_func_names():  # registered by an import just now
        if name not in before:
            _remove(name)
    for name, func in before.items():  # replaced by an import just now
        if get_global_func(name, allow_missing=True) is not func:
            register_func(name, func, override=True)
    for name, func in loaded.items():
        register_func(name, func, override=True)
    for name in [*remove, *(name for name, _ in failed)]:
        _remove(name)
    return failed


def _remove(name: str) -> None:
    if get_global_func(name, allow_missing=True) is not None:
        remove_global_func(name)
