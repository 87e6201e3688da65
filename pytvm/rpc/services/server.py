"""The RPC server: accepts TVM RPC connections and serves each session in its own worker process.

Process model (``spec/rpc-protocol.md`` sections 1, 8, 9.4, 10.2):

* One :class:`~pytvm.rpc.services._event_loop.EventLoop` (the loop the tracker and proxy run on too)
  watches the listening socket, the tracker connection, the fork server's control socket and, per
  worker, a control socket (``_worker_pool``). Handshake deadlines, session timeouts, tracker
  pings and reconnects, proxy redials are its timers; spares are asked for by its idle callbacks.
* The loop itself accepts connections and reads their handshake records without blocking
  (``_handshake.HandshakeIntake``): at most ``max_pending_handshakes`` at once, each within the
  handshake deadline (30 s, or ``timeout``/``idle_timeout`` when smaller), so slow clients cost
  no process. It validates the key (``base.split_key_options``), decides (so a tracker match
  key is claimed by exactly one session; ``max_sessions`` caps live sessions) and answers
  ``RPC_CODE_MISMATCH`` with a log line naming the reason, or ``RPC_MAGIC`` + ``server:<key>``
  once a worker has the connection.
* This process never forks: it runs threads (the loop's and its users'), and a fork copies only
  the calling thread, with whatever the others held (a ``subprocess`` call in another thread
  would lose its exec-status pipe to the child and hang). The constructor spawns a fork server
  (``fork_server``: a single-threaded process started with fork and exec, which loads the
  runtime, ``load_library`` and the ``prefork_callback``) and every session worker is forked by
  it (a crash in one cannot touch another or the server). To keep the fork off the critical path
  a pool of ``spare_workers`` spares is forked ahead of time, refilled whenever the loop has
  nothing else to do; a spare receives the connection over its control socket (``SCM_RIGHTS``).
  With no spare left, the connection waits for the next worker.
* The global functions registered in this process are sent to the fork server
  (``_registry_shipping``) before it forks, and spares forked before the registry changed are
  replaced, so a session sees them as they are when it connects.
* The worker (``server_env.run_worker``) serves the session in a fresh temporary workspace,
  removes it and exits; the fork server reaps it and reports its exit code. Sessions without a
  tracker run concurrently. With ``idle_timeout``, a session whose client sends no complete
  request for that long is closed (``_idle_channel``).
* Session timeout (client option ``-timeout=S`` or the server's ``timeout``, the smaller wins):
  the loop keeps its copy of every connection; when ``S`` runs out it kills the worker's process
  group and writes a kException ``RPCSessionTimeoutError: ...`` packet onto the connection. A
  worker that dies of a signal gets a kException ``RPCSessionBrokenError: the server's session
  worker (pid N) died of SIGSEGV while serving this session`` the same way.
* Key options: ``-timeout=<seconds>``, ``-token=<t>`` (checked with ``hmac.compare_digest`` when
  the server has an ``auth_token``), or ``-tokenmac=<hmac>`` (``_auth.session_mac`` of the match
  key; what a pytvm client sends to a server the tracker assigned).
* Tracker mode registers ``[PUT, key, [port, match_key], custom_addr]`` and accepts only
  ``client:<match_key>``, one session at a time, with a new match key after every session.
* Proxy mode dials the proxy as ``server:<key>`` and serves one session per pairing.
* Stopping (``terminate``, the ``with`` block's end) kills the workers and the fork server;
  should this process die, the fork server sees its control socket close and kills its workers.
"""

from __future__ import annotations

import hmac
import logging
import os
import socket
import threading
import time
from collections.abc import Callable, Sequence
from functools import partial
from typing import Any

