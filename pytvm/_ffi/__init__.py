"""TVM v0.18's ``tvm._ffi`` paths (``tvm._ffi.base.TVMError``, ``tvm._ffi.register_func``) over
pytvm's FFI (:mod:`pytvm.ffi`, TVM 0.27's ``tvm_ffi``), for code written against TVM up to 0.18.

Examples
--------
>>> import pytvm
>>> from pytvm import _ffi
>>> _ffi.base.TVMError is pytvm.ffi.errors.TVMError
True
"""

from __future__ import annotations

from . import base, registry
from .registry import get_global_func, list_global_func_names, register_func, register_object

__all__ = [
    "base",
    "get_global_func",
    "list_global_func_names",
    "register_func",
    "register_object",
    "registry",
]
