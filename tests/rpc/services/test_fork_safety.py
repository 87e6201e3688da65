"""A server in this process never forks it: subprocesses and C builds run beside a serving server,
the session workers come from a single-threaded fork server that holds this process's global
functions, and stopping the server (or losing this process) leaves no process behind.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import te
from pytvm.ffi.errors import TVMError
from pytvm.ffi.libinfo import compile_shared
from pytvm.rpc.services.fork_server import thread_count
from pytvm.rpc.services.server import Server
from pytvm.rpc.sessions.client import connect

#: Seconds any one guarded step may take before the test fails instead of hanging the suite.
GUARD = 30.0

#: The threads that called ``os.fork`` in this process while a test watched.
_FORKS: list[str] = []
_WATCHING = threading.Event()


def _note_fork() -> None:
    if _WATCHING.is_set():
        _FORKS.append(threading.current_thread().name)


os.register_at_fork(before=_note_fork)


@contextlib.contextmanager
def forks_in_this_process() -> Iterator[list[str]]:
    """The names of the threads that call ``os.fork`` in this process meanwhile (``subprocess``
    starts its children without ``os.fork``, so they do not count).
    """
    _FORKS.clear()
    _WATCHING.set()
    try:
        yield _FORKS
    finally:
        _WATCHING.clear()


@contextlib.contextmanager
def guard(seconds: float, what: str) -> Iterator[None]:
    """Raise TimeoutError in the main thread after ``seconds`` (``subprocess.run``'s timeout
    does not cover a child that never reports its exec: that read happens before it starts).
    """

    def expire(_signum: int, _frame: Any) -> None:
        raise TimeoutError(f"{what} took longer than {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@contextlib.contextmanager
def busy_clients(port: int, count: int = 2) -> Iterator[list[int]]:
    """``count`` threads opening sessions and calling a function in a loop (so the server
    keeps handing out spares and asking for new ones); yields the list of completed sessions
    per thread, and re-raises a client's error at the end.
    """
    stop = threading.Event()
    done = [0] * count
    errors: list[BaseException] = []

    def run(index: int) -> None:
        while not stop.is_set():
            try:
                sess = connect("127.0.0.1", port, key="k", connect_timeout=GUARD)
                assert sess.get_function("rpc.test.addone")(1) == 2
                sess.close()
            except BaseException as err:
                errors.append(err)
                return
            done[index] += 1

    threads = [threading.Thread(target=run, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    try:
        yield done
    finally:
        stop.set()
        for thread in threads:
            thread.join(GUARD)
    if errors:
        raise errors[0]


def _kernel(n: int) -> tuple[te.Schedule, list[te.Tensor]]:
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] * 2.0 + 1.0, name="B")
    return te.create_schedule(B.op), [A, B]


def _descendants(pid: int) -> set[int]:
    """Live (not zombie) processes below ``pid``."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if fields[0] != "Z":
                children.setdefault(int(fields[1]), []).append(int(entry.name))
    found, todo = set(), [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def _wait_until(condition: Callable[[], bool], seconds: float = GUARD) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.02)
    return True


def test_subprocesses_beside_a_serving_server_never_hang() -> None:
    times = []
    with forks_in_this_process() as forks:
        with Server(port=0, key="k", silent=True, spare_workers=2) as server:
            with busy_clients(server.port) as done:
                for _ in range(200):
                    start = time.monotonic()
                    with guard(GUARD, "subprocess.run beside a serving rpc server"):
                        subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=GUARD)
                    times.append(time.monotonic() - start)
            assert sum(done) > 0  # sessions ran meanwhile: spares were handed out and renewed
    assert max(times) < 1.0, f"max {max(times):.3f} s, median {statistics.median(times):.3f} s"
    assert forks == []  # a fork from a process with threads is what hangs subprocess


