"""``pytvm.error``: TVM 0.27's error classes (``tvm.error``) under their TVM names.

Each name is the class pytvm raises, so ``pytest.raises(pytvm.error.RPCError)`` or ``except
tvm.error.InternalError`` written for TVM catches what pytvm raises; every one is also a
:class:`TVMError` and, where TVM's is, a built-in kind (``AttributeError``, ``TimeoutError``...).

Examples
--------
>>> import pytvm.error
>>> issubclass(pytvm.error.RPCSessionTimeoutError, (pytvm.error.RPCError, TimeoutError))
True
"""

from __future__ import annotations

from .ffi.errors import (
    DiagnosticError,
    InternalError,
    OpAttributeInvalid,
    OpAttributeRequired,
    OpAttributeUnImplemented,
    OpError,
    OpNotImplemented,
    RPCError,
    RPCSessionBrokenError,
    RPCSessionTimeoutError,
    TVMError,
    register_error,
)

__all__ = [
    "DiagnosticError",
    "InternalError",
    "OpAttributeInvalid",
    "OpAttributeRequired",
    "OpAttributeUnImplemented",
    "OpError",
    "OpNotImplemented",
    "RPCError",
    "RPCSessionBrokenError",
    "RPCSessionTimeoutError",
    "TVMError",
    "register_error",
]
