"""Worker processes that run functions with a time limit (TVM's ``contrib.popen_pool`` under
``autotvm.measure``): :class:`PopenWorker` and :class:`PopenPoolExecutor`.

A worker is ``python -m pytvm.autotvm.measure.executor`` started with ``subprocess`` (fork and
exec: never a bare fork of this threaded process). It reads requests from one pipe and writes
replies to another, each a 8-byte little-endian length then a ``cloudpickle`` payload: the
request ``(func, args, kwargs)``, the reply ``(True, value)`` or ``(False, error text)``.
Functions travel by reference when importable (the worker imports their module), else by value.

A call that does not answer within its timeout has its worker killed (``SIGKILL``) and replaced
by a fresh one on the next call: :class:`MapResult` says ``TIMEOUT``. A worker that dies
(a crash in a compiler, ``os._exit``) gives ``EXCEPTION`` with its exit status. Workers end when
their pool closes (``shutdown``, ``with``, or ``atexit``), and on their own when the parent's pipe
closes.
"""

from __future__ import annotations

import atexit
import enum
import os
import select
import struct
import subprocess
import sys
import threading
import time
import traceback
import weakref
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, NamedTuple

import cloudpickle

from ...ffi.errors import TVMError, TVMValueError

__all__ = [
    "Executor",
    "MapResult",
    "PopenPoolExecutor",
    "PopenWorker",
    "StatusKind",
    "WorkerTimeoutError",
]

_HEADER = struct.Struct("<Q")


class WorkerTimeoutError(TVMError, TimeoutError):
    """A call to a worker did not answer within its timeout (the worker was killed)."""


class StatusKind(enum.IntEnum):
    """How a call ended (TVM's ``popen_pool.StatusKind``)."""

    COMPLETE = 0
    EXCEPTION = 1
    TIMEOUT = 2


class MapResult(NamedTuple):
    """A call's status and its value (the error text for ``EXCEPTION`` / ``TIMEOUT``)."""

    status: StatusKind
    value: Any


_LIVE: weakref.WeakSet[PopenWorker] = weakref.WeakSet()


def _kill_all() -> None:
    for worker in list(_LIVE):
        worker.kill()


atexit.register(_kill_all)


def _read_exact(fd: int, n: int, deadline: float | None) -> bytes:
    chunks: list[bytes] = []
    while n:
        if deadline is not None:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise WorkerTimeoutError("the worker did not answer in time")
        chunk = os.read(fd, min(n, 1 << 20))
        if not chunk:
            raise EOFError("the peer closed the pipe")
        chunks.append(chunk)
        n -= len(chunk)
    return b"".join(chunks)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _send(fd: int, obj: Any) -> None:
    payload = cloudpickle.dumps(obj)
    _write_all(fd, _HEADER.pack(len(payload)) + payload)


def _recv(fd: int, deadline: float | None) -> Any:
    (size,) = _HEADER.unpack(_read_exact(fd, _HEADER.size, deadline))
    return cloudpickle.loads(_read_exact(fd, size, deadline))