def test_subprocesses_right_after_a_server_starts_never_hang() -> None:
    # While a server starts, its spares are forked: the moment a fork from this process would
    # most likely catch a subprocess halfway.
    times = []
    with forks_in_this_process() as forks:
        for _ in range(10):
            with Server(port=0, key="k", silent=True, spare_workers=4):
                for _ in range(10):
                    start = time.monotonic()
                    with guard(GUARD, "subprocess.run beside a starting rpc server"):
                        subprocess.run([sys.executable, "-c", "pass"], check=True, timeout=GUARD)
                    times.append(time.monotonic() - start)
    assert max(times) < 1.0, f"max {max(times):.3f} s, median {statistics.median(times):.3f} s"
    assert forks == []


@pytest.mark.needs_cc
def test_c_builds_beside_a_serving_server(tmp_path: Path) -> None:
    with forks_in_this_process() as forks:
        with Server(port=0, key="k", silent=True, spare_workers=2) as server:
            with busy_clients(server.port) as done:
                for n in range(17, 23):  # distinct shapes: every build runs the C compiler
                    s, args = _kernel(n)
                    with guard(GUARD, f"a C build (n={n}) beside a serving rpc server"):
                        mod = pytvm.build(s, args, target="c", name=f"k{n}", cache_dir=tmp_path)
                    a = pytvm.nd.array(np.arange(n, dtype="float32"))
                    b = pytvm.nd.empty((n,), "float32")
                    mod[f"k{n}"](a, b)
                    np.testing.assert_array_equal(b.numpy(), np.arange(n) * 2.0 + 1.0)
            assert sum(done) > 0
    assert forks == []


def test_a_lambda_registered_after_the_server_started_is_in_the_next_session() -> None:
    with Server(port=0, key="k", silent=True) as server:
        assert server.wait_idle(GUARD)  # spares forked before the registration
        factor = 7
        pytvm.register_func("testing.fork.times", lambda x: x * factor, override=True)
        try:
            sess = connect("127.0.0.1", server.port, key="k")
            assert sess.get_function("testing.fork.times")(6) == 42
            sess.close()
            pytvm.remove_global_func("testing.fork.times")
            sess = connect("127.0.0.1", server.port, key="k")
            with pytest.raises(AttributeError, match=r"testing\.fork\.times"):
                sess.get_function("testing.fork.times")
            sess.close()
        finally:
            with contextlib.suppress(Exception):
                pytvm.remove_global_func("testing.fork.times")


def test_a_function_that_cannot_be_sent_is_logged_and_absent(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="pytvm.rpc.server")
    lock = threading.Lock()  # no pickle for a lock
    pytvm.register_func("testing.fork.locked", lock.locked, override=True)
    try:
        with Server(port=0, key="k", silent=True) as server:
            for _ in range(2):
                sess = connect("127.0.0.1", server.port, key="k")
                assert sess.get_function("rpc.test.addone")(1) == 2
                with pytest.raises(AttributeError, match=r"testing\.fork\.locked"):
                    sess.get_function("testing.fork.locked")
                sess.close()
    finally:
        pytvm.remove_global_func("testing.fork.locked")
    lines = [r.getMessage() for r in caplog.records if "testing.fork.locked" in r.getMessage()]
    assert len(lines) == 1, lines  # once, naming it and why
    assert "cannot be pickled" in lines[0] and "lock" in lines[0]


def _cpu_api_is_the_runtimes() -> bool:
    from pytvm.runtime import device_api

    return bool(pytvm.get_global_func("device_api.cpu")() is device_api._CPU_API)


def test_functions_the_fork_server_registered_itself_are_not_replaced_by_copies() -> None:
    # ``device_api.cpu`` is a lambda registered when the runtime is imported, in both processes:
    # a pickled copy of this process's would return a copy of its CPU device API.
    pytvm.register_func("testing.fork.cpu_api", _cpu_api_is_the_runtimes, override=True)
    try:
        with Server(port=0, key="k", silent=True) as server:
            sess = connect("127.0.0.1", server.port, key="k")
            assert sess.get_function("testing.fork.cpu_api")()
            sess.close()
    finally:
        pytvm.remove_global_func("testing.fork.cpu_api")


def _fork_server_env(name: str) -> str:
    return os.environ.get(name, "")


def _mark_fork_server() -> None:
    os.environ["PYTVM_TEST_PREFORK"] = str(os.getpid())


