"""The system library: functions linked into the running program rather than loaded from a file.

Statically linked code registers each function under its symbol name (TVM's
``TVMBackendRegisterSystemLibSymbol``); ``ffi.SystemLib(prefix)`` returns the module that finds
them, which is what ``RPCSession.system_lib()`` asks a server for.
"""

from __future__ import annotations

import threading
from typing import Any

from ..ffi import PackedFunc
from ..ffi.errors import TVMValueError
from ..ffi.function import as_packed_func
from ..ffi.registry import register_func
from .module import Module

__all__ = ["SystemLibModule", "register_system_lib_function", "system_lib"]

_SYMBOLS: dict[str, PackedFunc] = {}
_LOCK = threading.Lock()


def register_system_lib_function(name: str, func: Any, override: bool = False) -> None:
    """Make ``func`` part of the system library under ``name`` (prefix included)."""
    with _LOCK:
        if name in _SYMBOLS and not override:
            raise TVMValueError(f"system library already has a function {name!r}")
        _SYMBOLS[name] = as_packed_func(func, name)


class SystemLibModule(Module):
    """Functions of the system library whose names start with ``prefix`` (prefix stripped)."""

    def __init__(self, prefix: str = "") -> None:
        super().__init__()
        self.prefix = prefix

    @property
    def type_key(self) -> str:
        """``"system_lib"``."""
        return "system_lib"

    def _get_own_function(self, name: str) -> PackedFunc | None:
        return _SYMBOLS.get(self.prefix + name)


@register_func("ffi.SystemLib")
def system_lib(prefix: str = "") -> SystemLibModule:
    """The system library module (one per prefix)."""
    return SystemLibModule(str(prefix))
