"""A session worker process of the RPC server: its workspace and global functions.

The worker is forked by the server's fork server (:mod:`pytvm.rpc.services.fork_server`), ahead
of time as a spare or for a connection waiting for one. It runs the ``server_init_callback``,
prepares a fresh workspace with the server-env functions of ``spec`` section 7.2 registered,
receives its connection (whose handshake the server loop completed) over its control socket,
serves the session and reports how it ended through its exit code.

What a remote client may touch is what :mod:`pytvm.rpc.sessions.workspace_functions` offers,
registered in the worker only (this process's own ``load_module(path)`` and
``rpc.PopenSession(path)`` stay unrestricted elsewhere).
"""

from __future__ import annotations

import ctypes
import json
import logging
import os
import shutil
import signal
import socket
import tempfile
from collections.abc import Callable, Sequence

from ...ffi.elf_check import check_shared_object
from ...ffi.function import PackedFunc
from ...ffi.registry import (
    get_global_func,
    list_global_func_names,
    register_func,
    remove_global_func,
)
from ..sessions.endpoint import serve
from ..sessions.server_testing import remote_test_functions
from ..sessions.workspace import Workspace, resolve_path
from ..sessions.workspace_functions import confined_functions
from ..wire.base import split_key_options
from ..wire.error_paths import add_path_root
from ._idle_channel import session_channel

__all__ = [
    "ServerEnv",
    "open_server_env",
    "register_server_env",
    "resolve_path",
    "run_worker",
    "warn_if_root",
    "workspace_prefix",
]

#: Worker exit codes: how a session ended, as the server loop reports it (a worker that fails
#: in the init callback, the workspace setup or the session exits with ``EXIT_ERROR``).
EXIT_SERVED, EXIT_ERROR, EXIT_UNUSED = 0, 1, 2
HANDSHAKE_TIMEOUT = 30.0
logger = logging.getLogger("pytvm.rpc.server")


def register_server_env(
    workspace: str | Workspace,
    allow_popen_binary: bool = False,
    popen_executables: Sequence[str] = (),
) -> Workspace:
    """Register the server's global functions, bound to ``workspace`` (replacing earlier ones).

    Registers TVM's ``tvm.rpc.server.*`` file functions (``workpath``, ``upload``,
    ``download``, ``remove``, ``listdir``, ``load_module``), confined versions of every
    ``runtime.module.loadfile_*`` and of ``rpc.PopenSession``, and the test functions of
    :mod:`pytvm.rpc.sessions.server_testing`. Error text sent to clients names files in the
    workspace relative to it. Meant for a process that serves one session (a server worker).

    Parameters
    ----------
    workspace : str or Workspace
        An existing directory owned by this session.
    allow_popen_binary : bool
        Whether ``rpc.PopenSession`` runs executables sent as bytes.
    popen_executables : sequence of str
        Absolute paths of executables ``rpc.PopenSession`` may start outside the workspace.

    Returns
    -------
    Workspace
        The workspace the functions are bound to.

    See Also
    --------
    open_server_env : registers these functions and puts back what they replaced when closed.
    """
    ws = workspace if isinstance(workspace, Workspace) else Workspace(workspace)
    add_path_root(ws.path)
    functions = {
        **remote_test_functions(),
        **confined_functions(ws, allow_popen_binary, popen_executables),
    }
    for name, func in functions.items():
        register_func(name, func, override=True)
    return ws


class ServerEnv:
    """What :func:`open_server_env` returns (TVM's temporary directory of ``_server_env``):
    the workspace the server's functions are bound to, while they are registered.

    ``close()``, leaving a ``with`` block, or dropping the last reference removes the workspace
    (when it made it) and puts back the global functions it replaced, so this process's own
    ``load_module`` is no longer confined to the workspace. (The registered functions refer to
    the workspace, not to this object, so dropping this object is what ends them.)
    """

    def __init__(self, workspace: Workspace, replaced: dict[str, PackedFunc | None]) -> None:
        self.workspace = workspace
        self.path = workspace.path
        self._replaced = replaced

    def relpath(self, name: str) -> str:
        """The absolute path of ``name`` inside the workspace (TVM's ``TempDirectory.relpath``)."""
        return self.workspace.relpath(name)

    def listdir(self, path: str = ".") -> list[str]:
        """The names in ``path``, a folder of the workspace."""
        return self.workspace.listdir(path)

    def close(self) -> None:
        """Remove the workspace if it was made here and put back what was replaced; idempotent."""
        replaced, self._replaced = self._replaced, {}
        self.workspace.close()
        for name, func in replaced.items():
            if func is not None:
                register_func(name, func, override=True)
            elif get_global_func(name, allow_missing=True) is not None:
                remove_global_func(name)

    def __enter__(self) -> ServerEnv:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:  # interpreter shutdown: modules already torn down
            pass