def test_prefork_callback_runs_once_in_the_fork_server() -> None:
    pytvm.register_func("testing.fork.env", _fork_server_env, override=True)
    try:
        with Server(port=0, key="k", silent=True, prefork_callback=_mark_fork_server) as server:
            for _ in range(2):
                sess = connect("127.0.0.1", server.port, key="k")
                marked = sess.get_function("testing.fork.env")("PYTVM_TEST_PREFORK")
                assert marked == str(server.fork_server_pid)
                sess.close()
        assert "PYTVM_TEST_PREFORK" not in os.environ
    finally:
        pytvm.remove_global_func("testing.fork.env")


def test_a_library_that_does_not_load_fails_the_constructor(tmp_path: Path) -> None:
    bad = tmp_path / "bad.so"
    bad.write_text("not a shared object")
    with pytest.raises(TVMError, match=r"cannot load .*bad\.so: a text file"):
        Server(port=0, key="k", silent=True, load_library=str(bad))
    src = tmp_path / "unresolved.c"  # a sound shared object that the loader still refuses
    src.write_text(
        "extern int pytvm_no_such_symbol(void);\nint f(void) { return pytvm_no_such_symbol(); }\n"
    )
    unresolved = compile_shared([src], tmp_path / "unresolved.so")
    with pytest.raises(TVMError, match=r"load_library '.*unresolved\.so' does not load"):
        Server(port=0, key="k", silent=True, load_library=str(unresolved))


def test_an_init_callback_that_cannot_be_sent_fails_the_constructor() -> None:
    lock = threading.Lock()
    with pytest.raises(TypeError, match=r"server_init_callback .* cannot be sent"):
        Server(port=0, key="k", silent=True, server_init_callback=lock.acquire)


def _fail() -> None:
    raise RuntimeError("no emulator here")


def test_a_failing_prefork_callback_fails_the_constructor() -> None:
    with pytest.raises(TVMError, match="no emulator here"):
        Server(port=0, key="k", silent=True, prefork_callback=_fail)


def test_the_fork_server_runs_one_thread() -> None:
    with Server(port=0, key="k", silent=True, spare_workers=2) as server:
        assert server.wait_idle(GUARD)
        assert thread_count(server.fork_server_pid) == 1


def test_stopping_the_server_leaves_no_process() -> None:
    with Server(port=0, key="k", silent=True, spare_workers=2) as server:
        sess = connect("127.0.0.1", server.port, key="k")
        assert sess.get_function("rpc.test.addone")(1) == 2
        fork_server = server.fork_server_pid
        assert _wait_until(lambda: len(_descendants(fork_server)) == 3)  # the session's, 2 spares
        workers = _descendants(fork_server)
    assert not _alive(fork_server)
    assert not [pid for pid in workers if _alive(pid)]


def test_a_killed_fork_server_is_replaced() -> None:
    with Server(port=0, key="k", silent=True, spare_workers=1) as server:
        first = server.fork_server_pid
        assert server.wait_idle(GUARD)
        spares = _descendants(first)
        os.kill(first, signal.SIGKILL)
        assert _wait_until(lambda: server.fork_server_pid != first)
        assert not [pid for pid in spares if _alive(pid)]  # they die with it
        sess = connect("127.0.0.1", server.port, key="k")
        assert sess.get_function("rpc.test.addone")(1) == 2
        sess.close()


_SERVER_SCRIPT = """
import sys, time
from pytvm.rpc.services.server import Server
server = Server(port=0, key="k", silent=True, spare_workers=2)
assert server.wait_idle(30)
print(server.fork_server_pid, flush=True)
time.sleep(600)
"""


def test_the_fork_server_and_its_workers_die_with_the_server_process() -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER_SCRIPT], stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None
        with guard(GUARD, "starting a server process"):
            fork_server = int(proc.stdout.readline())
        workers = _descendants(fork_server)
        assert len(workers) == 2
    finally:
        proc.kill()
        proc.wait()
    assert _wait_until(lambda: not _alive(fork_server))
    assert _wait_until(lambda: not [pid for pid in workers if _alive(pid)])
