"""A session worker process of the RPC server: its handshake, workspace and global functions.

The worker is forked by :class:`pytvm.rpc.server.Server` (directly for a connection, or ahead of
time as a spare that receives the connection over its control socket). It drops what it
inherited, prepares a fresh workspace with the server-env functions of ``spec`` section 7.2
registered, completes the RPC handshake (the server loop decides on the key over the control
socket), serves the session and reports how it ended through its exit code.
"""

from __future__ import annotations

import ctypes
import json
import os
import shutil
import signal
import socket
import stat
import struct
import tempfile
from collections.abc import Callable
from typing import Any

from ..ffi.errors import TVMOSError, TVMValueError
from ..ffi.registry import register_func
from ..runtime.module import Module, load_module
from .base import (
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    ProtocolError,
    recv_key,
    recvall,
    send_key,
    split_key_options,
)
from .channel import SocketChannel
from .endpoint import serve

__all__ = ["register_server_env", "resolve_path", "run_worker", "workspace_prefix"]

#: Worker exit codes: how a session ended, as the server loop reports it.
EXIT_SERVED, EXIT_ERROR, EXIT_REFUSED, EXIT_HANDSHAKE, EXIT_UNUSED = 0, 1, 2, 3, 4
HANDSHAKE_TIMEOUT = 30.0
_I32 = struct.Struct("<i")


def resolve_path(workspace: str, path: str, follow_last: bool = True) -> str:
    """The absolute path of ``path`` inside ``workspace``; refuses anything that leaves it.

    Parameters
    ----------
    workspace : str
        The session's workspace directory.
    path : str
        A path relative to the workspace, as a client sends it (``""`` is the workspace).
    follow_last : bool
        Whether a symbolic link in the last component is followed for the check (False for
        ``remove``, which deletes the link itself).

    Returns
    -------
    str
        The absolute path (symbolic links kept as the client named them).

    Raises
    ------
    TVMValueError
        For an absolute path, a ``..`` that climbs out of the workspace, or a path whose
        symbolic links resolve outside it.

    Examples
    --------
    >>> import tempfile
    >>> root = tempfile.mkdtemp()
    >>> resolve_path(root, "a/b.txt") == os.path.join(os.path.realpath(root), "a", "b.txt")
    True
    >>> try:
    ...     resolve_path(root, "../x")
    ... except ValueError as err:
    ...     print(type(err).__name__)
    TVMValueError
    """
    if not isinstance(path, str):
        raise TVMValueError(f"path must be a str relative to the workspace, got {path!r}")
    if "\0" in path:
        raise TVMValueError(f"path {path!r} contains a NUL byte")
    if os.path.isabs(path):
        raise TVMValueError(
            f"path {path!r} is absolute; RPC file operations take paths relative to the "
            "session workspace"
        )
    root = os.path.realpath(workspace)
    lexical = os.path.normpath(os.path.join(root, path))
    if not _inside(root, lexical):
        raise TVMValueError(
            f"path {path!r} climbs out of the session workspace with '..'; use a path "
            "relative to the workspace"
        )
    if follow_last:
        real = os.path.realpath(lexical)
    else:
        real = os.path.join(os.path.realpath(os.path.dirname(lexical)), os.path.basename(lexical))
    if not _inside(root, real):
        raise TVMValueError(
            f"path {path!r} resolves through a symbolic link to {real!r}, outside the session "
            "workspace; links may only point inside it"
        )
    return lexical


def _inside(root: str, path: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def register_server_env(workspace: str) -> None:
    """Register TVM's server-side file and test functions, bound to ``workspace``.

    Registers (replacing earlier ones) ``tvm.rpc.server.workpath``, ``upload``, ``download``,
    ``remove``, ``listdir`` and ``load_module``, plus ``rpc.test.echo`` and the ``rpc.test.*``
    helpers that TVM's Python server offers. Every path a client passes is relative to
    ``workspace``; see :func:`resolve_path` for what is refused.

    Parameters
    ----------
    workspace : str
        An existing directory owned by this session.

    Examples
    --------
    >>> import tempfile
    >>> from pytvm import get_global_func
    >>> register_server_env(tempfile.mkdtemp())
    >>> get_global_func("tvm.rpc.server.upload")("d/f.txt", b"hi")
    >>> get_global_func("tvm.rpc.server.download")("d/f.txt")
    b'hi'
    >>> get_global_func("tvm.rpc.server.listdir")("d")
    'f.txt'
    """
    root = os.path.realpath(workspace)
    if not os.path.isdir(root):
        raise TVMOSError(f"server workspace {workspace!r} is not a directory")

    def workpath(path: str) -> str:
        return resolve_path(root, path)

    def upload(path: str, data: bytes) -> None:
        target = resolve_path(root, path)
        if target == root:
            raise TVMValueError("upload needs a file name, got the workspace itself")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target, "wb") as out:
            out.write(bytes(data))

    def download(path: str) -> bytes:
        target = resolve_path(root, path)
        if not os.path.isfile(target):
            raise TVMOSError(f"download: no file {path!r} in the session workspace")
        with open(target, "rb") as src:
            return src.read()

    def remove(path: str) -> None:
        target = resolve_path(root, path, follow_last=False)
        if target == root:
            raise TVMValueError("remove: refusing to remove the session workspace itself")
        if os.path.isdir(target) and not os.path.islink(target):
            shutil.rmtree(target)
        elif os.path.lexists(target):
            os.unlink(target)
        else:
            raise TVMOSError(f"remove: no file {path!r} in the session workspace")

    def listdir(path: str) -> str:
        target = resolve_path(root, path)
        if not os.path.isdir(target):
            raise TVMOSError(f"listdir: {path!r} is not a directory in the session workspace")
        return ",".join(sorted(os.listdir(target)))

    def load(path: str) -> Module:
        return load_module(resolve_path(root, path))

    def raise_value_error(msg: str) -> None:
        raise ValueError(msg)

    functions: dict[str, Callable[..., Any]] = {
        "tvm.rpc.server.workpath": workpath,
        "tvm.rpc.server.upload": upload,
        "tvm.rpc.server.download": download,
        "tvm.rpc.server.remove": remove,
        "tvm.rpc.server.listdir": listdir,
        "tvm.rpc.server.load_module": load,
        "rpc.test.echo": lambda x: x,
        "rpc.test.addone": lambda x: x + 1,
        "rpc.test.add_to_lhs": lambda x: lambda y: x + y,
        "rpc.test.strcat": lambda name, x: f"{name}:{x}",
        "rpc.test.except": raise_value_error,
        "rpc.test.runtime_str_concat": lambda x, y: x + y,
    }
    for name, func in functions.items():
        register_func(name, func, override=True)


