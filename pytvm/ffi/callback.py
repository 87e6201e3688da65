"""Python functions called from C: function handles for any ``PackedFunc``, kept alive while C
holds them, and the trampoline every such call enters.

A Python function handed to C becomes a handle whose C function is :data:`_TRAMPOLINE` and whose
resource is a key of :data:`_CALLBACKS`; the handle's finalizer drops the key, so the function
lives exactly as long as C holds a reference. A handle coming back to Python is unwrapped to the
very function handed out (a Python function) or wrapped as a ``CFunction``. An exception raised
in the function reaches C as -1 with its text as the last error, and Python again as the same
exception object (``last_error``).

Examples
--------
>>> from pytvm.ffi import as_packed_func
>>> add = as_packed_func(lambda a, b: a + b, name="add")
>>> handle = function_to_handle(add)
>>> function_from_handle(handle, owned=True) is add
True
"""

from __future__ import annotations

import ctypes
import itertools

from .arg_convert import decode, set_function_handles, store_return
from .c_abi import TVMPackedCFunc, TVMPackedCFuncFinalizer
from .c_function import CFunction
from .function import PackedFunc
from .host_library import runtime_library
from .last_error import check_call, set_pending

__all__ = ["function_from_borrowed_handle", "function_from_handle", "function_to_handle"]

_I64 = ctypes.c_int64
_INT = ctypes.c_int

_CALLBACKS: dict[int, PackedFunc] = {}
_callback_keys = itertools.count(1)


def function_to_handle(func: PackedFunc) -> int:
    """A function handle (one reference, owned by the caller) for any PackedFunc."""
    if isinstance(func, CFunction):
        return func.c_handle()
    lib = runtime_library()
    key = next(_callback_keys)
    _CALLBACKS[key] = func
    out = ctypes.c_void_p()
    check_call(
        lib.TVMFuncCreateFromCFunc(_TRAMPOLINE_ADDR, key, _FINALIZER_ADDR, ctypes.byref(out))
    )
    return out.value or 0


def function_from_handle(raw: int, owned: bool) -> PackedFunc | None:
    """The function behind handle ``raw`` (None for a null handle); Python takes over the
    handle's reference if ``owned``, else takes one of its own.
    """
    if not raw:
        return None
    lib = runtime_library()
    if not owned:
        lib.TVMFuncRetain(raw)
    func, resource = ctypes.c_void_p(), ctypes.c_void_p()
    check_call(lib.PyTVMFuncGetCFunc(raw, ctypes.byref(func), ctypes.byref(resource)))
    if func.value == _TRAMPOLINE_ADDR:
        python_func = _CALLBACKS[resource.value or 0]  # the Python function we handed out
        lib.TVMFuncFree(raw)
        return python_func
    return CFunction(func.value or 0, resource.value or 0, node=raw)


def function_from_borrowed_handle(raw: int) -> PackedFunc | None:
    """:func:`function_from_handle` of a handle C keeps its reference to."""
    return function_from_handle(raw, owned=False)


def _release_callback(resource: int | None) -> None:
    _CALLBACKS.pop(resource or 0, None)


def _trampoline(
    args: int, codes: int, num_args: int, ret: int, ret_code: int, resource: int
) -> int:
    """Entry point of every Python function called from C."""
    try:
        func = _CALLBACKS[resource or 0]
        if num_args:
            raw = (_I64 * num_args).from_address(args)
            tcodes = (_INT * num_args).from_address(codes)
            py_args = [decode(raw[i], tcodes[i], owned=False) for i in range(num_args)]
        else:
            py_args = []
        store_return(ret, ret_code, func(*py_args), func.name)
        return 0
    except BaseException as exc:
        return set_pending(exc)


_TRAMPOLINE = TVMPackedCFunc(_trampoline)
_TRAMPOLINE_ADDR = ctypes.cast(_TRAMPOLINE, ctypes.c_void_p).value
_FINALIZER = TVMPackedCFuncFinalizer(_release_callback)
_FINALIZER_ADDR = ctypes.cast(_FINALIZER, ctypes.c_void_p).value

set_function_handles(function_to_handle, function_from_handle)
