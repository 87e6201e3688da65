"""TVM v0.18's ``tvm._ffi.registry``: the global function registry and object registration."""

from __future__ import annotations

from ..ffi.object import register_object
from ..ffi.registry import get_global_func, list_global_func_names, register_func

__all__ = ["get_global_func", "list_global_func_names", "register_func", "register_object"]
