"""Building candidates and timing them on RPC servers (TVM's ``autotvm.measure``'s
``LocalBuilder``, ``RPCRunner``, ``LocalRunner``, ``measure_option``, ``create_measure_batch``).

Flow of one batch (``create_measure_batch``): ``LocalBuilder.build`` (:mod:`.local_builder`)
instantiates and compiles each configuration in a worker process (a worker that passes
``timeout`` is killed: ``BUILD_TIMEOUT``; a template that rejects the configuration:
``INSTANTIATION_ERROR``; a compiler error: ``COMPILE_HOST``) and writes a shared library per
candidate into a temporary folder. ``RPCRunner.run`` then measures the built candidates on up to
``n_parallel`` servers at once, one thread per candidate: each leases a server of ``key`` from
the tracker, uploads the library, loads it, fills its arguments with random data (fixed seed) on
the remote device, times it with ``time_evaluator(number, repeat, min_repeat_ms)`` and compares
its outputs with the reference.

Reference (``check_correctness=True``, :mod:`.reference`): the task's default configuration (the
fallback, what an untuned build compiles) is built and run once per task in a local worker
process on the same inputs (so a faulty server can never supply it; a target that does not run
on this machine is measured unchecked, with a warning); a candidate whose outputs differ beyond
``rtol=1e-3`` and ``atol=1e-3 * max|ref|`` (float reassociation; integers exactly) is
``WRONG_ANSWER``.

Faults: every remote step is bounded. The server ends a session after ``timeout`` plus
:data:`UPLOAD_MARGIN` seconds (``session_timeout``), and the client's socket gives up two seconds
later; either is ``RUN_TIMEOUT``. A server that dies, or a session that breaks, is
``RUNTIME_DEVICE`` with the error's text; no server free within ``request_timeout``:
``RUNTIME_DEVICE`` too. The tracker drops a dead server, so the next candidates go to the others.
"""

from __future__ import annotations

import contextlib
import logging
import os
import threading
import time
import uuid
import weakref
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ...ffi.errors import RPCSessionTimeoutError, TVMError, TVMValueError
from ...rpc.services.server import Server
from ...rpc.services.tracker import Tracker
from ...rpc.sessions.tracker_client import connect_tracker
from ...runtime.ndarray import array
from ..task.space import FallbackConfigEntity
from .local_builder import FUNC_NAME, BuildResult, LocalBuilder, failed_result
from .measure import MeasureErrorNo, MeasureInput, MeasureResult, Runner
from .reference import count_outputs, random_inputs, reference_outputs

__all__ = [
    "UPLOAD_MARGIN",
    "BuildResult",
    "LocalBuilder",
    "LocalRunner",
    "RPCRunner",
    "create_measure_batch",
    "default_module_loader",
    "measure_option",
    "request_remote",
]

logger = logging.getLogger("autotvm")

#: Seconds a session is given beyond the run ``timeout`` for uploading and loading the library.
UPLOAD_MARGIN = 5.0
#: Bytes ``enable_cpu_cache_flush`` overwrites before each timed repeat (beyond a CPU's caches).
CACHE_FLUSH_BYTES = 64 << 20
#: Seconds beyond the request timeout, session timeout and upload margin before a candidate whose
#: server never answers is given up (the socket timeout applies from the session's start only).
WATCHDOG_SLACK = 3.0


def measure_option(builder: Any, runner: Any) -> dict[str, Any]:
    """TVM's measure option: ``{"builder": ..., "runner": ...}`` (``"local"`` names
    ``LocalBuilder()`` / ``LocalRunner()``).

    Examples
    --------
    >>> opt = measure_option(builder=LocalBuilder(n_parallel=1), runner="local")
    >>> type(opt["runner"]).__name__
    'LocalRunner'
    """
    if isinstance(builder, str):
        if builder != "local":
            raise TVMValueError(f"measure_option: builder {builder!r}; expected 'local' or one")
        builder = LocalBuilder()
    if isinstance(runner, str):
        if runner != "local":
            raise TVMValueError(f"measure_option: runner {runner!r}; expected 'local' or one")
        runner = LocalRunner()
    return {"builder": builder, "runner": runner}


