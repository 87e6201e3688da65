"""TVM's ``tvm.rpc.testing`` path: importing it registers the RPC test functions
(``rpc.test.addone``, ``rpc.test.strcat``, ``testing.echo`` ...) as global functions of this
process, as TVM's module does. A server registers them in every session without this import.

Examples
--------
>>> import pytvm
>>> import pytvm.rpc.testing
>>> pytvm.get_global_func("rpc.test.addone")(1)
2
"""

from __future__ import annotations

from ..ffi.registry import get_global_func, register_func
from .sessions.server_testing import remote_test_functions

__all__: list[str] = []

for _name, _func in remote_test_functions().items():
    if get_global_func(_name, allow_missing=True) is None:
        register_func(_name, _func)
