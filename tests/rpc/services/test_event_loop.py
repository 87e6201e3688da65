"""The event loop every RPC service runs on: timers, thread-safe calls, idle work, fd watches."""

from __future__ import annotations

import logging
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from pytvm.rpc.services._event_loop import EventLoop
from pytvm.rpc.services.proxy import Proxy
from pytvm.rpc.services.server import Server
from pytvm.rpc.services.tracker import Tracker


@pytest.fixture
def loop() -> Iterator[EventLoop]:
    ev = EventLoop("test-loop")
    yield ev
    ev.stop()
    assert ev.join(5)


def _on_loop(loop: EventLoop, fn: Callable[[], object]) -> None:
    """Run ``fn`` on the loop thread and wait for it."""
    done = threading.Event()

    def run() -> None:
        fn()
        done.set()

    loop.call_soon_threadsafe(run)
    assert done.wait(5)


def test_timers_fire_in_deadline_order_and_cancelled_ones_never(loop: EventLoop) -> None:
    fired: list[str] = []
    last = threading.Event()

    def late() -> None:
        fired.append("late")
        last.set()

    loop.call_later(0.06, late)
    loop.call_later(0.02, lambda: fired.append("early"))
    loop.call_later(0.04, lambda: fired.append("cancelled")).cancel()
    loop.start()
    assert last.wait(5)
    assert fired == ["early", "late"]


def test_many_cancelled_timers_are_dropped_from_the_heap(loop: EventLoop) -> None:
    loop.start()
    sizes: list[int] = []

    def churn() -> None:
        for _ in range(1000):  # e.g. handshakes that complete long before their deadline
            loop.call_later(60.0, lambda: None).cancel()
        sizes.append(len(loop._timers))

    _on_loop(loop, churn)
    assert sizes[0] <= 2 * 64 + 1


def test_call_soon_threadsafe_wakes_a_blocked_loop(loop: EventLoop) -> None:
    loop.start()  # nothing to wait for: select blocks without a timeout
    seen: list[bool] = []
    _on_loop(loop, lambda: seen.append(loop.in_loop_thread()))
    assert seen == [True]


def test_idle_callbacks_wait_for_quiet_and_run_one_per_turn(loop: EventLoop) -> None:
    a, b = socket.socketpair()
    order: list[str] = []
    done = threading.Event()

    def readable() -> None:
        order.append("event:" + a.recv(1).decode())

    def idle(name: str) -> None:
        order.append(name)
        if name == "idle2":
            done.set()

    b.send(b"x")  # pending before the loop starts: it is served before any idle work
    loop.add_reader(a, readable)
    loop.call_when_idle(lambda: idle("idle1"))
    loop.call_when_idle(lambda: idle("idle2"))
    loop.start()
    assert done.wait(5)
    assert order == ["event:x", "idle1", "idle2"]
    _on_loop(loop, lambda: loop.unwatch(a))
    a.close()
    b.close()


def test_a_failing_callback_is_logged_and_the_loop_goes_on(
    loop: EventLoop, caplog: pytest.LogCaptureFixture
) -> None:
    loop.start()
    with caplog.at_level(logging.ERROR, logger="pytvm.rpc"):

        def fail() -> None:
            raise ZeroDivisionError("a broken handler")

        _on_loop(loop, lambda: loop.call_soon(fail))
        _on_loop(loop, lambda: None)  # still serving
    assert "error in event handler" in caplog.text


def test_a_watch_closed_earlier_in_the_same_batch_is_not_dispatched(loop: EventLoop) -> None:
    a1, b1 = socket.socketpair()
    a2, b2 = socket.socketpair()
    calls: list[str] = []
    both = threading.Event()

    def first(mine: socket.socket, other: socket.socket) -> None:
        calls.append(mine.recv(1).decode())
        loop.unwatch(other)  # whichever runs first closes the other one
        other.close()
        both.set()

    loop.add_reader(a1, lambda: first(a1, a2))
    loop.add_reader(a2, lambda: first(a2, a1))
    b1.send(b"1")
    b2.send(b"2")  # both readable in one select batch
    loop.start()
    assert both.wait(5)
    _on_loop(loop, lambda: None)
    assert len(calls) == 1
    for sock in (a1, a2, b1, b2):
        sock.close()


def test_stop_from_another_thread_runs_on_stop_on_the_loop_thread() -> None:
    where: list[bool] = []
    ev = EventLoop("test-stop", on_stop=lambda: where.append(ev.in_loop_thread()))
    ev.start()
    ev.stop()
    assert ev.join(5)
    assert where == [True] and ev.closed.is_set()


def test_server_tracker_and_proxy_each_run_one_event_loop_thread() -> None:
    before = set(threading.enumerate())
    with Tracker(port=0, silent=True) as tracker, Proxy(port=0) as proxy:
        with Server(port=0, key="k", silent=True, spare_workers=0) as server:
            loops = [tracker.loop, proxy.loop, server._loop]
            assert all(isinstance(x, EventLoop) for x in loops)
            new = set(threading.enumerate()) - before
            assert {t.name for t in new} == {x.name for x in loops}