def request_remote(
    device_key: str,
    host: str,
    port: int,
    priority: int = 1,
    timeout: float = 60,
    request_timeout: float | None = None,
) -> Any:
    """A session with a server of ``device_key`` leased from the tracker at ``host:port``
    (TVM's ``request_remote``); the server ends it after ``timeout`` seconds. Waiting for a
    free server takes at most ``request_timeout`` seconds (default ``timeout``).
    """
    if request_timeout is None:
        request_timeout = timeout
    with connect_tracker(host, port, connect_timeout=min(timeout, 10.0)) as tracker:
        return tracker.request(
            device_key, priority=priority, session_timeout=timeout, timeout=request_timeout
        )


def _bound_socket(remote: Any, seconds: float) -> None:
    """Make every receive of ``remote``'s socket give up after ``seconds``."""
    channel = getattr(getattr(remote.session, "endpoint", None), "channel", None)
    sock = getattr(channel, "sock", None)
    if sock is not None:
        sock.settimeout(seconds)


def default_module_loader(
    pre_load_function: Callable[[Any, BuildResult], None] | None = None,
) -> Callable[[dict[str, Any], BuildResult], contextlib.AbstractContextManager[Any]]:
    """TVM's module loader: ``loader(remote_kwargs, build_result)`` is a context manager giving
    ``(remote, module)``: a leased session (``request_remote(**remote_kwargs)``) with the
    candidate's library uploaded and loaded; the session is closed on exit.
    """

    @contextlib.contextmanager
    def loader(remote_kwargs: dict[str, Any], build_result: BuildResult) -> Iterator[Any]:
        remote = request_remote(**remote_kwargs)
        try:
            _bound_socket(remote, float(remote_kwargs["timeout"]) + 2.0)
            if pre_load_function is not None:
                pre_load_function(remote, build_result)
            assert build_result.filename is not None
            remote.upload(build_result.filename)
            mod = remote.load_module(Path(build_result.filename).name)
            yield remote, mod
        finally:
            with contextlib.suppress(Exception):
                remote.close()

    return loader


