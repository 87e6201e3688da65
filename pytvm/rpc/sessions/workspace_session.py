"""``WorkspaceSession``: a local session with a temporary workspace of its own, offering the
server's file and test functions (what ``rpc.LocalSession()`` returns, as in TVM).

Its functions are looked up before this process's global functions and are not registered
globally, so two local sessions never share a workspace. Loading and starting programs through
it are not confined (they run in this process, with its rights, like ``load_module(path)``);
only the file functions' paths are resolved beneath the workspace.
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

from ...ffi.function import PyFunction
from ..wire.protocol import Handle, RPCCode
from .local_serving_session import LocalServingSession
from .server_testing import remote_test_functions
from .workspace import Workspace
from .workspace_functions import file_functions

__all__ = ["WorkspaceSession"]


class WorkspaceSession(LocalServingSession):
    """A :class:`LocalServingSession` whose ``tvm.rpc.server.*`` functions work in its own temporary
    directory (removed on :meth:`close` or when the session is collected).

    Examples
    --------
    >>> sess = WorkspaceSession()
    >>> upload = sess.functions["tvm.rpc.server.upload"]
    >>> upload("dat.bin", b"blob")
    >>> sess.functions["tvm.rpc.server.download"]("dat.bin")
    b'blob'
    >>> sess.close()
    """

    name = "local"

    def __init__(self) -> None:
        super().__init__()
        self.workspace = Workspace.create("pytvm-local-")
        self._finalizer = weakref.finalize(self, self.workspace.close)
        self.functions: dict[str, PyFunction] = {
            name: PyFunction(func, name)
            for name, func in {**remote_test_functions(), **file_functions(self.workspace)}.items()
        }

    def syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """Run syscall ``code``; a function saved in the workspace answers a lookup."""
        if code == RPCCode.GET_GLOBAL_FUNC and len(args) == 1 and isinstance(args[0], str):
            func = self.functions.get(str(args[0]))
            if func is not None:
                return Handle(self.export(func))
        return super().syscall(code, args)

    def close(self) -> None:
        """End the session and remove its workspace."""
        super().close()
        self._finalizer()
