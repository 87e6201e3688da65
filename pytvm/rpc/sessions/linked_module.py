r"""TVM's ``tvm.rpc.server.download_linked_module``: an uploaded object file or tar of them,
linked by the server into a shared object whose bytes go back to the client.

The file is read through the workspace (:meth:`Workspace.open_file`: inside the workspace, no
link followed); ``.o`` and ``.tar`` (TVM's ``export_library("x.tar")``: ``lib0.o``, or
``lib0.c`` compiled against pytvm's headers) are linked by the server's C compiler in a private
temporary folder, nothing is left in the workspace; ``.so`` and ``.dylib`` come back as they
are. A server without a C compiler says so.

Examples
--------
>>> from pytvm.rpc.sessions.workspace import Workspace
>>> with Workspace.create() as ws:
...     ws.write("lib.so", b"\x7fELF...")
...     download_linked_module(ws, "lib.so")[:4]
b'\x7fELF'
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ...ffi.errors import TVMError, TVMValueError
from ...ffi.libinfo import find_cc
from ...support.cc import create_shared
from ...support.tar import link_tar
from .workspace import Workspace

__all__ = ["download_linked_module"]

_WHAT = "download_linked_module"


def download_linked_module(ws: Workspace, path: str) -> bytes:
    """The bytes of a shared object linked from the workspace file ``path`` (see the module
    docstring); raises ``TVMValueError`` for another kind of file and ``TVMError`` when the
    server has no C compiler or linking fails.
    """
    suffix = Path(path).suffix
    if suffix not in (".o", ".tar", ".so", ".dylib"):
        raise TVMValueError(
            f"{_WHAT}: do not know how to link {path!r}; upload an object file (.o), a tar of "
            "them (.tar, as export_library writes it) or a shared object (.so)"
        )
    fd = ws.open_file(path, _WHAT)
    with os.fdopen(fd, "rb") as src:
        if suffix in (".so", ".dylib"):
            return src.read()
        if find_cc() is None:
            raise TVMError(
                f"{_WHAT}: this server has no C compiler to link {path!r} (looked for $CC, cc, "
                "gcc, clang); install gcc or clang on the server, or link on the client "
                "(export_library('x.so')) and upload the shared object"
            )
        with tempfile.TemporaryDirectory(prefix="pytvm-link-") as folder:
            output = Path(folder) / "linked.so"
            if suffix == ".tar":
                link_tar(src, output)
            else:
                obj = Path(folder) / "lib0.o"
                obj.write_bytes(src.read())
                create_shared(output, [str(obj), "-lm"])
            return output.read_bytes()