class RPCRunner(Runner):
    """Time built candidates on RPC servers leased from a tracker (TVM's ``RPCRunner``; see the
    module for the flow, the reference check and the faults).

    ``n_parallel``: candidates measured at once (default: the servers of ``key`` the tracker
    lists). Beyond TVM's arguments: ``check_correctness`` (compare with the default
    configuration's output), ``request_timeout`` (seconds a candidate waits for a free server)
    and ``upload_margin`` (seconds a session is given beyond ``timeout`` to upload and load).
    """

    def __init__(
        self,
        key: str,
        host: str,
        port: int,
        priority: int = 1,
        timeout: float = 10,
        n_parallel: int | None = None,
        number: int = 4,
        repeat: int = 3,
        min_repeat_ms: int = 0,
        cooldown_interval: float = 0.1,
        enable_cpu_cache_flush: bool = False,
        module_loader: Any = None,
        check_correctness: bool = True,
        request_timeout: float = 60.0,
        upload_margin: float = UPLOAD_MARGIN,
    ) -> None:
        for name, value in (("timeout", timeout), ("number", number), ("repeat", repeat)):
            if not value > 0:
                raise TVMValueError(f"RPCRunner: {name}={value!r}; expected a positive number")
        self.key, self.host, self.port, self.priority = key, host, port, priority
        self.timeout = float(timeout)
        self._n_parallel = n_parallel
        self.n_parallel = int(n_parallel) if n_parallel else 1
        self.number, self.repeat, self.min_repeat_ms = number, repeat, min_repeat_ms
        self.cooldown_interval = float(cooldown_interval)
        self.enable_cpu_cache_flush = enable_cpu_cache_flush
        self.module_loader = module_loader or default_module_loader()
        self.check_correctness = check_correctness
        self.request_timeout = float(request_timeout)
        self.upload_margin = float(upload_margin)
        self.task: Any = None
        self.n_outputs: int | None = None
        self.ref_output: list[np.ndarray] | None = None

    def get_build_kwargs(self) -> dict[str, Any]:
        """Constraints for the builder (none for CPU servers)."""
        return {}

    def _count_servers(self) -> int:
        with connect_tracker(self.host, self.port, connect_timeout=10.0) as tracker:
            info = tracker.summary()
        servers = sum(
            1
            for item in info.get("server_info", [])
            if str(item.get("key", "")).split(":", 1)[-1] == self.key
        )
        queue = info.get("queue_info", {}).get(self.key)
        if not servers and queue is None:
            raise TVMValueError(
                f"RPCRunner: tracker {self.host}:{self.port} has no server of key {self.key!r}; "
                f"known keys: {sorted(info.get('queue_info', {}))}. Start one with "
                f"'python -m pytvm.exec.rpc_server --tracker {self.host}:{self.port} "
                f"--key {self.key}'"
            )
        return max(servers, 1)

    def set_task(self, task: Any) -> None:
        """Measure ``task`` from now on: checks the tracker and computes the reference."""
        self.task = task
        servers = self._count_servers()  # raises when the tracker knows no server of the key
        if not self._n_parallel:
            self.n_parallel = servers
        self.n_outputs, self.ref_output = None, None
        check = self.check_correctness
        if check and task.target is not None and not task.target.is_host:
            logger.warning(
                "task %s: outputs are not checked: its target %s does not run on this machine, "
                "where the reference output is computed",
                task.name,
                task.target,
            )
            check = False
        if check:
            self.n_outputs, self.ref_output = reference_outputs(
                task, timeout=max(60.0, 4 * self.timeout)
            )
        else:
            self.n_outputs = count_outputs(task.instantiate(FallbackConfigEntity())[1])

    def _remote_kwargs(self) -> dict[str, Any]:
        return {
            "device_key": self.key,
            "host": self.host,
            "port": self.port,
            "priority": self.priority,
            "timeout": self.timeout + self.upload_margin,
            "request_timeout": self.request_timeout,
        }

    def _measure(self, build_result: BuildResult) -> MeasureResult:
        tic = time.perf_counter()
        assert build_result.arg_info is not None
        info = build_result.arg_info
        n_out = self.n_outputs if self.n_outputs is not None else 1
        host = random_inputs(info[: len(info) - n_out])
        host += [np.zeros(shape, dtype) for shape, dtype in info[len(info) - n_out :]]
        try:
            with self.module_loader(self._remote_kwargs(), build_result) as (remote, mod):
                dev = remote.cpu(0)
                args = [array(v, dev) for v in host]
                evaluator = mod.time_evaluator(
                    FUNC_NAME,
                    dev,
                    number=self.number,
                    repeat=self.repeat,
                    min_repeat_ms=self.min_repeat_ms,
                    cache_flush_bytes=CACHE_FLUSH_BYTES if self.enable_cpu_cache_flush else 0,
                )
                costs = tuple(float(c) for c in evaluator(*args).results)
                outputs = [a.numpy() for a in args[len(args) - n_out :]]
            if self.cooldown_interval > 0:
                time.sleep(self.cooldown_interval)  # let the device cool down (TVM's)
        except (RPCSessionTimeoutError, TimeoutError) as err:
            return failed_result(err, MeasureErrorNo.RUN_TIMEOUT, time.perf_counter() - tic)
        except Exception as err:
            return failed_result(
                TVMError(f"{type(err).__name__}: {err}"),
                MeasureErrorNo.RUNTIME_DEVICE,
                time.perf_counter() - tic,
            )
        if self.ref_output is not None:
            for got, ref in zip(outputs, self.ref_output, strict=True):
                if not _close(got, ref):
                    wrong = TVMError(
                        f"output differs from the default configuration's: largest difference "
                        f"{float(np.max(np.abs(got.astype('f8') - ref.astype('f8')))):g}"
                    )
                    return failed_result(
                        wrong, MeasureErrorNo.WRONG_ANSWER, time.perf_counter() - tic
                    )
        cost = build_result.time_cost + time.perf_counter() - tic
        return MeasureResult(costs, int(MeasureErrorNo.NO_ERROR), cost, time.time())

    def _measure_all(self, todo: Sequence[BuildResult]) -> list[MeasureResult]:
        """Measure ``todo``, ``n_parallel`` at a time, each in a daemon thread; a candidate
        still unanswered :attr:`watchdog` seconds after it started (a server frozen in the
        handshake, where no socket timeout applies yet) is ``RUN_TIMEOUT`` and its thread is
        abandoned, its slot given to the next candidate.
        """
        out: list[MeasureResult | None] = [None] * len(todo)
        started: dict[int, float] = {}
        abandoned: set[int] = set()
        cond = threading.Condition()
        slots = threading.Semaphore(self.n_parallel)

        def work(k: int) -> None:
            slots.acquire()
            with cond:
                started[k] = time.monotonic()
            try:
                res = self._measure(todo[k])
            except Exception as err:  # a failure outside the measuring steps' own handling
                res = failed_result(err, MeasureErrorNo.UNKNOWN_ERROR, 0.0)
            with cond:
                if k not in abandoned:
                    out[k] = res
                    slots.release()
                cond.notify_all()

        for k in range(len(todo)):
            threading.Thread(target=work, args=(k,), name="autotvm-run", daemon=True).start()
        with cond:
            while any(r is None for r in out):
                now = time.monotonic()
                for k, t0 in started.items():
                    if out[k] is None and now - t0 > self.watchdog:
                        err = TimeoutError(
                            f"no answer from the RPC server within {self.watchdog:g} s "
                            "(request, session timeout and margins): the server is frozen"
                        )
                        out[k] = failed_result(err, MeasureErrorNo.RUN_TIMEOUT, now - t0)
                        abandoned.add(k)
                        slots.release()
                live = [t0 for k, t0 in started.items() if out[k] is None]
                wake = min(live, default=now) + self.watchdog
                cond.wait(timeout=max(0.05, wake - now))
        return [r for r in out if r is not None]

    @property
    def watchdog(self) -> float:
        """Seconds after which an unanswered candidate is given up (see ``_measure_all``)."""
        return self.request_timeout + self.timeout + self.upload_margin + WATCHDOG_SLACK

    def run(
        self,
        measure_inputs: Sequence[MeasureInput],
        build_results: Sequence[BuildResult | MeasureResult],
    ) -> list[MeasureResult]:
        """A result per input: the builder's failure, or the candidate's measurement."""
        if self.task is None:
            raise TVMValueError("RPCRunner.run: call set_task(task) first")
        results: list[MeasureResult | None] = [
            r if isinstance(r, MeasureResult) else None for r in build_results
        ]
        todo = [(i, r) for i, r in enumerate(build_results) if isinstance(r, BuildResult)]
        for (i, _), res in zip(todo, self._measure_all([r for _, r in todo]), strict=True):
            results[i] = res
        for r in build_results:
            if isinstance(r, BuildResult) and r.filename:
                Path(r.filename).unlink(missing_ok=True)
        assert all(r is not None for r in results)
        return [r for r in results if r is not None]


