"""``ForwardingSession``: a session whose requests go over an endpoint to the next hop.

It is what ``pytvm.rpc.connect`` returns underneath, and what the session constructors
``rpc.Connect``, ``rpc.PopenSession`` and TVM's ``rpc.CreatePipeClient`` build on a server --
there it becomes the serving session, so every request the server receives is forwarded
unchanged (nested sessions). Handles dropped by the garbage collector are queued and freed,
pipelined, before the next request, so a collector never writes into the middle of another
request.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from ...ffi.device import Device
from ...ffi.errors import TVMValueError
from ...ffi.registry import register_func
from ..wire.base import (
    RPC_CODE_DUPLICATE,
    RPC_CODE_MISMATCH,
    RPC_MAGIC,
    RPCError,
    recv_key,
    recvall,
    refusal_causes,
    send_key,
    set_nodelay,
)
from ..wire.channel import Channel, SocketChannel, popen_pipe, reap
from ..wire.protocol import Handle, RPCCode, TensorDesc
from .endpoint import Endpoint
from .session import SessionBase, SessionModule

__all__ = ["ForwardingSession", "connect_channel", "popen_session", "socket_session"]


class ForwardingSession(SessionBase):
    """Forward requests through ``endpoint``; ``process`` (if any) is the peer, reaped on close."""

    forwards = True

    def __init__(
        self, endpoint: Endpoint, name: str, process: subprocess.Popen[bytes] | None = None
    ) -> None:
        self.endpoint = endpoint
        self.name = name
        self.process = process
        self._free_handles: list[int] = []
        self._free_data: list[tuple[Device, int]] = []
        self._closed = False
        self._close_lock = threading.Lock()

    def _flush_frees(self) -> None:
        if self._free_handles:
            handles, self._free_handles = self._free_handles, []
            self.endpoint.syscalls_pipelined(RPCCode.FREE_HANDLE, [[Handle(h)] for h in handles])
        if self._free_data:
            blocks, self._free_data = self._free_data, []
            for dev, ptr in blocks:
                self.endpoint.syscall(RPCCode.DEV_FREE_DATA, [dev, Handle(ptr)])

    def call_func(self, handle: int, args: Sequence[Any]) -> list[Any]:
        """Call remote function ``handle`` with ``args`` (pending frees go first)."""
        if self._free_handles or self._free_data:
            self._flush_frees()
        return self.endpoint.call(handle, args)

    def syscall(self, code: RPCCode, args: Sequence[Any]) -> Any:
        """Run syscall ``code`` on the peer; its result."""
        self._flush_frees()
        return self.endpoint.syscall(code, args)

    def copy_to_remote(self, desc: TensorDesc, data: memoryview) -> None:
        """Send ``data`` into the remote tensor ``desc``."""
        self._flush_frees()
        self.endpoint.copy_to_remote(desc, data)

    def copy_to_remote_streamed(
        self, desc: TensorDesc, nbytes: int, fill: Callable[[memoryview], None]
    ) -> None:
        """Forward a copy of ``nbytes`` into ``desc`` whose data ``fill`` receives piece by piece
        (a server's incoming kCopyToRemote): each piece goes on to the next hop as it arrives.
        """
        self._flush_frees()
        self.endpoint.copy_to_remote_streamed(desc, nbytes, fill)

    def copy_from_remote_streamed(
        self,
        desc: TensorDesc,
        nbytes: int,
        begin: Callable[[], None],
        sink: Callable[[memoryview], None],
    ) -> None:
        """Read ``nbytes`` of remote tensor ``desc`` and hand them on as they arrive (a server
        answering a kCopyFromRemote): ``begin()`` once the next hop accepted the copy, then
        ``sink(piece)`` per piece.
        """
        self._flush_frees()
        self.endpoint.copy_from_remote_streamed(desc, nbytes, begin, sink)

    def copy_from_remote(self, desc: TensorDesc, nbytes: int, out: memoryview | None = None) -> Any:
        """``nbytes`` of remote tensor ``desc``, into ``out`` or a new buffer."""
        self._flush_frees()
        if out is None:
            out = memoryview(bytearray(nbytes))
        self.endpoint.copy_from_remote(desc, out[:nbytes])
        return out

    def free_handle_later(self, handle: int) -> None:
        """Queue remote ``handle`` for freeing with the next request."""
        if not self._closed:
            self._free_handles.append(handle)  # list.append is atomic: safe from __del__

    def free_data(self, dev: Device, ptr: int) -> None:
        """Queue the remote allocation ``ptr`` on ``dev`` for freeing."""
        if not self._closed:
            self._free_data.append((self._unmask(dev), ptr))

    @property
    def closed(self) -> bool:
        """Whether the session ended (closed here or by the peer)."""
        return self._closed or self.endpoint.closed

    def close(self) -> None:
        """Free what is still queued, send kShutdown and release the channel (idempotent).

        At interpreter exit the queued frees are dropped instead (the peer frees everything of
        a session that ends): their replies may never come, e.g. from a server thread of this
        process that exit has already stopped.
        """
        with self._close_lock:
            if self._closed:
                return
            try:
                if not self.endpoint.closed and not sys.is_finalizing():
                    self._flush_frees()
            except (OSError, RPCError):
                pass
            finally:
                self._closed = True
                self.endpoint.shutdown()
                if self.process is not None:
                    reap(self.process)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass


def connect_channel(
    channel: Channel,
    name: str,
    constructor_args: Sequence[Any] = (),
    remote_key: str = "",
    process: subprocess.Popen[bytes] | None = None,
) -> ForwardingSession:
    """A client session over an open ``channel``: sends kInitServer with ``constructor_args``."""
    endpoint = Endpoint(channel, name, remote_key)
    session = ForwardingSession(endpoint, name, process)
    try:
        endpoint.init_server(list(constructor_args))
    except BaseException:
        session.close()
        raise
    return session


def socket_session(
    host: str,
    port: int,
    key: str,
    constructor_args: Sequence[Any] = (),
    timeout: float | None = None,
) -> ForwardingSession:
    """Dial ``host:port``, handshake with ``key`` (already ``client:``-prefixed), init.

    ``timeout`` (seconds; None: none) bounds the dial, the handshake and the session's
    initialisation, so a server that accepts and then stops answering is an error, not a hang;
    the session's calls are unbounded after that, as TVM's.
    """
    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except OSError as err:
        raise ConnectionError(f"cannot connect to RPC server {host}:{port}: {err}") from err
    set_nodelay(sock)
    try:
        send_key(sock, RPC_MAGIC, key)
        (code,) = struct.unpack("<i", recvall(sock, 4))
        shown = re.sub(r"-token=\S*", "-token=***", key)  # never echo a secret into logs
        if code == RPC_CODE_MISMATCH:
            raise RPCError(
                f"{host}:{port}: cannot find a server that matches key {shown!r}; possible "
                f"causes: {refusal_causes(key)}"
            )
        if code == RPC_CODE_DUPLICATE:
            raise RPCError(f"{host}:{port}: the proxy already has a server with key {shown!r}")
        if code != RPC_MAGIC:
            raise RPCError(f"{host}:{port} is not a TVM RPC server (reply magic {code:#x})")
        remote_key = recv_key(sock)
    except TimeoutError as err:
        sock.close()
        raise RPCError(
            f"{host}:{port} accepted the connection but did not answer the handshake within "
            f"{timeout:.3g} s"
        ) from err
    except BaseException:
        sock.close()
        raise
    try:
        session = connect_channel(
            SocketChannel(sock), f"{host}:{port}", constructor_args, remote_key=remote_key
        )
    except TimeoutError as err:
        raise RPCError(
            f"{host}:{port} did not initialise the session within {timeout:.3g} s"
        ) from err
    sock.settimeout(None)
    return session


def popen_session(
    binary: str | bytes | os.PathLike[str],
    *argv: str,
    pass_fds: Sequence[int] = (),
    label: str | None = None,
    timeout: float | None = None,
) -> ForwardingSession:
    """Start ``binary <read_fd> <write_fd>`` and talk to it over the two pipes (no handshake).

    ``binary`` may be a path or the executable's bytes (written to a private temp file that is
    run through its descriptor and removed at once). ``pass_fds`` are inherited by the process;
    ``label`` names it in messages (default: the file name); ``timeout`` (seconds) bounds each
    wait for the process's reply (None: no bound, as TVM's ``PopenSession``).
    """
    if isinstance(binary, (bytes, bytearray)):
        fd, path = tempfile.mkstemp(prefix="pytvm-popen-")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(binary)
            Path(path).chmod(0o700)
            exec_fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)  # none open for writing
        finally:
            Path(path).unlink()
        try:
            return popen_session(
                f"/proc/self/fd/{exec_fd}",
                *argv,
                pass_fds=(*pass_fds, exec_fd),
                label=label or "executable sent as bytes",
                timeout=timeout,
            )
        finally:
            os.close(exec_fd)
    path = os.fspath(binary)
    if not os.path.isfile(path):  # noqa: PTH113 - any stat failure reads as a missing file
        raise TVMValueError(f"rpc.PopenSession: {path!r} does not exist (or is not a file)")
    if not os.access(path, os.X_OK):
        raise TVMValueError(f"rpc.PopenSession: {path!r} is not an executable file")
    channel, proc = popen_pipe([path, *argv], pass_fds, timeout)
    name = label or Path(path).name
    return connect_channel(channel, f"process {proc.pid} ({name})", process=proc)


@register_func("rpc.Connect")
def _connect_constructor(url: str, port: int, key: str = "", *rest: Any) -> SessionModule:
    """TVM's nested-session constructor: ``[url, port, key, enable_logging, *init_args]``."""
    init = list(rest[1:]) if rest else []
    return SessionModule(socket_session(str(url), int(port), "client:" + str(key), init))


@register_func("rpc.PopenSession")
def _popen_constructor(binary: Any, *argv: Any) -> SessionModule:
    return SessionModule(popen_session(binary, *[str(a) for a in argv]))


@register_func("rpc.CreatePipeClient")
def create_pipe_client(*cmd: Any) -> SessionModule:
    """TVM's ``rpc.CreatePipeClient(cmd...)``: start the command ``cmd`` (its first word looked
    up on ``PATH`` when it has no ``/``, as ``execvp``) with the two pipe descriptors appended,
    and return the session over the pipes.
    """
    if not cmd:
        raise TVMValueError("rpc.CreatePipeClient: expected a command (the executable, then args)")
    program = str(cmd[0])
    if os.sep not in program:
        program = shutil.which(program) or program
    return SessionModule(popen_session(program, *[str(a) for a in cmd[1:]]))
