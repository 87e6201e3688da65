"""The single-threaded ``selectors`` event loop every RPC service runs on (server, tracker, proxy).

An :class:`EventLoop` owns a selector, a wake-up socket pair, a timer heap, a queue of callbacks
to run soon and a queue of callbacks to run when it has nothing else to do, and the background
thread that runs them. File objects are watched with a callback that receives the ready mask.
Everything is touched by the loop thread only, except :meth:`EventLoop.call_soon_threadsafe`
and :meth:`EventLoop.stop`, which any thread (or a signal handler) may call.

Order within one turn: the ready file objects (each followed by the callbacks it scheduled
with :meth:`EventLoop.call_soon`), then the due timers (likewise), then, if nothing at all
happened, one idle callback. A callback that raises is logged and the loop goes on.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import selectors
import signal
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from typing import Any

__all__ = ["EventLoop", "Timer"]

logger = logging.getLogger("pytvm.rpc")

#: Cancelled timers tolerated in the heap before it is rebuilt without them.
_CANCELLED_SLACK = 64


class Timer:
    """A callback scheduled with :meth:`EventLoop.call_later`; :meth:`cancel` stops it."""

    __slots__ = ("_loop", "callback", "cancelled", "when")

    def __init__(self, loop: EventLoop, when: float, callback: Callable[[], None]) -> None:
        self._loop = loop
        self.when = when
        self.callback = callback
        self.cancelled = False

    def cancel(self) -> None:
        """Do not run the callback (idempotent; loop thread only)."""
        if not self.cancelled:
            self.cancelled = True
            self._loop._timer_cancelled()


class EventLoop:
    """One ``selectors`` loop on a daemon thread named ``name``.

    Parameters
    ----------
    name : str
        The thread's name, also used in log lines.
    on_stop : callable, optional
        Called on the loop thread once the loop has stopped, before the selector closes
        (release what the callbacks owned here).

    Examples
    --------
    >>> import threading
    >>> loop = EventLoop("demo")
    >>> fired = threading.Event()
    >>> _ = loop.call_later(0.01, fired.set)
    >>> loop.start(); fired.wait(5)
    True
    >>> loop.stop(); loop.join(5)
    True
    """

    def __init__(self, name: str, on_stop: Callable[[], None] | None = None) -> None:
        self.name = name
        self.stop_requested = threading.Event()
        self._on_stop = on_stop
        self._selector = selectors.DefaultSelector()
        self._wake_r, self._wake_w = socket.socketpair()
        self._wake_r.setblocking(False)
        self._wake_w.setblocking(False)
        self._selector.register(self._wake_r, selectors.EVENT_READ, self._drain_wake)
        self._timers: list[tuple[float, int, Timer]] = []
        self._cancelled = 0
        self._seq = itertools.count()
        self._ready: deque[Callable[[], None]] = deque()  # append/popleft are thread-safe
        self._idle: deque[Callable[[], None]] = deque()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self.closed = threading.Event()  # set once the selector and wake-up pair are closed

    # --------------------------------------------------------------- any thread
    def start(self) -> None:
        """Start the loop thread."""
        self._thread.start()

    def stop(self) -> None:
        """Ask the loop to stop after the current callback (any thread, signal handlers too)."""
        self.stop_requested.set()
        self._wake()

    def join(self, timeout: float | None = None) -> bool:
        """Wait for the loop thread to end; False if ``timeout`` seconds passed first."""
        if self._thread.ident is None or self.in_loop_thread():
            return not self._thread.is_alive()
        self._thread.join(timeout)
        return not self._thread.is_alive()

    def in_loop_thread(self) -> bool:
        """Whether the caller runs on the loop thread."""
        return threading.current_thread() is self._thread

    def call_soon_threadsafe(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on the loop thread as soon as possible (from any thread)."""
        self._ready.append(callback)
        self._wake()

    # --------------------------------------------------------------- loop thread
    def watch(self, fileobj: Any, mask: int, callback: Callable[[int], None]) -> None:
        """Call ``callback(ready_mask)`` whenever ``fileobj`` is ready for ``mask``
        (``selectors.EVENT_READ``/``EVENT_WRITE``); replaces an earlier watch of it.
        """
        try:
            self._selector.modify(fileobj, mask, callback)
        except KeyError:
            self._selector.register(fileobj, mask, callback)

    def add_reader(self, fileobj: Any, callback: Callable[[], None]) -> None:
        """Call ``callback()`` whenever ``fileobj`` is readable."""
        self.watch(fileobj, selectors.EVENT_READ, lambda _mask: callback())

    def unwatch(self, fileobj: Any) -> None:
        """Stop watching ``fileobj`` (idempotent; call it before closing the file object)."""
        try:
            self._selector.unregister(fileobj)
        except (KeyError, ValueError):
            pass

    def call_soon(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` once the current callback has returned."""
        self._ready.append(callback)

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        """Run ``callback`` after ``delay`` seconds; the returned :class:`Timer` can cancel it."""
        timer = Timer(self, time.monotonic() + max(0.0, delay), callback)
        heapq.heappush(self._timers, (timer.when, next(self._seq), timer))
        return timer

    def call_when_idle(self, callback: Callable[[], None]) -> None:
        """Run ``callback`` on a turn with no ready file object and no due timer (work that
        must not delay events, e.g. asking for spare processes). One runs per idle turn.
        """
        self._idle.append(callback)

    # --------------------------------------------------------------- the loop
    def _wake(self) -> None:
        try:
            self._wake_w.send(b"\0")
        except OSError:  # full (a wake-up is pending anyway) or closed (the loop has ended)
            pass

    def _drain_wake(self, _mask: int) -> None:
        try:
            while self._wake_r.recv(4096):
                pass
        except (BlockingIOError, InterruptedError):
            pass

    def _timer_cancelled(self) -> None:
        self._cancelled += 1
        if self._cancelled > _CANCELLED_SLACK and self._cancelled * 2 > len(self._timers):
            self._timers = [entry for entry in self._timers if not entry[2].cancelled]
            heapq.heapify(self._timers)
            self._cancelled = 0

    def _timeout(self) -> float | None:
        if self._ready or self._idle:
            return 0.0
        while self._timers and self._timers[0][2].cancelled:
            heapq.heappop(self._timers)
            self._cancelled -= 1
        if self._timers:
            return max(0.0, self._timers[0][0] - time.monotonic())
        return None

    def _guarded(self, callback: Callable[[], None]) -> None:
        try:
            callback()
        except Exception:
            logger.exception("%s: error in event handler", self.name)

    def _run_ready(self) -> None:
        for _ in range(len(self._ready)):  # not those they schedule in turn: next time
            if self.stop_requested.is_set():
                return
            self._guarded(self._ready.popleft())

    def _run_timers(self) -> bool:
        now = time.monotonic()
        fired = False
        while self._timers and self._timers[0][0] <= now and not self.stop_requested.is_set():
            _, _, timer = heapq.heappop(self._timers)
            if timer.cancelled:
                self._cancelled -= 1
                continue
            timer.cancelled = True  # fired: a later cancel() is a no-op
            fired = True
            self._guarded(timer.callback)
            self._run_ready()
        return fired

    def _turn(self) -> None:
        self._run_ready()
        events = self._selector.select(self._timeout())
        key_map = self._selector.get_map()
        for key, mask in events:
            if self.stop_requested.is_set():
                return
            # An earlier callback of this batch may have closed this file object (and a new
            # one may reuse its descriptor) or changed its watch: dispatch to the current one.
            current = key_map.get(key.fd)
            if current is None or current.fileobj is not key.fileobj:
                continue
            callback: Callable[[int], None] = current.data
            ready = mask & current.events
            if ready:
                self._guarded(lambda: callback(ready))
            self._run_ready()
        fired = self._run_timers()
        if not events and not fired and self._idle and not self.stop_requested.is_set():
            self._guarded(self._idle.popleft())
            self._run_ready()

    def _run(self) -> None:
        if hasattr(signal, "pthread_sigmask"):
            # Leave SIGINT/SIGTERM to the other threads, so the main thread's handler runs now.
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT, signal.SIGTERM})
        try:
            while not self.stop_requested.is_set():
                self._turn()
        except Exception:  # the loop must never die silently
            logger.exception("%s: event loop crashed", self.name)
        finally:
            self.stop_requested.set()
            if self._on_stop is not None:
                self._guarded(self._on_stop)
            self._selector.close()
            self._wake_r.close()
            self._wake_w.close()
            self.closed.set()