def _close(got: np.ndarray, ref: np.ndarray) -> bool:
    if got.shape != ref.shape:
        return False
    if not np.issubdtype(ref.dtype, np.floating):
        return bool(np.array_equal(got, ref))
    scale = float(np.max(np.abs(ref))) if ref.size else 0.0
    return bool(np.allclose(got, ref, rtol=1e-3, atol=1e-3 * max(scale, 1e-6), equal_nan=True))


class LocalRunner(RPCRunner):
    """An :class:`RPCRunner` over its own tracker and one server on loopback (TVM's
    ``LocalRunner``); both start with the first task and stop on :meth:`close`, when the runner
    is garbage-collected, or at exit.
    """

    def __init__(
        self,
        timeout: float = 10,
        number: int = 4,
        repeat: int = 3,
        min_repeat_ms: int = 0,
        cooldown_interval: float = 0.1,
        enable_cpu_cache_flush: bool = False,
        module_loader: Any = None,
        check_correctness: bool = True,
    ) -> None:
        super().__init__(
            "",
            "127.0.0.1",
            0,
            timeout=timeout,
            n_parallel=1,
            number=number,
            repeat=repeat,
            min_repeat_ms=min_repeat_ms,
            cooldown_interval=cooldown_interval,
            enable_cpu_cache_flush=enable_cpu_cache_flush,
            module_loader=module_loader,
            check_correctness=check_correctness,
        )
        self.tracker: Tracker | None = None
        self.server: Server | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None
        self._lock = threading.Lock()

    def set_task(self, task: Any) -> None:
        """Start the tracker and server (once), then as :meth:`RPCRunner.set_task`."""
        with self._lock:
            if self.tracker is None:
                self.key = f"pytvm-local-{os.getpid()}-{uuid.uuid4().hex[:8]}"
                self.tracker = Tracker(host="127.0.0.1", port=0, silent=True)
                self.port = self.tracker.port
                self.server = Server(
                    host="127.0.0.1",
                    port=0,
                    key=self.key,
                    tracker_addr=("127.0.0.1", self.port),
                    silent=True,
                )
                self._finalizer = weakref.finalize(self, _stop_services, self.server, self.tracker)
        super().set_task(task)

    def close(self) -> None:
        """Stop the server and the tracker (also done when the runner is garbage-collected, or
        at exit).
        """
        with self._lock:
            if self._finalizer is not None:
                self._finalizer()
            self._finalizer, self.server, self.tracker = None, None, None

    def __enter__(self) -> LocalRunner:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _stop_services(server: Server, tracker: Tracker) -> None:
    server.terminate()
    tracker.terminate()