class PopenWorker:
    """One worker process; :meth:`call` runs a function there with a timeout.

    Examples
    --------
    >>> w = PopenWorker()
    >>> w.call(divmod, (7, 2), timeout=60)
    (3, 1)
    >>> _ = w.kill()
    """

    def __init__(
        self, initializer: Callable[..., Any] | None = None, initargs: Sequence[Any] = ()
    ) -> None:
        self._initializer = initializer
        self._initargs = tuple(initargs)
        self._proc: subprocess.Popen[bytes] | None = None
        self._to_worker = self._from_worker = -1

    def _start(self) -> None:
        req_r, req_w = os.pipe()
        rep_r, rep_w = os.pipe()
        try:
            self._proc = subprocess.Popen(
                [sys.executable, "-m", "pytvm.autotvm.measure.executor", str(req_r), str(rep_w)],
                pass_fds=(req_r, rep_w),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                start_new_session=True,
            )
        finally:
            os.close(req_r)
            os.close(rep_w)
        self._to_worker, self._from_worker = req_w, rep_r
        _LIVE.add(self)
        if self._initializer is not None:
            self.call(self._initializer, self._initargs, timeout=120.0)

    def call(
        self,
        func: Callable[..., Any],
        args: Sequence[Any] = (),
        kwargs: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Any:
        """``func(*args, **kwargs)`` in the worker (started on first use).

        Raises
        ------
        WorkerTimeoutError
            No answer within ``timeout`` seconds; the worker is killed.
        TVMError
            ``func`` raised (the message carries the worker's traceback) or the worker died.
        """
        if self._proc is None or self._proc.poll() is not None:
            self.kill()
            self._start()
        deadline = None if timeout is None else time.monotonic() + timeout
        try:
            _send(self._to_worker, (func, tuple(args), dict(kwargs or {})))
            ok, value = _recv(self._from_worker, deadline)
        except WorkerTimeoutError:
            self.kill()
            raise WorkerTimeoutError(
                f"{getattr(func, '__name__', func)} did not finish within {timeout:g} s; "
                "its worker process was killed"
            ) from None
        except (EOFError, OSError) as err:
            status = self.kill()
            raise TVMError(
                f"worker process running {getattr(func, '__name__', func)} died "
                f"(exit status {status}): {err}"
            ) from None
        if not ok:
            raise TVMError(str(value))
        return value

    def kill(self) -> int | None:
        """Kill the worker (if running) and close its pipes; its exit status."""
        status = None
        if self._proc is not None:
            if self._proc.poll() is None:
                self._proc.kill()
            try:
                status = self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                status = None
            self._proc = None
        for fd in (self._to_worker, self._from_worker):
            if fd >= 0:
                os.close(fd)
        self._to_worker = self._from_worker = -1
        _LIVE.discard(self)
        return status

    def __del__(self) -> None:
        if getattr(self, "_proc", None) is not None:
            self.kill()


class Executor:
    """What runs functions for the measuring (TVM's ``autotvm.measure.executor.Executor``):
    ``submit(fn, *args, **kwargs)`` returns a ``concurrent.futures.Future`` of the call.
    """

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)``; its result or exception comes through the future."""
        raise NotImplementedError(f"{type(self).__name__}.submit: an Executor defines submit()")


class PopenPoolExecutor(Executor):
    """``max_workers`` worker processes behind a thread per worker (TVM's name and methods).

    ``submit(fn, *args)`` returns a ``concurrent.futures.Future``; ``map_with_error_catching``
    gives one :class:`MapResult` per item, in order. Each call may take ``timeout`` seconds.

    Examples
    --------
    >>> with PopenPoolExecutor(max_workers=1, timeout=60) as pool:
    ...     [r.value for r in pool.map_with_error_catching(abs, [-1, 2])]
    [1, 2]
    """

    def __init__(
        self,
        max_workers: int | None = None,
        timeout: float | None = None,
        initializer: Callable[..., Any] | None = None,
        initargs: Sequence[Any] = (),
    ) -> None:
        n = max_workers if max_workers is not None else (os.cpu_count() or 1)
        if n < 1:
            raise TVMValueError(f"PopenPoolExecutor: max_workers={n}; expected at least 1")
        if timeout is not None and timeout <= 0:
            raise TVMValueError(f"PopenPoolExecutor: timeout={timeout}; expected seconds > 0")
        self.max_workers, self.timeout = n, timeout
        self._idle = [PopenWorker(initializer, initargs) for _ in range(n)]
        self._all = list(self._idle)
        self._lock = threading.Lock()
        self._threads = ThreadPoolExecutor(max_workers=n, thread_name_prefix="popen-pool")

    def _run(self, fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
        with self._lock:
            worker = self._idle.pop()
        try:
            return worker.call(fn, args, kwargs, timeout=self.timeout)
        finally:
            with self._lock:
                self._idle.append(worker)

    def submit(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Future[Any]:
        """Run ``fn(*args, **kwargs)`` in a free worker; its future."""
        return self._threads.submit(self._run, fn, args, kwargs)

    def map_with_error_catching(
        self, fn: Callable[[Any], Any], iterator: Iterable[Any]
    ) -> list[MapResult]:
        """``fn(item)`` for each item, each as a :class:`MapResult` (never raises for a call)."""
        futures = [self.submit(fn, item) for item in iterator]
        out: list[MapResult] = []
        for fut in futures:
            try:
                out.append(MapResult(StatusKind.COMPLETE, fut.result()))
            except WorkerTimeoutError as err:
                out.append(MapResult(StatusKind.TIMEOUT, str(err)))
            except Exception as err:
                out.append(MapResult(StatusKind.EXCEPTION, str(err)))
        return out

    def shutdown(self) -> None:
        """Stop the threads and kill every worker."""
        self._threads.shutdown(wait=True)
        for worker in self._all:
            worker.kill()

    def __enter__(self) -> PopenPoolExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _serve(req_fd: int, rep_fd: int) -> int:
    """The worker's loop: answer requests until the parent closes the pipe."""
    while True:
        try:
            func, args, kwargs = _recv(req_fd, None)
        except EOFError:
            return 0
        except Exception:
            _send(rep_fd, (False, f"cannot decode the request:\n{traceback.format_exc()}"))
            continue
        try:
            reply: tuple[bool, Any] = (True, func(*args, **kwargs))
        except Exception as err:
            name = type(err).__name__
            reply = (False, f"{name}: {err}\n{traceback.format_exc()}")
        try:
            _send(rep_fd, reply)
        except Exception:
            _send(rep_fd, (False, f"cannot send the result back:\n{traceback.format_exc()}"))


if __name__ == "__main__":
    sys.exit(_serve(int(sys.argv[1]), int(sys.argv[2])))