from ...ffi.errors import TVMOSError, TVMValueError
from ..wire._auth import session_mac_refusal
from ..wire.base import RPC_MAGIC, ProtocolError, send_key, split_key_options
from ._event_loop import EventLoop, Timer
from ._handshake import HandshakeIntake, PendingHandshake, refuse
from ._selector_server import bind_first_free_port
from ._server_links import ProxyLink, TrackerLink
from ._worker_pool import Worker, WorkerPool, resolve_libraries, spare_count
from .server_env import HANDSHAKE_TIMEOUT, open_server_env, warn_if_root

__all__ = ["Server"]

_server_env = open_server_env  # TVM's name: rpc.server._server_env(load_library)

logger = logging.getLogger("pytvm.rpc.server")


class Server(HandshakeIntake, WorkerPool, TrackerLink, ProxyLink):
    """A TVM-compatible RPC server; each session runs in its own worker process.

    Parameters
    ----------
    host : str
        Address to listen on; with ``is_proxy`` the proxy's address.
    port, port_end : int
        The first free port of ``[port, port_end)`` is used (``port=0``: any free port); with
        ``is_proxy`` the proxy's port. ``port_end`` None: ``max(9199, port + 100)``, TVM's
        range where that is not empty.
    key : str
        The rpc key; clients must present ``client:<key>`` (required with a tracker).
    tracker_addr : tuple of (str, int), optional
        Register with this tracker and accept only the match keys it hands out.
    custom_addr : str, optional
        The address reported to the tracker (default: the tracker sees our peer address).
    is_proxy : bool
        Dial the proxy at ``host:port`` instead of listening.
    auth_token : str, optional
        Clients must append `` -token=<auth_token>`` to their key.
    load_library : str or sequence of str, optional
        Shared libraries (colon-separated in a str) loaded with ``RTLD_GLOBAL`` in each session.
    silent : bool
        Log only warnings and errors.
    timeout : float, optional
        Session time limit in seconds (a client's ``-timeout`` may only shorten it); also
        bounds the handshake when under 30 s.
    no_fork : bool
        Accepted for TVM compatibility. TVM then starts session processes without ``fork``
        (for drivers that break in a forked child); here sessions are always workers forked
        by the fork server, a process that loaded no GPU driver.
    server_init_callback : callable, optional
        Called with no arguments in each session worker before it serves (TVM runs it in the
        server process, whose forks inherit what it did; ``prefork_callback`` does that here);
        an exception ends that worker. Pickled with ``cloudpickle`` for the fork server.
    reuse_addr : bool
        Set ``SO_REUSEADDR`` on the listening socket (never on Windows).
    retry_period, max_retry : float, int
        Proxy mode: wait between failed dials, and failed dials in a row before giving up.
    ping_period, unmatch_timeout : float
        Tracker mode: seconds between pending-key polls, and how long a handed-out match key may
        stay unused (beyond one period) before a new one is registered (TVM: 2 s and 4 s).
    max_sessions : int, optional
        Live sessions at most; a client beyond it is refused (``RPC_CODE_MISMATCH``, and a
        server log line naming the limit). None: no limit.
    idle_timeout : float, optional
        Close a session whose client sends no complete request for this many seconds after the
        previous reply (a client dripping bytes does not reset it). None: sessions may idle.
    spare_workers : int, optional
        Session workers kept forked ahead of time (default: the usable cores, 2 to 8).
    max_pending_handshakes : int
        Connections whose handshake is being read at once; more wait in the listen backlog.
    allow_popen_binary : bool
        Let ``rpc.PopenSession`` run an executable a client sends as bytes (TVM's minrpc
        convention); off by default. See :mod:`pytvm.rpc.services.server_env` for what a client
        may run.
    popen_executables : sequence of str
        Executables outside the workspace that clients may start with ``rpc.PopenSession(path)``
        (the device binaries this board serves); none by default.
    tracker_token : str, optional
        Tracker mode: the token a tracker made with ``token=`` wants before it lists a server
        (``pytvm rpc server`` also reads ``$PYTVM_TRACKER_TOKEN`` or ``--tracker-token-file``).
        Registration happens before the constructor returns.
    prefork_callback : callable, optional
        Called once with no arguments in the fork server before it forks any worker: what it
        imports, builds or caches there, every session inherits (``server_init_callback`` runs
        in each worker instead). Functions it registers that this process lacks are dropped.
        Pickled with ``cloudpickle``; an exception makes the constructor raise.

    Notes
    -----
    A session sees the global functions of this process as they are when it connects: they are
    sent to the fork server (pickled with ``cloudpickle``; one that cannot be is logged and
    absent), and spare workers are replaced when the registry changed since they were forked.
    Other process state is the fork server's: its imports, ``load_library``, the
    ``prefork_callback``. The constructor returns once the fork server is ready (a library that
    does not load raises here). Loop and workers use ``os.pidfd_open`` (Linux 5.3+).

    Examples
    --------
    >>> from pytvm.rpc.sessions.client import connect
    >>> with Server(port=0, key="demo", silent=True) as server:
    ...     sess = connect("127.0.0.1", server.port, key="demo")
    ...     sess.get_function("rpc.test.addone")(41)
    42
    """

    def __init__(
        self,
        host: str = "127.0.0.1",
        port: int = 9091,
        port_end: int | None = None,
        is_proxy: bool = False,
        tracker_addr: tuple[str, int] | None = None,
        key: str = "",
        load_library: str | Sequence[str] | None = None,
        custom_addr: str | None = None,
        silent: bool = False,
        no_fork: bool = False,
        server_init_callback: Callable[[], object] | None = None,
        reuse_addr: bool = True,
        timeout: float | None = None,
        *,
        auth_token: str | None = None,
        max_sessions: int | None = None,
        idle_timeout: float | None = None,
        spare_workers: int | None = None,
        max_pending_handshakes: int = 128,
        retry_period: float = 5.0,
        max_retry: int = 5,
        ping_period: float = 2.0,
        unmatch_timeout: float = 4.0,
        allow_popen_binary: bool = False,
        popen_executables: Sequence[str] = (),
        tracker_token: str | None = None,
        prefork_callback: Callable[[], object] | None = None,
    ) -> None:
        if not hasattr(os, "pidfd_open"):
            raise TVMOSError("the RPC server needs os.pidfd_open (Linux 5.3 or newer)")
        _check_key(key, tracker_addr)
        self.host, self.key, self.is_proxy = host, key, is_proxy
        self.tracker_addr = tracker_addr
        self.tracker_token = tracker_token
        self.custom_addr = custom_addr
        self.auth_token = auth_token
        self.timeout = _limit("timeout", timeout)
        self.idle_timeout = _limit("idle_timeout", idle_timeout) or None
        self.handshake_timeout = min(
            x for x in (HANDSHAKE_TIMEOUT, self.timeout, self.idle_timeout or 0.0) if x > 0
        )
        if max_sessions is not None and max_sessions < 1:
            raise TVMValueError(f"max_sessions must be at least 1 (or None), got {max_sessions}")
        self.max_sessions = max_sessions
        self.spare_workers = spare_count(spare_workers)
        if max_pending_handshakes < 1:
            raise TVMValueError(
                f"max_pending_handshakes must be at least 1, got {max_pending_handshakes}"
            )
        self.max_pending_handshakes = max_pending_handshakes
        self.no_fork = no_fork  # documented above: sessions are forked workers regardless
        self.server_init_callback = server_init_callback
        self.prefork_callback = prefork_callback
        self.silent = silent
        self.allow_popen_binary = allow_popen_binary
        self.popen_executables = [os.path.realpath(p) for p in popen_executables]
        warn_if_root()
        self.libraries = resolve_libraries(load_library)
        self.retry_period, self.max_retry = retry_period, max_retry
        self.ping_period, self.unmatch_timeout = ping_period, unmatch_timeout

        self._loop = EventLoop("pytvm-rpc-server", on_stop=self._shutdown)
        self._done = threading.Event()
        self._idle = threading.Condition()
        self._open(port, port_end, reuse_addr)
        self._init_link_state()

        try:
            if tracker_addr is not None:  # registered before returning (see _server_links)
                self._tracker_connect()
        except BaseException:
            self._shutdown()
            raise
        if is_proxy:
            self._dial_later(0.0)
        self._queue_refill()
        self._loop.start()

    def _open(self, port: int, port_end: int | None, reuse_addr: bool) -> None:
        """Bind the listening socket (unless in proxy mode), then start the fork server."""
        self._pending: dict[int, PendingHandshake] = {}
        self._accepting = not self.is_proxy
        self._listen: socket.socket | None = None
        if self.is_proxy:
            self.port = port
        else:
            self._listen = bind_first_free_port(self.host, port, port_end, reuse_addr)
            self._listen.setblocking(False)
            self.port = self._listen.getsockname()[1]
        try:
            self._init_worker_state()  # the fork server is ready when this returns
        except BaseException:
            if self._listen is not None:
                self._listen.close()
            raise
        if self._listen is not None:
            self._loop.add_reader(self._listen, self._on_accept)
            self._info("rpc server listening on %s:%d", self.host, self.port)

    def _init_link_state(self) -> None:
        """The tracker and proxy links' state (the loop thread's only)."""
        self._tracker: socket.socket | None = None
        self._match_key = self.key
        self._old_keys: set[str] = set()
        self._tracker_busy = False
        self._unmatched = 0
        self._poll_timer: Timer | None = None
        self._proxy: socket.socket | None = None
        self._proxy_retries = 0
        self._dial_timer: Timer | None = None
        self._dialed_at = 0.0

    # ------------------------------------------------------------------ public
    def terminate(self) -> None:
        """Stop serving: end the loop, kill live session workers, leave the tracker.

        Idempotent, and safe to call from a signal handler while :meth:`wait` blocks.
        """
        self._loop.stop()
        self._loop.join(timeout=30)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the server has stopped; False if ``timeout`` seconds passed first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            step = 0.5 if deadline is None else min(0.5, max(0.0, deadline - time.monotonic()))
            if self._done.wait(step):  # short steps keep signal handlers running promptly
                return True
            if deadline is not None and time.monotonic() >= deadline:
                return False

    def wait_idle(self, timeout: float | None = None) -> bool:
        """Block until no session worker is alive (every accepted connection has been served and
        reaped) and the pool of spare workers is full, none of them holding this process's
        descriptors any more; False if ``timeout`` seconds passed first.
        """
        with self._idle:
            return self._idle.wait_for(self._is_idle, timeout)

    @property
    def session_count(self) -> int:
        """Sessions currently alive (serving, or accepted and waiting for their worker)."""
        return len(self._workers) + len(self._waiting)

    def __enter__(self) -> Server:
        return self

    def __exit__(self, *exc: object) -> None:
        self.terminate()

    # ------------------------------------------------------------------ loop
    def _info(self, msg: str, *args: Any) -> None:
        if not self.silent:
            logger.info(msg, *args)

    def _shutdown(self) -> None:
        """On the loop thread once it stopped: close every connection, kill every worker."""
        self._close_handshakes()
        self._stop_workers()
        for sock in (self._listen, self._tracker, self._proxy):
            if sock is not None:
                self._loop.unwatch(sock)
                sock.close()
        self._listen = self._tracker = self._proxy = None
        with self._idle:
            self._done.set()
            self._idle.notify_all()
        self._info("rpc server on port %d stopped", self.port)

    # ------------------------------------------------------------------ sessions
    def _admit(self, conn: socket.socket, peer: str, client_key: str) -> None:
        """Decide on a complete handshake key: refuse it, or start its session and answer."""
        try:
            head, options = split_key_options(client_key)
        except ProtocolError as err:
            reason: str | None = f"bad handshake key: {err}"
        else:
            reason = self._refusal(head, options)
        if reason is not None:
            logger.warning("refused rpc client %s: %s", peer, reason)
            refuse(conn)
            return
        conn.setblocking(True)  # the worker shares the file status flags: blocking from now on
        tracked = self.tracker_addr is not None
        if tracked:
            self._tracker_busy = True  # claimed now: the worker may take a moment to come
        self._start_worker(
            conn, peer, client_key, partial(self._admitted, conn, peer, options, tracked)
        )

    def _admitted(
        self,
        conn: socket.socket,
        peer: str,
        options: dict[str, str],
        tracked: bool,
        worker: Worker | None,
    ) -> None:
        """A worker has the connection (None: none came): answer the client, start the
        session's clock.
        """
        if worker is None:
            refuse(conn)
            if tracked:
                self._tracker_busy = False
            return
        try:  # a few bytes on a fresh connection: the send buffer takes them at once
            send_key(conn, RPC_MAGIC, "server:" + self.key)
        except OSError as err:  # the client left; its worker sees the close and exits
            self._info("rpc client %s left before the handshake reply: %s", peer, err)
        self._start_session(worker, options)
        self._spare_failures = 0
        worker.tracker_session = tracked
        self._info("rpc session for %s started (worker %d)", peer, worker.pid)

    def _refusal(self, head: str, options: dict[str, str]) -> str | None:
        """Why a client key is refused (the log line's words), or None."""
        if self.tracker_addr is not None:
            where = f"{self.tracker_addr[0]}:{self.tracker_addr[1]}"
            if self._tracker_busy:
                return (
                    f"a session assigned by tracker {where} is running (one at a time); "
                    f"{head!r} is not valid now"
                )
            if head == "client:" + self.key:
                return (
                    f"key {head!r} is the plain key, but this server is registered with tracker "
                    f"{where} and only accepts sessions requested through it"
                )
            if head != "client:" + self._match_key:
                return (
                    f"key mismatch: {head!r} is not the match key tracker {where} hands out "
                    "now (used, expired or never issued)"
                )
        elif head != "client:" + self.key:
            return f"key mismatch: got {head!r}, expected 'client:{self.key}'"
        if self.max_sessions is not None:
            live = sum(1 for w in self._workers.values() if not w.over) + len(self._waiting)
            if live >= self.max_sessions:
                return f"at the session limit (max_sessions={self.max_sessions}, {live} running)"
        return self._token_refusal(options, head)

    def _token_refusal(self, options: dict[str, str], head: str = "") -> str | None:
        if self.auth_token is not None:
            if "tokenmac" in options:  # a tracker-assigned session: a MAC of its match key
                return session_mac_refusal(self.auth_token, head, options["tokenmac"])
            token = options.get("token")
            if token is None:
                return "missing auth token (the key needs ' -token=<token>')"
            if not hmac.compare_digest(token.encode(), self.auth_token.encode()):
                return "wrong auth token"
        return None

    def _session_over(self, worker: Worker) -> None:
        """Free what a session held (its worker said so, or exited): the tracker slot, the proxy."""
        if worker.over or self._loop.stop_requested.is_set():
            return
        worker.over = True
        if worker.tracker_session:
            self._tracker_busy = False
            if self._tracker is not None:
                self._put_new_key()
        elif worker.proxy_session:
            self._dial_later(0.0)


def _check_key(key: str, tracker_addr: tuple[str, int] | None) -> None:
    """A ``TVMValueError`` unless ``key`` is a single token, present when a tracker is used."""
    if tracker_addr is not None and not key:
        raise TVMValueError("a server registered with a tracker needs a key; pass key=...")
    if " " in key:
        raise TVMValueError(f"rpc key {key!r} contains a space; keys are single tokens")


def _limit(name: str, value: float | None) -> float:
    """A time limit parameter in seconds (None or 0: none, returned as 0.0); a clear error for
    a negative, infinite or non-numeric one.
    """
    if not value:
        return 0.0
    seconds = float(value)
    if not 0.0 < seconds < float("inf"):
        raise TVMValueError(f"{name} must be a positive number of seconds or None, got {value!r}")
    return seconds
