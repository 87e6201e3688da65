"""``TVMBackendParallelLaunch``: every task of a launch runs exactly once, tasks run on several
threads at once when they wait for each other, a worker's error reaches the launching thread,
and a launch never waits for a worker that did not take a task.
"""

from __future__ import annotations

import ctypes
import threading
from collections import Counter
from collections.abc import Callable

import numpy as np
import pytest

import pytvm
from pytvm import runtime, te
from pytvm.ffi.host_library import runtime_library


class _GroupEnv(ctypes.Structure):
    _fields_ = [("sync_handle", ctypes.c_void_p), ("num_task", ctypes.c_int32)]


_LAMBDA = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.POINTER(_GroupEnv), ctypes.c_void_p)


def _launch(body: Callable[[int, int, int], int], cdata: int, num_task: int) -> int:
    lib = runtime_library()
    launch = lib.pytvm_TVMBackendParallelLaunch
    launch.argtypes = [_LAMBDA, ctypes.c_void_p, ctypes.c_int]
    launch.restype = ctypes.c_int

    def call(task: int, env: ctypes._Pointer[_GroupEnv], data: int | None) -> int:
        return body(task, env.contents.num_task, data or 0)

    return int(launch(_LAMBDA(call), ctypes.c_void_p(cdata), num_task))


def test_every_task_runs_once_with_its_own_launch() -> None:
    for launch_id in range(1, 301):
        num_task = 2 + launch_id % 5
        seen: Counter[tuple[int, int, int]] = Counter()
        lock = threading.Lock()

        def body(task: int, count: int, data: int) -> int:
            with lock:
                seen[(task, count, data)] += 1
            return 0

        assert _launch(body, launch_id, num_task) == 0
        assert seen == Counter({(t, num_task, launch_id): 1 for t in range(num_task)})


def test_tasks_run_on_several_threads_at_once() -> None:
    # Task 0 waits until task 1 has started: the launch completes only if another thread
    # takes task 1 while the launching thread is still in task 0.
    started = threading.Event()
    threads: set[int] = set()

    def body(task: int, count: int, data: int) -> int:
        threads.add(threading.get_ident())
        if task == 0:
            return 0 if started.wait(timeout=60) else -1
        started.set()
        return 0

    assert _launch(body, 0, 2) == 0
    assert len(threads) == 2


def test_a_worker_error_reaches_the_launching_thread() -> None:
    lib = runtime_library()
    lib.pytvm_TVMAPISetLastError.argtypes = [ctypes.c_char_p]
    lib.pytvm_TVMGetLastError.restype = ctypes.c_char_p
    started = threading.Event()

    def body(task: int, count: int, data: int) -> int:
        if task == 0:  # holds the launching thread until a worker has taken task 1
            return 0 if started.wait(timeout=60) else -1
        started.set()
        lib.pytvm_TVMAPISetLastError(b"ValueError: task 1 refused its input")
        return -1

    assert _launch(body, 0, 2) == -1
    assert b"task 1 refused its input" in lib.pytvm_TVMGetLastError()
    assert _launch(lambda task, count, data: 0, 0, 2) == 0  # the next launch is clean


def test_more_threads_than_cores_stay_correct_and_finish() -> None:
    n = 1 << 14
    a = te.placeholder((n,), name="a")
    b = te.compute((n,), lambda i: a[i] * 2.0 + 1.0, name="b")
    s = te.create_schedule(b.op)
    outer, inner = s[b].split(b.op.axis[0], factor=64)
    s[b].parallel(outer)
    s[b].vectorize(inner)
    f = pytvm.build(s, [a, b], target="llvm")
    x = pytvm.nd.array(np.arange(n, dtype="float32"))
    y = pytvm.nd.empty((n,), "float32")
    try:
        runtime.set_num_threads(8)
        for _ in range(2000):
            f(x, y)
    finally:
        runtime.set_num_threads(0)
    np.testing.assert_array_equal(y.numpy(), np.arange(n, dtype="float32") * 2 + 1)


@pytest.mark.parametrize("num_task", [3, 7])
def test_explicit_task_counts_above_the_pool_size(num_task: int) -> None:
    seen: list[int] = []
    lock = threading.Lock()

    def body(task: int, count: int, data: int) -> int:
        with lock:
            seen.append(task)
        return 0 if count == num_task else -1

    try:
        runtime.set_num_threads(2)
        assert _launch(body, 0, num_task) == 0
    finally:
        runtime.set_num_threads(0)
    assert sorted(seen) == list(range(num_task))
