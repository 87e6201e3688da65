"""TVM's ``tvm.rpc._ffi_api`` path: the global functions named ``rpc.<name>`` as attributes
(``_ffi_api.LocalSession`` is ``get_global_func("rpc.LocalSession")``).

Examples
--------
>>> from pytvm import PackedFunc
>>> from pytvm.rpc import _ffi_api
>>> isinstance(_ffi_api.LocalSession, PackedFunc)
True
"""

from __future__ import annotations

from ..ffi import PackedFunc
from ..ffi.registry import get_global_func

__all__: list[str] = []


def __getattr__(name: str) -> PackedFunc:
    func = get_global_func(f"rpc.{name}", allow_missing=True)
    if func is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r} (no rpc.{name})")
    return func
