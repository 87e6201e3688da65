"""The server's session workers: getting them from the fork server (ahead of time as spares, or
for a connection waiting for one), handing a connection to one, session deadlines, and their
ends. A mixin of :class:`~pytvm.rpc.services.server.Server` on its event loop.

This process runs threads (the loop's, and its users'), so it never forks: its fork server
(:mod:`.fork_server`, a single-threaded process it spawned) forks every worker. The loop asks for
one with a ``spawn`` message, after sending the global functions that changed since it last
asked (:mod:`._registry_shipping`), so a worker holds the functions of this process as they were
when it was asked for; the answer brings the worker's pid, its pidfd and this process's end of its
``SOCK_SEQPACKET`` control socket, which carries small JSON messages (``ready``: the worker is up;
``done``: the session ended). The fork server reaps the workers and reports each exit code.

A connection goes to the oldest spare forked since the registry last changed, over the control
socket (``SCM_RIGHTS``); with none, it waits for the next worker to arrive. Spares are asked for
by an idle callback of the loop, one request per idle turn, and renewed when the registry
changed. The loop keeps its copy of every session's connection: a session deadline is a timer
that kills the worker's process group and writes a kException packet onto the connection, and a
worker that dies of a signal gets one too (``RPCSessionBrokenError`` naming the signal).
"""

from __future__ import annotations

import json
import logging
import os
import select
import shutil
import signal
import socket
import tempfile
import threading
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ...ffi.elf_check import check_shared_object
from ...ffi.errors import TVMTypeError, TVMValueError
from ..wire.base import parse_session_timeout
from ..wire.protocol import encode_exception
from ._event_loop import EventLoop, Timer
from ._fork_link import ForkLink, describe_exit, signal_name
from ._registry_shipping import RegistryShipper, dumps_callable
from .server_env import EXIT_SERVED, EXIT_UNUSED, workspace_prefix

__all__ = ["Worker", "WorkerPool", "resolve_libraries", "spare_count"]

logger = logging.getLogger("pytvm.rpc.server")

#: Spares in a row that die before serving, after which no more are asked for (until a session
#: starts): a failing init callback must not make the fork server fork forever. Also the fork
#: server restarts in a row after which the server gives up.
SPARE_FAILURES = 3
#: Seconds after a spare takes a session before its replacement is asked for: a fork competes
#: for the CPU with the new session's first calls.
SPARE_DELAY = 0.01
#: Seconds to wait for a killed worker to be gone.
KILL_WAIT = 5.0


@dataclass
class Worker:
    """The loop's record of one session process."""

    pid: int
    pidfd: int
    ctrl: socket.socket
    conn: socket.socket | None  # the loop's copy of the client connection, for the whole session
    peer: str
    version: int  # the registry version shipped to the fork server before it was asked for
    ready: bool = False  # it is up: its init callback ran
    over: bool = False  # the session ended (the process may still be cleaning up)
    deadline: Timer | None = None
    timeout: float = 0.0
    tracker_session: bool = False
    proxy_session: bool = False


@dataclass
class _Waiting:
    """A connection whose key was accepted, waiting for a worker; ``then`` gets the worker
    (None: none came, refuse the client).
    """

    conn: socket.socket
    peer: str
    client_key: str
    then: Callable[[Worker | None], None]


