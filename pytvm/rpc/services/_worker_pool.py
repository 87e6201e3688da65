"""The server's session workers: forking them (ahead of time, as spares, or on demand), handing a
connection to one, session deadlines, and reaping them. A mixin of
:class:`~pytvm.rpc.services.server.Server` on its event loop.

Each worker is watched through two file objects: its process fd (``os.pidfd_open``: readable
when it exits) and a ``SOCK_SEQPACKET`` control socket carrying small JSON messages (``ready``:
it dropped what it inherited from the server; ``done``: the session ended). A spare receives
its connection over the control socket (``SCM_RIGHTS``). Spares are forked by an idle callback
of the loop, one per idle turn, so forking never delays an event; a session deadline is a timer
that kills the worker's process group and writes a kException packet onto the connection.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import signal
import socket
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...ffi.errors import TVMValueError
from ...ffi.registry import registry_version
from ..wire.base import parse_session_timeout
from ..wire.protocol import encode_exception
from ._event_loop import EventLoop, Timer
from .server_env import (
    EXIT_ERROR,
    EXIT_HANDSHAKE,
    EXIT_REFUSED,
    EXIT_SERVED,
    EXIT_UNUSED,
    run_worker,
    workspace_prefix,
)

__all__ = ["Worker", "WorkerPool", "resolve_libraries", "spare_count"]

logger = logging.getLogger("pytvm.rpc.server")

#: Spares in a row that die before serving, after which no more are forked (until a session
#: starts): a broken ``load_library`` or init callback must not make the loop fork forever.
SPARE_FAILURES = 3
#: Seconds after a spare takes a session before its replacement may be forked: a fork competes
#: for the CPU with the new session's first calls (on one core, tracker request to first call
#: measured about 1 ms slower with the fork right away).
SPARE_DELAY = 0.01


@dataclass
class Worker:
    """The loop's record of one session process."""

    pid: int
    pidfd: int
    ctrl: socket.socket
    conn: socket.socket | None  # the loop's copy, kept while a timeout may need it
    peer: str
    version: int  # registry_version() at fork time
    ready: bool = False  # it has dropped what it inherited from the server process
    over: bool = False  # the session ended (the process may still be cleaning up)
    deadline: Timer | None = None
    timeout: float = 0.0
    tracker_session: bool = False
    proxy_session: bool = False


