"""The functions a served session offers, bound to its workspace: TVM's ``tvm.rpc.server.*``
file functions, the module loaders, ``rpc.PopenSession`` and ``rpc.CreatePipeClient``, confined
to the workspace.

What a remote client may touch (registered in the worker only; this process's own
``load_module(path)`` and ``rpc.PopenSession(path)`` stay unrestricted elsewhere):

* Files: every path is resolved beneath the workspace
  (:class:`~pytvm.rpc.sessions.workspace.Workspace`), for the ``tvm.rpc.server.*`` functions
  (``download_linked_module`` links in a private folder: :mod:`.linked_module`) and for
  ``runtime.module.loadfile_*`` alike.
* ``rpc.PopenSession(path)``: ``path`` must name an executable regular file inside the
  workspace; it is run through the descriptor that was checked.
* ``rpc.PopenSession(bytes)`` (TVM's convention: the executable's content) is written into the
  workspace with mode 0700 and run only when the server allows it (``allow_popen_binary``,
  ``pytvm rpc server --allow-popen-binary``; off by default): otherwise any client could run any
  program it sends. A client can never make a file executable through ``upload``.
* ``rpc.PopenSession(path)`` with an absolute ``path`` runs it only when the server lists that
  executable (``popen_executables``, ``pytvm rpc server --popen-executable PATH``): the device
  binaries a board serves.
* ``rpc.CreatePipeClient(path, *args)`` (TVM's name underneath ``PopenSession``) runs what
  ``rpc.PopenSession(path, *args)`` runs, and nothing else: no ``PATH`` look-up, no bytes.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from ...ffi.errors import TVMValueError
from ...ffi.registry import get_global_func, list_global_func_names
from ...runtime.module import Module
from .forwarding_session import popen_session
from .linked_module import download_linked_module
from .session import SessionModule
from .workspace import Workspace

__all__ = ["confined_functions", "file_functions"]

_LOADER_PREFIX = "runtime.module.loadfile_"


def file_functions(
    ws: Workspace, loaders: Mapping[str, Callable[[str], Any]] | None = None
) -> dict[str, Callable[..., Any]]:
    """TVM's ``tvm.rpc.server.*`` file functions bound to ``ws``.

    Parameters
    ----------
    ws : Workspace
        Where every path a client passes is resolved.
    loaders : mapping, optional
        ``runtime.module.loadfile_<ext>`` name -> loader used by ``load_module``; by default the
        global function of that name at call time.

    Examples
    --------
    >>> with Workspace.create() as ws:
    ...     funcs = file_functions(ws)
    ...     funcs["tvm.rpc.server.upload"]("d/f.txt", b"hi")
    ...     funcs["tvm.rpc.server.download"]("d/f.txt"), funcs["tvm.rpc.server.listdir"]("d")
    (b'hi', 'f.txt')
    """

    def upload(path: str, data: bytes) -> None:
        ws.write(path, bytes(data))

    def load(path: str) -> Module:
        return ws.load_module(path, _loader(loaders, path, Path(path).suffix[1:]))

    return {
        "tvm.rpc.server.workpath": ws.relpath,
        "tvm.rpc.server.upload": upload,
        "tvm.rpc.server.download": ws.read,
        "tvm.rpc.server.remove": ws.remove,
        "tvm.rpc.server.listdir": lambda path: ",".join(ws.listdir(path)),
        "tvm.rpc.server.load_module": load,
        "tvm.rpc.server.download_linked_module": lambda path: download_linked_module(ws, path),
    }


def _loader(
    loaders: Mapping[str, Callable[[str], Any]] | None, path: str, fmt: str
) -> Callable[[str], Any]:
    name = _LOADER_PREFIX + fmt
    found = loaders.get(name) if loaders is not None else get_global_func(name, True)
    if found is None:
        raise TVMValueError(
            f"load_module: unknown module format {fmt!r} of {path!r}; the server has no '{name}'"
        )
    return _unconfined(found)


def confined_functions(
    ws: Workspace, allow_popen_binary: bool = False, popen_executables: Sequence[str] = ()
) -> dict[str, Callable[..., Any]]:
    """The loaders, ``rpc.PopenSession`` and ``rpc.CreatePipeClient`` as a server worker offers
    them: confined to ``ws`` (see this module's docstring). Binds the loaders registered now.
    """
    loaders = {
        name: _unconfined(get_global_func(name))
        for name in list_global_func_names()
        if name.startswith(_LOADER_PREFIX)
    }
    funcs: dict[str, Callable[..., Any]] = {
        name: _ConfinedLoader(ws, loader) for name, loader in loaders.items()
    }
    funcs.update(file_functions(ws, loaders))
    counter = itertools.count()
    listed = {os.path.realpath(path) for path in popen_executables}

    def popen(binary: Any, *argv: Any) -> SessionModule:
        if isinstance(binary, str) and os.path.realpath(binary) in listed:
            return SessionModule(popen_session(binary, *[str(a) for a in argv]))
        if isinstance(binary, str) and Path(binary).is_absolute() and not _inside(ws.path, binary):
            allowed = ", ".join(sorted(listed)) or "none"
            raise TVMValueError(
                f"rpc.PopenSession: {binary!r} is outside the session workspace and not one of "
                f"the executables this server lets clients start (allowed: {allowed}); start "
                "the server with Server(popen_executables=[...]) or "
                "'pytvm rpc server --popen-executable PATH', or upload the executable"
            )
        if isinstance(binary, (bytes, bytearray)):
            if not allow_popen_binary:
                raise TVMValueError(
                    "rpc.PopenSession: this server does not run executables sent by clients; "
                    "start it with Server(allow_popen_binary=True) or "
                    "'pytvm rpc server --allow-popen-binary', or upload nothing and name an "
                    "executable already in the session workspace"
                )
            name = _fresh_name(ws, counter)
            ws.write(name, bytes(binary), mode=0o700, exclusive=True)
        elif isinstance(binary, str):
            name = binary
        else:
            raise TVMValueError(
                f"rpc.PopenSession: expected a path in the session workspace or the "
                f"executable's bytes, got {type(binary).__name__}"
            )
        fd = ws.open_file(name, "rpc.PopenSession")
        try:
            if not os.access(f"/proc/self/fd/{fd}", os.X_OK):
                raise TVMValueError(f"rpc.PopenSession: {name!r} is not an executable file")
            session = popen_session(
                f"/proc/self/fd/{fd}", *[str(a) for a in argv], pass_fds=(fd,), label=name
            )
        finally:
            os.close(fd)
        return SessionModule(session)

    def pipe_client(*cmd: Any) -> SessionModule:  # TVM's name, the same executables only
        if not cmd or not isinstance(cmd[0], str):
            raise TVMValueError(
                "rpc.CreatePipeClient: expected the path of an executable (in the session "
                "workspace or listed by the server), then its arguments"
            )
        return popen(*cmd)

    funcs["rpc.PopenSession"] = popen
    funcs["rpc.CreatePipeClient"] = pipe_client
    return funcs


def _inside(root: str, path: str) -> bool:
    full = os.path.abspath(path)  # noqa: PTH100 - lexical: '..' folded before the check
    return os.path.commonpath([root, full]) == root


class _ConfinedLoader:
    """A loader confined to a workspace; ``loader`` is the one it confines."""

    def __init__(self, ws: Workspace, loader: Callable[[str], Any]) -> None:
        self.ws = ws
        self.loader = loader

    def __call__(self, path: str) -> Module:
        return self.ws.load_module(str(path), self.loader)


def _unconfined(loader: Callable[[str], Any]) -> Callable[[str], Any]:
    """The loader itself, also when it is registered confined to another workspace (this
    process registered a server environment before, as ``rpc.server._server_env`` does).
    """
    inner = getattr(loader, "callable", loader)
    return inner.loader if isinstance(inner, _ConfinedLoader) else loader


def _fresh_name(ws: Workspace, counter: itertools.count[int]) -> str:
    names = set(ws.listdir(""))
    return next(f"popen-{n}.bin" for n in counter if f"popen-{n}.bin" not in names)