class WorkerPool:
    """Server mixin: the fork server, the live session workers and the pool of spares."""

    _loop: EventLoop
    _idle: threading.Condition
    spare_workers: int
    timeout: float
    idle_timeout: float | None
    libraries: list[str]
    allow_popen_binary: bool
    popen_executables: list[str]
    server_init_callback: Callable[[], object] | None
    prefork_callback: Callable[[], object] | None
    silent: bool

    def _info(self, msg: str, *args: object) -> None:
        raise NotImplementedError

    def _session_over(self, worker: Worker) -> None:
        raise NotImplementedError

    # ------------------------------------------------------------------ fork server
    def _init_worker_state(self) -> None:
        """Start the fork server (returns once it is ready; raises if it cannot start)."""
        self._workers: dict[int, Worker] = {}
        self._spares: list[Worker] = []
        self._coming: deque[int] = deque()  # versions of the workers asked for, in order
        self._waiting: deque[_Waiting] = deque()
        self._spare_failures = 0
        self._refill_queued = False
        self._fork_restarts = 0
        self._configuration = {
            "libraries": self.libraries,
            "init": _pickled("server_init_callback", self.server_init_callback),
            "prefork": _pickled("prefork_callback", self.prefork_callback),
            "allow_popen_binary": self.allow_popen_binary,
            "popen_executables": self.popen_executables,
            "idle_timeout": self.idle_timeout,
            "log_level": logger.getEffectiveLevel(),
        }
        self._fork = self._start_fork_server()

    def _start_fork_server(self) -> ForkLink:
        link = ForkLink(self._configuration)
        try:
            hello = link.wait_ready()
        except BaseException:
            link.stop()
            raise
        self._shipper = RegistryShipper(hello["functions"])
        self._loop.add_reader(link.sock, lambda: self._on_fork_server(link))
        self._info("rpc fork server started (pid %d)", link.pid)
        return link

    @property
    def fork_server_pid(self) -> int:
        """The process id of the fork server that forks this server's session workers."""
        return self._fork.pid

    def _on_fork_server(self, link: ForkLink) -> None:
        messages = link.receive()
        for kind, body in messages or ():
            if kind == "spawned":
                self._arrived(body["pid"], link.take_fds(2))
            elif kind == "exit":
                self._on_exit(body["pid"], body["code"])
            elif kind == "spawn_failed":
                logger.error("%s", body["error"])
                if self._coming:
                    self._coming.popleft()
                self._spare_failures += 1
                if self._waiting:  # the worker it would have got
                    self._waiting.popleft().then(None)
            elif kind == "unshipped":
                logger.warning(
                    "global function %r is not in rpc sessions: %s", body["name"], body["reason"]
                )
            elif kind == "warning":
                logger.warning("%s", body["text"])
        if messages is None and link is self._fork:
            self._fork_server_lost(link)

    def _fork_server_lost(self, link: ForkLink) -> None:
        """The fork server died (its workers died with it): start another, or stop serving."""
        self._loop.unwatch(link.sock)
        how = link.stop()
        logger.error("the rpc fork server (pid %d) ended (%s)", link.pid, how)
        for worker in [*self._workers.values(), *self._spares]:
            self._kill(worker)
            self._finish(worker)
        self._spares.clear()
        self._coming.clear()
        self._fork_restarts += 1
        if self._fork_restarts <= SPARE_FAILURES:
            try:
                self._fork = self._start_fork_server()
            except Exception as err:
                logger.error("cannot restart the rpc fork server: %s", err)
            else:
                self._serve_waiting()
                self._queue_refill()
                return
        logger.error("no session workers can be made; the rpc server stops")
        self._loop.stop()

    def _ship_registry(self) -> None:
        """Send the fork server the global functions that changed since the last shipment."""
        changes = self._shipper.changes()
        if changes is None:
            return
        update, remove, unsendable = changes
        for name, reason in unsendable:
            logger.warning("global function %r is not in rpc sessions: %s", name, reason)
        if update or remove:
            self._fork.send("registry", {"update": update, "remove": remove})

    def _ask_for_worker(self) -> None:
        self._ship_registry()
        self._coming.append(self._shipper.version)
        self._fork.send("spawn")  # if it is gone, its end of stream is on the way

    def _current_coming(self) -> int:
        return sum(1 for version in self._coming if version == self._shipper.version)

    # ------------------------------------------------------------------ spares
    def _is_idle(self) -> bool:
        full = len(self._spares) >= self.spare_workers or self._spare_failures >= SPARE_FAILURES
        return self._loop.stop_requested.is_set() or (
            not self._workers
            and not self._waiting
            and not self._coming
            and full
            and all(s.ready for s in self._spares)
        )

    def _spares_short(self) -> bool:
        have = len(self._spares) + self._current_coming() - len(self._waiting)
        return have < self.spare_workers and self._spare_failures < SPARE_FAILURES

    def _queue_refill(self, delay: float = 0.0) -> None:
        """Ask for spares once the loop is idle (and ``delay`` seconds have passed), if the
        pool is short.
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
        """Renew spares forked before the registry changed, and ask for one if the pool is
        short (then come back on the next idle turn).
        """
        self._refill_queued = False
        self._ship_registry()
        for spare in [s for s in self._spares if s.version != self._shipper.version]:
            self._spares.remove(spare)
            self._kill(spare)
            self._finish(spare)
        if self._spares_short():
            self._ask_for_worker()
        self._queue_refill()

    def _start_worker(
        self,
        conn: socket.socket,
        peer: str,
        client_key: str,
        then: Callable[[Worker | None], None],
    ) -> None:
        """Hand ``conn`` (its key accepted) to the oldest current spare, or queue it for the
        next worker; ``then`` gets the worker (now or when it comes) or None (refuse).
        """
        self._ship_registry()
        try:
            while self._spares:
                spare = self._spares.pop(0)
                if spare.version == self._shipper.version and self._hand_over(
                    spare, conn, peer, client_key
                ):
                    then(spare)
                    return
                self._kill(spare)  # global functions changed since it was forked, or it died
                self._finish(spare)
            self._waiting.append(_Waiting(conn, peer, client_key, then))
            self._serve_waiting()
        finally:
            self._queue_refill(SPARE_DELAY)  # not now: the session's first calls come first

    def _serve_waiting(self) -> None:
        """Ask for a worker for each waiting connection that none is on the way for."""
        self._ship_registry()
        while self._current_coming() < len(self._waiting):
            self._ask_for_worker()

    def _arrived(self, pid: int, fds: list[int]) -> None:
        """A worker the fork server forked: give it to a waiting connection, or keep it."""
        ctrl = socket.socket(fileno=fds[0])
        ctrl.setblocking(False)
        version = self._coming.popleft() if self._coming else -1
        worker = Worker(pid, fds[1], ctrl, None, "spare", version)
        self._loop.add_reader(ctrl, lambda: self._on_ctrl(worker))
        self._ship_registry()
        if version != self._shipper.version:  # the registry changed since it was asked for
            self._kill(worker)
            self._finish(worker)
        elif self._waiting:
            waiting = self._waiting.popleft()
            if self._hand_over(worker, waiting.conn, waiting.peer, waiting.client_key):
                waiting.then(worker)
            else:  # it died at once (e.g. in the init callback)
                self._kill(worker)
                self._finish(worker)
                waiting.then(None)
        else:
            with self._idle:
                self._spares.append(worker)
                self._idle.notify_all()
        self._serve_waiting()
        self._queue_refill()

    def _hand_over(self, worker: Worker, conn: socket.socket, peer: str, client_key: str) -> bool:
        try:
            msg = json.dumps({"client_key": client_key}).encode()
            socket.send_fds(worker.ctrl, [msg], [conn.fileno()])
        except OSError:
            return False
        worker.conn, worker.peer = conn, peer
        self._workers[worker.pid] = worker
        return True

    def _on_ctrl(self, worker: Worker) -> None:
        try:
            raw = worker.ctrl.recv(1 << 16)
        except BlockingIOError:
            return
        except OSError:
            raw = b""
        if not raw:  # the worker is exiting; the fork server reports when it is gone
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
        """Arm the session's time limit (the server's ``timeout`` or the client's, the
        smaller), if there is one.
        """
        limits = [self.timeout] if self.timeout > 0 else []
        if "timeout" in options:  # checked by split_key_options before the session was admitted
            limits.append(parse_session_timeout(options["timeout"]))
        if limits:
            worker.timeout = min(limits)
            worker.deadline = self._loop.call_later(worker.timeout, lambda: self._expire(worker))

    def _expire(self, worker: Worker) -> None:
        self._kill(worker)
        logger.warning("rpc session for %s timed out after %g s", worker.peer, worker.timeout)
        text = f"RPCSessionTimeoutError: session timed out after {worker.timeout:g} s"
        _tell_client(worker, text)
        self._finish(worker)

    # ------------------------------------------------------------------ ends
    def _on_exit(self, pid: int, code: int) -> None:
        """The fork server reaped worker ``pid`` (``code``: its exit code, negative for a
        signal); nothing if this loop killed and forgot it already.
        """
        worker = self._workers.get(pid) or next((s for s in self._spares if s.pid == pid), None)
        if worker is None:
            return
        if code < 0:
            how = f"died of {signal_name(-code)}"
        else:
            how = {EXIT_SERVED: "ended", EXIT_UNUSED: "was not used"}.get(
                code, f"failed ({describe_exit(code)})"
            )
        if worker in self._spares:  # died before it got a connection
            self._spares.remove(worker)
            self._spare_failures += 1
            logger.warning("spare rpc session worker %d %s", worker.pid, how)
        elif code < 0:
            logger.warning("rpc session for %s: worker %d %s", worker.peer, worker.pid, how)
            if not worker.over:
                _tell_client(
                    worker,
                    f"RPCSessionBrokenError: the server's session worker (pid {worker.pid}) "
                    f"{how} while serving this session",
                )
        elif code == EXIT_SERVED:
            self._fork_restarts = 0
            self._info("rpc session for %s %s", worker.peer, how)
        else:
            logger.warning("rpc session for %s %s", worker.peer, how)
        self._finish(worker, clean=code >= 0)  # a worker that exited removed its workspace
        self._queue_refill()

    def _kill(self, worker: Worker) -> None:
        """Kill the worker's process group and wait until it is gone."""
        if _exited(worker.pidfd, 0.0):
            return  # its pid may be reaped and reused: no killpg
        try:
            os.killpg(worker.pid, signal.SIGKILL)
        except OSError:
            try:
                signal.pidfd_send_signal(worker.pidfd, signal.SIGKILL)
            except OSError:
                pass
        if not _exited(worker.pidfd, KILL_WAIT):
            logger.error("worker %d is still alive %g s after SIGKILL", worker.pid, KILL_WAIT)

    def _finish(self, worker: Worker, clean: bool = False) -> None:
        """Forget a dead worker: close its fds, cancel its deadline, remove what a killed one
        left, free its session's slot.
        """
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
        """Kill every worker and spare, drop waiting connections, stop the fork server."""
        for worker in [*self._workers.values(), *self._spares]:
            self._kill(worker)
            self._finish(worker)
        self._spares.clear()
        while self._waiting:
            self._waiting.popleft().conn.close()
        self._loop.unwatch(self._fork.sock)
        self._fork.stop()