class WorkerPool:
    """Server mixin: the live session workers and the pool of spares."""

    _loop: EventLoop
    _idle: threading.Condition
    _workers: dict[int, Worker]
    _spares: list[Worker]
    _spare_failures: int
    _refill_queued: bool
    spare_workers: int
    timeout: float
    idle_timeout: float | None
    libraries: list[str]
    allow_popen_binary: bool
    popen_executables: list[str]
    server_init_callback: Callable[[], object] | None

    def _info(self, msg: str, *args: object) -> None:
        raise NotImplementedError

    def _session_over(self, worker: Worker) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ spares
    def _is_idle(self) -> bool:
        full = len(self._spares) >= self.spare_workers or self._spare_failures >= SPARE_FAILURES
        return self._loop.stop_requested.is_set() or (
            not self._workers and full and all(s.ready for s in self._spares)
        )

    def _spares_short(self) -> bool:
        return len(self._spares) < self.spare_workers and self._spare_failures < SPARE_FAILURES

    def _queue_refill(self, delay: float = 0.0) -> None:
        """Fork spares once the loop is idle (and ``delay`` seconds have passed), if the pool
        is short.
        """
        if not self._refill_queued and self._spares_short():
            self._refill_queued = True
            if delay > 0:
                self._loop.call_later(delay, self._refill_when_idle)
            else:
                self._refill_when_idle()

    def _refill_when_idle(self) -> None:
        self._loop.call_when_idle(self._refill_spares)

    def _refill_spares(self) -> None:
        """Renew spares forked before the registry changed, and fork one if the pool is short
        (then come back on the next idle turn).
        """
        self._refill_queued = False
        version = registry_version()
        for spare in [s for s in self._spares if s.version != version]:
            self._spares.remove(spare)
            self._kill(spare)
            self._finish(spare)
        if self._spares_short() and self._spawn(None, "spare", None) is None:
            self._spare_failures += 1
        self._queue_refill()

    def _start_worker(self, conn: socket.socket, peer: str, client_key: str) -> Worker | None:
        """Hand ``conn`` (its key accepted) to the oldest current spare, or fork a worker."""
        version = registry_version()
        try:
            while self._spares:
                spare = self._spares.pop(0)
                if spare.version == version:
                    try:
                        msg = json.dumps({"client_key": client_key}).encode()
                        socket.send_fds(spare.ctrl, [msg], [conn.fileno()])
                    except OSError:
                        pass
                    else:
                        spare.conn, spare.peer = conn, peer
                        self._workers[spare.pid] = spare
                        return spare
                self._kill(spare)  # global functions changed since it forked, or it died
                self._finish(spare)
            return self._spawn(conn, peer, client_key)
        finally:
            self._queue_refill(SPARE_DELAY)  # not now: the session's first calls come first

    # ------------------------------------------------------------------ fork
    def _spawn(
        self, conn: socket.socket | None, peer: str, client_key: str | None
    ) -> Worker | None:
        """Fork a worker for ``conn`` (None: a spare, which waits for a connection)."""
        parent_ctrl, child_ctrl = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        keep = {child_ctrl.fileno()} | ({conn.fileno()} if conn is not None else set())
        version = registry_version()
        try:
            pid = os.fork()
        except OSError as err:
            logger.error("cannot fork a session worker for %s: %s", peer, err)
            for sock in (conn, parent_ctrl, child_ctrl):
                if sock is not None:
                    sock.close()
            return None
        if pid == 0:  # the worker; never returns
            code = EXIT_ERROR
            try:
                if self.server_init_callback is not None:
                    self.server_init_callback()
                code = run_worker(
                    child_ctrl,
                    conn,
                    client_key,
                    self.libraries,
                    keep,
                    self.allow_popen_binary,
                    self.popen_executables,
                    idle_timeout=self.idle_timeout,
                )
            except BaseException:
                try:
                    logger.exception("rpc session worker for %s failed", peer)
                except BaseException:
                    pass
            finally:
                os._exit(code)
        child_ctrl.close()
        parent_ctrl.setblocking(False)
        try:
            os.setpgid(pid, pid)  # also done by the worker; whichever runs first wins
        except OSError:
            pass
        worker = Worker(pid, os.pidfd_open(pid), parent_ctrl, conn, peer, version)
        if conn is None:
            self._spares.append(worker)
        else:
            self._workers[pid] = worker
        self._loop.add_reader(worker.pidfd, lambda: self._on_exit(worker))
        self._loop.add_reader(parent_ctrl, lambda: self._on_ctrl(worker))
        return worker

    def _on_ctrl(self, worker: Worker) -> None:
        try:
            raw = worker.ctrl.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            raw = b""
        if not raw:  # the worker is exiting; its pidfd reports when it is gone
            self._loop.unwatch(worker.ctrl)
            return
        try:
            msg = json.loads(raw)
        except ValueError:
            logger.error("worker %d sent a malformed control message %r", worker.pid, raw[:80])
            return
        if "done" in msg:
            self._session_over(worker)
        elif "ready" in msg:
            with self._idle:
                worker.ready = True
                self._idle.notify_all()

    # ------------------------------------------------------------------ deadlines
    def _start_session(self, worker: Worker, options: dict[str, str]) -> None:
        """Arm the session's time limit (the server's ``timeout`` or the client's, the smaller),
        or let go of the loop's copy of the connection when there is none.
        """
        limits = [self.timeout] if self.timeout > 0 else []
        if "timeout" in options:  # checked by split_key_options before the session was admitted
            limits.append(parse_session_timeout(options["timeout"]))
        if limits:
            worker.timeout = min(limits)
            worker.deadline = self._loop.call_later(worker.timeout, lambda: self._expire(worker))
        elif worker.conn is not None:
            worker.conn.close()
            worker.conn = None

    def _expire(self, worker: Worker) -> None:
        self._kill(worker)
        text = f"RPCSessionTimeoutError: session timed out after {worker.timeout:g} s"
        logger.warning("rpc session for %s timed out after %g s", worker.peer, worker.timeout)
        if worker.conn is not None:
            try:
                worker.conn.settimeout(1.0)
                worker.conn.sendall(encode_exception(text))
                worker.conn.shutdown(socket.SHUT_WR)
                worker.conn.setblocking(False)
                while worker.conn.recv(1 << 16):  # drain, so close sends FIN rather than RST
                    pass
            except OSError:
                pass
        self._finish(worker)

    # ------------------------------------------------------------------ reaping
    def _on_exit(self, worker: Worker) -> None:
        try:
            pid, status = os.waitpid(worker.pid, os.WNOHANG)
            if pid == 0:
                return
            code = os.waitstatus_to_exitcode(status)
        except ChildProcessError:
            code = EXIT_ERROR
        how = {
            EXIT_SERVED: "ended",
            EXIT_REFUSED: "refused",
            EXIT_HANDSHAKE: "closed during the handshake",
            EXIT_UNUSED: "was not used",
        }.get(code, f"failed (exit code {code})")
        if worker in self._spares:  # died before it got a connection
            self._spares.remove(worker)
            self._spare_failures += 1
            logger.warning("spare rpc session worker %d %s", worker.pid, how)
        elif code in (EXIT_SERVED, EXIT_REFUSED, EXIT_HANDSHAKE):
            self._info("rpc session for %s %s", worker.peer, how)
        else:
            logger.warning("rpc session for %s %s", worker.peer, how)
        self._finish(worker, clean=code >= 0)  # a worker that exited removed its workspace
        self._queue_refill()

    def _kill(self, worker: Worker) -> None:
        for kill in (os.killpg, os.kill):
            try:
                kill(worker.pid, signal.SIGKILL)
                break
            except OSError:
                continue
        try:
            os.waitpid(worker.pid, 0)
        except ChildProcessError:
            pass

    def _finish(self, worker: Worker, clean: bool = False) -> None:
        """Forget a reaped worker: close its fds, cancel its deadline, remove what a killed one
        left, free its session's slot.
        """
        self._loop.unwatch(worker.pidfd)
        self._loop.unwatch(worker.ctrl)
        if worker.deadline is not None:
            worker.deadline.cancel()
        os.close(worker.pidfd)
        worker.ctrl.close()
        if worker.conn is not None:
            worker.conn.close()
        if worker.pid in self._workers:
            self._session_over(worker)
        if not clean:  # a killed worker could not remove its workspace
            pattern = workspace_prefix(worker.pid) + "*"
            for path in Path(tempfile.gettempdir()).glob(pattern):
                shutil.rmtree(path, ignore_errors=True)
        with self._idle:  # last: wait_idle() returns once everything above is done
            self._workers.pop(worker.pid, None)
            self._idle.notify_all()

    def _stop_workers(self) -> None:
        """Kill and reap every worker and spare (shutdown)."""
        for worker in [*self._workers.values(), *self._spares]:
            self._kill(worker)
            self._finish(worker)
        self._spares.clear()


def spare_count(spare_workers: int | None) -> int:
    """How many spare workers to keep: ``spare_workers``, or the usable cores clamped to 2..8."""
    if spare_workers is None:
        return max(2, min(8, len(os.sched_getaffinity(0))))
    if spare_workers < 0:
        raise TVMValueError(f"spare_workers must be 0 or more, got {spare_workers}")
    return spare_workers


def resolve_libraries(load_library: str | Sequence[str] | None) -> list[str]:
    """Absolute paths of the libraries to load in each session; an error names a missing one."""
    if not load_library:
        return []
    names = load_library.split(":") if isinstance(load_library, str) else list(load_library)
    paths = []
    for name in filter(None, names):
        path = os.path.abspath(name)  # noqa: PTH100 - lexical: a linked library keeps its name
        if not Path(path).is_file():
            raise TVMValueError(
                f"load_library: no file {name!r} (resolved to {path!r}); pass existing "
                "shared libraries, colon-separated"
            )
        paths.append(path)
    return paths