# ---------------------------------------------------------------------- worker process


def workspace_prefix(pid: int) -> str:
    """Name prefix of worker ``pid``'s workspace dirs in the temp dir (the server removes what
    a killed worker leaves behind)."""
    return f"pytvm-rpc-{pid}-"


def run_worker(
    ctrl: socket.socket,
    conn: socket.socket | None,
    client_key: str | None,
    libraries: list[str],
    keep: set[int],
) -> int:
    """Body of a forked session worker; returns its exit code.

    Parameters
    ----------
    ctrl : socket.socket
        The ``SOCK_SEQPACKET`` control socket to the server loop (JSON messages).
    conn : socket.socket or None
        The client connection; None for a spare, which receives it (and the client key, when
        the handshake was done already) over ``ctrl``.
    client_key : str or None
        The client's key if the handshake is done (proxy mode), else None.
    libraries : list of str
        Shared libraries to load with ``RTLD_GLOBAL``.
    keep : set of int
        Inherited descriptors to keep open (``ctrl`` and ``conn``).
    """
    after_fork(keep)
    try:
        ctrl.send(b'{"ready": true}')  # nothing inherited is held any more
    except OSError:  # the server is gone already
        return EXIT_UNUSED
    workspace = tempfile.mkdtemp(prefix=workspace_prefix(os.getpid()))
    try:
        os.chdir(workspace)
        for lib in libraries:
            ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
        register_server_env(workspace)
        if conn is None:  # a spare: wait for the server loop to hand over a connection
            msg, fds, _, _ = socket.recv_fds(ctrl, 1 << 16, 1)
            if not fds:
                return EXIT_UNUSED
            conn = socket.socket(fileno=fds[0])
            client_key = json.loads(msg)["client_key"]
        if client_key is None:
            code, client_key = _handshake(conn, ctrl)
            if code != EXIT_SERVED:
                return code
        head, options = split_key_options(client_key)
        options.pop("token", None)  # served code can see the remote key; keep the token out
        remote_key = " ".join([head, *(f"-{k}={v}" for k, v in options.items())])
        serve(SocketChannel(conn), "server", remote_key=remote_key)
        try:
            ctrl.send(b'{"done": true}')  # frees the tracker slot before the cleanup below
        except OSError:
            pass
    finally:
        os.chdir("/")
        shutil.rmtree(workspace, ignore_errors=True)
    return EXIT_SERVED


def _handshake(conn: socket.socket, ctrl: socket.socket) -> tuple[int, str]:
    """Read the client's magic and key, let the server loop decide, answer the client."""
    conn.settimeout(HANDSHAKE_TIMEOUT)
    try:
        (magic,) = _I32.unpack(recvall(conn, 4))
        if magic != RPC_MAGIC:
            return EXIT_HANDSHAKE, ""
        client_key = recv_key(conn)
        ctrl.send(json.dumps({"key": client_key}).encode())
        reply = json.loads(ctrl.recv(1 << 16) or b"{}")
        if not reply.get("ok"):
            conn.sendall(_I32.pack(RPC_CODE_MISMATCH))
            return EXIT_REFUSED, client_key
        send_key(conn, RPC_MAGIC, reply["server_key"])
    except (OSError, ProtocolError, ValueError):
        return EXIT_HANDSHAKE, ""
    conn.settimeout(None)
    return EXIT_SERVED, client_key


def after_fork(keep: set[int]) -> None:
    """Make a freshly forked worker independent of the server's threads and sockets."""
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGINT, signal.SIGTERM})
    try:
        os.setpgid(0, 0)  # its own group: a timeout kills whatever the session started
    except OSError:
        pass
    # Locks another thread held at fork time are re-created by os.register_at_fork handlers
    # in the modules that own them (the registry, the session table).
    _close_inherited_sockets(keep)


def _close_inherited_sockets(keep: set[int]) -> None:
    """Replace every inherited socket but ``keep`` with /dev/null.

    Other sessions' connections, listening sockets and in-process clients' sockets must not stay
    open here: a peer would otherwise never see the other end close. The fd numbers stay taken,
    so a stale Python socket object closing later cannot hit a reused descriptor.
    """
    try:
        fds = [int(name) for name in os.listdir("/proc/self/fd")]
    except OSError:
        return
    devnull = os.open(os.devnull, os.O_RDWR | os.O_CLOEXEC)
    try:
        for fd in fds:
            if fd in keep or fd == devnull:
                continue
            try:
                if stat.S_ISSOCK(os.fstat(fd).st_mode):
                    os.dup2(devnull, fd, inheritable=False)
            except OSError:
                continue
    finally:
        os.close(devnull)