def _exited(pidfd: int, timeout: float) -> bool:
    """Whether the process behind ``pidfd`` has exited (waiting up to ``timeout`` seconds)."""
    readable, _, _ = select.select([pidfd], [], [], timeout)
    return bool(readable)


def _tell_client(worker: Worker, text: str) -> None:
    """Write a kException packet with ``text`` onto the session's connection (its worker is
    dead), then close our side of the stream.
    """
    if worker.conn is None:
        return
    try:
        worker.conn.settimeout(1.0)
        worker.conn.sendall(encode_exception(text))
        worker.conn.shutdown(socket.SHUT_WR)
        worker.conn.setblocking(False)
        while worker.conn.recv(1 << 16):  # drain, so close sends FIN rather than RST
            pass
    except OSError:
        pass


def _pickled(what: str, callback: Callable[[], object] | None) -> bytes | None:
    """``callback`` pickled for the fork server; a clear error if it cannot be."""
    if callback is None:
        return None
    try:
        return dumps_callable(callback)
    except Exception as err:
        raise TVMTypeError(
            f"{what} {callback!r} cannot be sent to the fork server that makes the session "
            f"workers ({type(err).__name__}: {err}); pass a module-level function, or a "
            "closure over picklable values"
        ) from err


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
        check_shared_object(path)  # a damaged library fails the server's start, not a worker
        paths.append(path)
    return paths
