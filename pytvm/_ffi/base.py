"""TVM v0.18's ``tvm._ffi.base``: the error class every FFI failure derives from."""

from __future__ import annotations

from ..ffi.errors import TVMError

__all__ = ["TVMError"]
