"""The fork server: the single-threaded process that forks an RPC server's session workers.

``fork()`` copies only the calling thread, so forking a process that runs threads hands the child
whatever those threads held at that instant: locks, and descriptors they were passing on (a
``subprocess`` call in another thread loses its exec-status pipe to the child and then waits for
it forever). The RPC server runs an event loop thread, and its users run threads of their own,
so it never forks. It spawns this process instead (fork and exec, which is safe from any thread;
see ``_fork_link``), which runs no thread, loads the runtime and RPC layers, ``load_library``
and the ``prefork_callback``, and then only forks workers and reaps them. (numpy's OpenBLAS
starts a thread when it is imported; its own ``pthread_atfork`` handler stops it before every
fork and nothing here restarts it, so from the first fork on this process runs one thread.
Should a library or the ``prefork_callback`` start threads that stay, the server logs a
warning.)

Protocol (``_fork_channel`` frames on the descriptor ``FD``, an ``AF_UNIX`` stream socket):

* ``configure`` (first): ``{"libraries": [path, ...], "init": pickle or None, "prefork":
  pickle or None, "allow_popen_binary": bool, "popen_executables": [path, ...],
  "idle_timeout": float or None, "log_level": int}``. Answered by ``hello``: ``{"pid": int,
  "functions": {name: reference key or None}}``, or ``fatal``: ``{"error": str}`` and an exit.
* ``registry``: ``{"update": {name: pickle}, "remove": [name, ...]}`` (``_registry_shipping``).
  A function that does not load is reported as ``unshipped``: ``{"name": str, "reason": str}``.
* ``spawn`` (no body): fork a session worker (``server_env.run_worker``), in its own process
  group, killed if this process dies (``PR_SET_PDEATHSIG``). Answered, in request order, by
  ``spawned``: ``{"pid": int}`` with two descriptors (the server's end of the worker's control
  socket, the worker's pidfd), or ``spawn_failed``: ``{"error": str}``.
* When a worker ends: ``exit``: ``{"pid": int, "code": int}`` (``os.waitstatus_to_exitcode``:
  negative for a signal).
* End of stream (the server closed it, or died): kill every worker's process group, reap, exit.

Every answer is queued and sent when the socket takes it, so this process never blocks on a
server that is busy sending it functions.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import pickle
import selectors
import signal
import socket
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from ...ffi.elf_check import check_shared_object
from ._fork_channel import FrameReader, Outbox, send
from ._registry_shipping import apply_shipment, registry_keys
from .server_env import EXIT_ERROR, run_worker

__all__ = ["LOG_FORMAT", "ForkServer", "main"]

#: The log line format of the fork server and its workers (the one ``pytvm rpc server`` uses).
LOG_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
_PR_SET_PDEATHSIG = 1
logger = logging.getLogger("pytvm.rpc.server")


class ForkServer:
    """The fork server's state and loop (see the module docstring)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.reader = FrameReader()
        self.outbox = Outbox(sock)
        self.selector = selectors.DefaultSelector()
        self.children: dict[int, int] = {}  # pid -> pidfd
        self.options: dict[str, Any] = {}
        self.init: Callable[[], object] | None = None
        self.threads_checked = False

    def run(self) -> int:
        """Serve until the server closes the control socket; returns the exit code."""
        self.sock.setblocking(False)
        self.selector.register(self.sock, selectors.EVENT_READ)
        while True:
            for key, mask in self.selector.select():
                if key.fileobj is not self.sock:
                    self._reap(key.data)
                elif mask & selectors.EVENT_READ and not self._read():
                    return self._shut_down()
            try:
                self.outbox.flush()
            except OSError:  # the server is gone
                return self._shut_down()
            events = selectors.EVENT_READ | (selectors.EVENT_WRITE if self.outbox else 0)
            self.selector.modify(self.sock, events)

    # ------------------------------------------------------------------ messages
    def _read(self) -> bool:
        """Handle what the server sent; False at the end of the stream."""
        while True:
            try:
                if not self.reader.fill(self.sock):
                    return False
            except BlockingIOError:
                break
            except OSError:
                return False
        self.reader.close()  # nothing sends descriptors this way
        for kind, body in self.reader.messages():
            if kind == "configure":
                self._configure(body)
            elif kind == "registry":
                for name, reason in apply_shipment(body["update"], body["remove"]):
                    self.outbox.put("unshipped", {"name": name, "reason": reason})
            elif kind == "spawn":
                self._spawn()
            try:  # each answer at once: a worker is of use only once the server knows of it
                self.outbox.flush()
            except OSError:
                return False
        return True

    def _configure(self, body: dict[str, Any]) -> None:
        logging.basicConfig(level=body["log_level"], format=LOG_FORMAT)
        error = None
        for lib in body["libraries"]:
            try:
                check_shared_object(lib)  # a damaged file raises here instead of crashing
                ctypes.CDLL(lib, mode=ctypes.RTLD_GLOBAL)
            except OSError as err:
                error = f"load_library {lib!r} does not load: {err}"
                break
        if error is None:
            try:
                self.init = pickle.loads(body["init"]) if body["init"] is not None else None
                if body["prefork"] is not None:
                    pickle.loads(body["prefork"])()
            except Exception:
                error = "server_init_callback or prefork_callback failed:\n"
                error += traceback.format_exc()
        if error is not None:
            self.sock.setblocking(True)
            send(self.sock, "fatal", {"error": error})
            raise SystemExit(1)
        self.options = body
        self.outbox.put("hello", {"pid": os.getpid(), "functions": registry_keys()})

    # ------------------------------------------------------------------ workers
    def _spawn(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        me = os.getpid()
        try:
            pid = os.fork()
        except OSError as err:
            ours.close()
            theirs.close()
            self.outbox.put("spawn_failed", {"error": f"cannot fork a session worker: {err}"})
            return
        if pid == 0:
            self._child(theirs, ours, me)
        theirs.close()
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # also done by the worker; whichever runs first wins
        pidfd = os.pidfd_open(pid)
        self.children[pid] = pidfd
        self.selector.register(pidfd, selectors.EVENT_READ, pid)
        self.outbox.put("spawned", {"pid": pid}, fds=(ours.fileno(), pidfd), close=(ours,))
        if not self.threads_checked:
            self.threads_checked = True
            threads = thread_count()
            if threads > 1:
                self.outbox.put(
                    "warning",
                    {
                        "text": f"the fork server runs {threads} threads (started by a "
                        "load_library library or the prefork_callback); a worker forked from "
                        "it may inherit a lock one of them held"
                    },
                )

    def _child(self, ctrl: socket.socket, ours: socket.socket, fork_server: int) -> NoReturn:
        """Become a session worker: drop the fork server's descriptors, serve, exit."""
        code = EXIT_ERROR
        try:
            self.selector.close()
            for fd in self.children.values():
                os.close(fd)
            for obj in self.outbox.pending():  # other workers' control sockets not yet sent
                obj.close()
            ours.close()
            self.sock.close()
            _die_with(fork_server)
            code = run_worker(
                ctrl,
                self.init,
                self.options["allow_popen_binary"],
                self.options["popen_executables"],
                idle_timeout=self.options["idle_timeout"],
            )
        except BaseException:
            with contextlib.suppress(BaseException):
                logger.exception("rpc session worker %d failed", os.getpid())
        finally:
            os._exit(code)

    def _reap(self, pid: int) -> None:
        try:
            done, status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            done, status = pid, 0
        if done == 0:
            return
        pidfd = self.children.pop(pid)
        self.selector.unregister(pidfd)
        os.close(pidfd)
        self.outbox.put("exit", {"pid": pid, "code": os.waitstatus_to_exitcode(status)})

    def _shut_down(self) -> int:
        """Kill every worker's process group and reap them (the server is gone)."""
        for pid in self.children:
            try:
                os.killpg(pid, signal.SIGKILL)
            except OSError:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        for pid, pidfd in self.children.items():
            with contextlib.suppress(ChildProcessError):
                os.waitpid(pid, 0)
            os.close(pidfd)
        self.children.clear()
        return 0


def _die_with(parent: int) -> None:
    """Have the kernel kill this process when ``parent`` (the fork server) dies."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # it died before prctl took effect
        os._exit(EXIT_ERROR)


def thread_count(pid: int | str = "self") -> int:
    """The threads process ``pid`` runs now (from ``/proc``)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Threads:"):
            return int(line.split()[1])
    return 1


def main(argv: Sequence[str] | None = None) -> NoReturn:
    """Run the fork server on the control socket whose descriptor is the one argument, then
    exit (``python -m pytvm.rpc.services.fork_server FD`` does the same).
    """
    args = sys.argv[1:] if argv is None else list(argv)
    if len(args) != 1 or not args[0].isdigit():
        print(
            "usage: python -m pytvm.rpc.services.fork_server FD (started by the RPC server, "
            "FD its control socket)",
            file=sys.stderr,
        )
        sys.exit(2)
    sys.exit(ForkServer(socket.socket(fileno=int(args[0]))).run())


if __name__ == "__main__":
    main()
