"""Calls from the host runtime library into Python: global functions, module lookups, workspace.

The C runtime keeps no registry of its own: ``TVMFuncGetGlobal``, ``TVMFuncRegisterGlobal``,
``TVMModGetFunction`` and ``TVMBackendGetFuncFromEnv`` (a kernel's lookup in its module, then the
globals) come here, and so does workspace
on a non-CPU device (``TVMBackendAllocWorkspace``), through the hook table installed with
``PyTVMSetHooks`` when the library loads. A hook that raises returns failure to C with the
exception pending (``last_error``), as a Python function called from C does.
"""

from __future__ import annotations

import ctypes
from collections.abc import Callable
from typing import Any

from . import registry
from .callback import function_from_borrowed_handle, function_to_handle
from .device import Device
from .dtype import DataType
from .errors import TVMError
from .host_library import when_loaded
from .last_error import set_pending
from .object import object_from_handle
from .type_index import TypeIndex

__all__ = ["set_workspace_allocator"]

_INT = ctypes.c_int
_VP = ctypes.c_void_p


def _guard(func: Callable[..., int]) -> Callable[..., int]:
    def guarded(*args: Any) -> int:
        try:
            return func(*args)
        except BaseException as exc:
            return set_pending(exc)

    return guarded


def _hook_get_global(name: bytes, out: Any) -> int:
    func = registry.get_global_func(name.decode("utf-8"), allow_missing=True)
    out[0] = function_to_handle(func) if func is not None else None
    return 0


def _hook_register_global(name: bytes, handle: int, override: int) -> int:
    func = function_from_borrowed_handle(handle)
    assert func is not None
    registry.register_packed(name.decode("utf-8"), func, override=bool(override))
    return 0


def _hook_mod_get_function(mod: int, name: bytes, query_imports: int, out: Any) -> int:
    if not mod:  # a kernel built without a module context: only globals are visible
        out[0] = None
        return 0
    module: Any = object_from_handle(mod, TypeIndex.MODULE)  # a runtime Module (a higher layer)
    func = module.get_function(
        name.decode("utf-8"), query_imports=bool(query_imports), allow_missing=True
    )
    out[0] = function_to_handle(func) if func is not None else None
    return 0


_workspace_alloc: Callable[[Device, int, DataType], int] | None = None
_workspace_free: Callable[[Device, int], None] | None = None


def set_workspace_allocator(
    alloc: Callable[[Device, int, DataType], int], free: Callable[[Device, int], None]
) -> None:
    """Install how C kernels get workspace on non-CPU devices (the runtime's device APIs)."""
    global _workspace_alloc, _workspace_free
    _workspace_alloc, _workspace_free = alloc, free


def _hook_alloc_workspace(dev_type: int, dev_id: int, nbytes: int, code: int, bits: int) -> int:
    try:
        if _workspace_alloc is None:
            raise TVMError("no workspace allocator: pytvm.runtime is not loaded")
        return _workspace_alloc(Device(dev_type, dev_id), nbytes, DataType(code, bits, 1))
    except BaseException as exc:
        set_pending(exc)
        return 0


def _hook_free_workspace(dev_type: int, dev_id: int, ptr: int) -> int:
    if _workspace_free is None:
        raise TVMError("no workspace allocator: pytvm.runtime is not loaded")
    _workspace_free(Device(dev_type, dev_id), ptr or 0)
    return 0


_GET_GLOBAL = ctypes.CFUNCTYPE(_INT, ctypes.c_char_p, ctypes.POINTER(_VP))
_REGISTER_GLOBAL = ctypes.CFUNCTYPE(_INT, ctypes.c_char_p, _VP, _INT)
_MOD_GET_FUNCTION = ctypes.CFUNCTYPE(_INT, _VP, ctypes.c_char_p, _INT, ctypes.POINTER(_VP))
_ALLOC_WORKSPACE = ctypes.CFUNCTYPE(_VP, _INT, _INT, ctypes.c_uint64, _INT, _INT)
_FREE_WORKSPACE = ctypes.CFUNCTYPE(_INT, _INT, _INT, _VP)


class _Hooks(ctypes.Structure):
    _fields_ = [
        ("get_global", _GET_GLOBAL),
        ("register_global", _REGISTER_GLOBAL),
        ("mod_get_function", _MOD_GET_FUNCTION),
        ("alloc_workspace", _ALLOC_WORKSPACE),
        ("free_workspace", _FREE_WORKSPACE),
    ]


_hooks = _Hooks(
    _GET_GLOBAL(_guard(_hook_get_global)),
    _REGISTER_GLOBAL(_guard(_hook_register_global)),
    _MOD_GET_FUNCTION(_guard(_hook_mod_get_function)),
    _ALLOC_WORKSPACE(_hook_alloc_workspace),
    _FREE_WORKSPACE(_guard(_hook_free_workspace)),
)


def _install(lib: ctypes.CDLL) -> None:
    lib.PyTVMSetHooks(ctypes.byref(_hooks))


when_loaded(_install)