def open_server_env(
    load_library: str | Sequence[str] | None = None, work_path: str | None = None
) -> ServerEnv:
    """TVM's ``rpc.server._server_env``: load ``load_library`` (``RTLD_GLOBAL``) and register
    the server's functions in this process on ``work_path`` (default: a new temporary
    directory). The :class:`ServerEnv` returned ends them: see its ``close()``.

    Examples
    --------
    >>> from pytvm import get_global_func
    >>> with open_server_env() as env:
    ...     get_global_func("tvm.rpc.server.upload")("d/f.txt", b"hi")
    ...     print(get_global_func("tvm.rpc.server.download")("d/f.txt"))
    ...     print(get_global_func("tvm.rpc.server.listdir")("d"))
    b'hi'
    f.txt
    """
    libs = load_library.split(":") if isinstance(load_library, str) else list(load_library or ())
    for lib in libs:
        if lib:
            path = os.path.abspath(lib)  # noqa: PTH100 - lexical: a linked library keeps its name
            check_shared_object(path)  # a damaged file raises here instead of crashing
            ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    ws = Workspace(work_path) if work_path else Workspace.create("pytvm-server-env-")
    before = {name: get_global_func(name) for name in list_global_func_names()}
    register_server_env(ws)
    replaced = {
        name: before.get(name)
        for name in list_global_func_names()
        if get_global_func(name) is not before.get(name)
    }
    return ServerEnv(ws, replaced)


# ---------------------------------------------------------------------- worker process


def warn_if_root(euid: int | None = None) -> bool:
    """Log a warning if the server runs as root (``euid``: default this process's); returns
    whether it did. Every client may load code into a session, so sessions run with the
    server's rights.
    """
    if euid is None:
        euid = os.geteuid() if hasattr(os, "geteuid") else -1
    if euid != 0:
        return False
    logger.warning(
        "the RPC server runs as root: every client that connects can run code with root "
        "rights (load_module loads what it uploads); run it as an unprivileged user"
    )
    return True


def workspace_prefix(pid: int) -> str:
    """Name prefix of worker ``pid``'s workspace dirs in the temp dir (the server removes what
    a killed worker leaves behind).
    """
    return f"pytvm-rpc-{pid}-"


def run_worker(
    ctrl: socket.socket,
    init: Callable[[], object] | None = None,
    allow_popen_binary: bool = False,
    popen_executables: Sequence[str] = (),
    idle_timeout: float | None = None,
) -> int:
    """Body of a session worker the fork server just forked; returns its exit code.

    Parameters
    ----------
    ctrl : socket.socket
        The ``SOCK_SEQPACKET`` control socket to the server loop (JSON messages). The client
        connection arrives on it (``SCM_RIGHTS``) with the client's key.
    init : callable, optional
        The server's ``server_init_callback``, called first; an exception ends the worker.
    allow_popen_binary : bool
        Whether ``rpc.PopenSession`` runs executables a client sends as bytes.
    popen_executables : sequence of str
        Absolute paths of executables ``rpc.PopenSession`` may start outside the workspace.
    idle_timeout : float, optional
        End the session when the client sends no complete request for this many seconds
        (see :mod:`pytvm.rpc.services._idle_channel`).
    """
    after_fork()
    if init is not None:
        init()
    try:
        ctrl.send(b'{"ready": true}')
    except OSError:  # the server is gone already
        return EXIT_UNUSED
    workspace = tempfile.mkdtemp(prefix=workspace_prefix(os.getpid()))
    try:
        os.chdir(workspace)
        register_server_env(workspace, allow_popen_binary, popen_executables)
        msg, fds, _, _ = socket.recv_fds(ctrl, 1 << 16, 1)  # wait for a connection
        if not fds:
            return EXIT_UNUSED
        conn = socket.socket(fileno=fds[0])
        head, options = split_key_options(json.loads(msg)["client_key"])
        options.pop("token", None)  # served code can see the remote key; keep the token out
        remote_key = " ".join([head, *(f"-{k}={v}" for k, v in options.items())])
        serve(session_channel(conn, idle_timeout), "server", remote_key=remote_key)
        try:
            ctrl.send(b'{"done": true}')  # frees the tracker slot before the cleanup below
        except OSError:
            pass
    finally:
        os.chdir("/")
        shutil.rmtree(workspace, ignore_errors=True)
    return EXIT_SERVED


def after_fork() -> None:
    """Make a freshly forked worker independent of the fork server: default signal handling, and
    its own process group (a timeout kills whatever the session started).
    """
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        os.setpgid(0, 0)
    except OSError:
        pass