def create_measure_batch(task: Any, option: dict[str, Any]) -> Callable[..., Any]:
    """The function measuring a batch of ``task``'s inputs (TVM's): it builds them with
    ``option["builder"]`` and runs them with ``option["runner"]``; its ``n_parallel`` is the
    builder's (the tuner's batch size). Any builder with ``build(inputs)`` and runner with
    ``run(inputs, build_results)`` will do; ``set_task`` / ``get_build_kwargs`` are called when
    they have them.
    """
    missing = [k for k in ("builder", "runner") if option.get(k) is None]
    if missing:
        raise TVMValueError(
            f"measure_option has no {' or '.join(repr(k) for k in missing)}: pass "
            "autotvm.measure_option(builder=autotvm.LocalBuilder(), runner=autotvm.LocalRunner())"
        )
    builder, runner = option["builder"], option["runner"]
    get_kwargs = getattr(runner, "get_build_kwargs", None)
    if hasattr(builder, "set_task"):
        builder.set_task(task, get_kwargs() if get_kwargs is not None else {})
    if hasattr(runner, "set_task"):
        runner.set_task(task)

    def measure_batch(inputs: Sequence[MeasureInput]) -> list[MeasureResult]:
        results: list[MeasureResult] = runner.run(inputs, builder.build(inputs))
        return results

    measure_batch.n_parallel = int(getattr(builder, "n_parallel", 1))  # type: ignore[attr-defined]
    return measure_batch
