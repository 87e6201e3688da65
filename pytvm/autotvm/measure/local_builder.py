"""Building candidates in worker processes (TVM's ``LocalBuilder``, ``BuildResult``).

Each configuration is instantiated and compiled in a worker of a
:class:`~.executor.PopenPoolExecutor` and exported as a shared library (``export_library``) into
the builder's temporary folder. Verdicts: a :class:`BuildResult` when built; else a failed
``MeasureResult``: ``INSTANTIATION_ERROR`` (the template raised, or the configuration is invalid),
``COMPILE_HOST`` (the compiler or linker raised, or the worker died), ``BUILD_TIMEOUT`` (the worker
passed ``timeout`` and was killed; the pool replaces it).
"""

from __future__ import annotations

import importlib
import os
import shutil
import tempfile
import time
import uuid
import weakref
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from ...driver.build_module import build
from ...ffi.errors import TVMError, TVMValueError
from ..task.knobs import InstantiationError
from .executor import PopenPoolExecutor
from .measure import Builder, MeasureErrorNo, MeasureInput, MeasureResult

__all__ = ["FUNC_NAME", "BuildResult", "LocalBuilder", "arg_info", "failed_result", "warm_up"]

#: The name of the kernel each candidate's library exports.
FUNC_NAME = "default_function"


class BuildResult(NamedTuple):
    """A built candidate (TVM's): the library's path, ``(shape, dtype)`` of each argument
    (inputs, then outputs), the error (None when built) and the seconds the build took.
    """

    filename: str | None
    arg_info: tuple[tuple[tuple[int, ...], str], ...] | None
    error: BaseException | None
    time_cost: float


def failed_result(err: BaseException, code: MeasureErrorNo, cost: float) -> MeasureResult:
    """A failed measurement: ``err`` as its cost, ``code`` its error number."""
    return MeasureResult((err,), int(code), float(cost), time.time())


def arg_info(tensors: Sequence[Any]) -> tuple[tuple[tuple[int, ...], str], ...]:
    """``(shape, dtype)`` of each tensor."""
    return tuple((tuple(int(d) for d in t.shape), str(t.dtype)) for t in tensors)


def warm_up() -> None:
    """In a new worker, before its first build is timed: import the compiler and topi."""
    importlib.import_module("pytvm.topi")


def _build_candidate(
    task: Any, config: Any, out_dir: str, build_func: Callable[..., Any] | None
) -> BuildResult:
    """In a worker: instantiate ``config`` of ``task``, compile, export a shared library."""
    tic = time.perf_counter()
    try:
        sch, tensors = task.instantiate(config)
        if not config.valid():
            raise InstantiationError(f"invalid configuration: {config.errors}")
    except Exception as err:
        text = f"{type(err).__name__}: {err}"
        return BuildResult(None, None, InstantiationError(text), time.perf_counter() - tic)
    try:
        func = build(sch, tensors, target=task.target, name=FUNC_NAME)
        filename = str(Path(out_dir) / f"tmp_func_{uuid.uuid4().hex}.so")
        if build_func is not None:
            func.export_library(filename, fcompile=build_func)
        else:
            func.export_library(filename)
    except Exception as err:
        error = TVMError(f"{type(err).__name__}: {err}")
        return BuildResult(None, None, error, time.perf_counter() - tic)
    return BuildResult(filename, arg_info(tensors), None, time.perf_counter() - tic)


class LocalBuilder(Builder):
    """Build candidates in ``n_parallel`` worker processes (TVM's ``LocalBuilder``).

    ``timeout``: seconds per build before its worker is killed; ``build_func``: ``"default"``
    (``export_library``'s own compiler call) or a function ``f(output, objects, options)`` used
    as ``export_library``'s ``fcompile``.
    """

    def __init__(
        self,
        timeout: float = 10,
        n_parallel: int | None = None,
        build_func: str | Callable[..., Any] = "default",
    ) -> None:
        if build_func != "default" and not callable(build_func):
            raise TVMValueError(
                f"LocalBuilder: build_func {build_func!r}; expected 'default' or a function "
                "f(output, objects, options)"
            )
        if not timeout > 0:
            raise TVMValueError(f"LocalBuilder: timeout={timeout!r}; expected seconds > 0")
        self.timeout = float(timeout)
        self.n_parallel = int(n_parallel) if n_parallel else (os.cpu_count() or 1)
        self.build_func = None if build_func == "default" else build_func
        self.task: Any = None
        self.build_kwargs: dict[str, Any] = {}
        self._pool: PopenPoolExecutor | None = None
        self._dir: str | None = None
        self._finalizer: weakref.finalize[Any, Any] | None = None

    def set_task(self, task: Any, build_kwargs: dict[str, Any] | None = None) -> None:
        """Build candidates of ``task`` from now on."""
        self.task, self.build_kwargs = task, dict(build_kwargs or {})
        if self._pool is None:
            self._pool = PopenPoolExecutor(
                self.n_parallel, timeout=self.timeout, initializer=warm_up
            )
            self._dir = tempfile.mkdtemp(prefix="pytvm-autotvm-build-")
            self._finalizer = weakref.finalize(self, _release_builder, self._pool, self._dir)

    def build(self, measure_inputs: Sequence[MeasureInput]) -> list[BuildResult | MeasureResult]:
        """A :class:`BuildResult` per built input, a failed :class:`MeasureResult` per other."""
        if self._pool is None or self._dir is None:
            raise TVMValueError("LocalBuilder.build: call set_task(task) first")
        out: list[BuildResult | MeasureResult] = []
        futures = [
            self._pool.submit(_build_candidate, inp.task, inp.config, self._dir, self.build_func)
            for inp in measure_inputs
        ]
        for fut in futures:
            try:
                res: BuildResult = fut.result()
            except TimeoutError as err:
                out.append(failed_result(err, MeasureErrorNo.BUILD_TIMEOUT, self.timeout))
                continue
            except Exception as err:
                out.append(failed_result(err, MeasureErrorNo.COMPILE_HOST, self.timeout))
                continue
            if res.error is None:
                out.append(res)
            elif isinstance(res.error, InstantiationError):
                out.append(
                    failed_result(res.error, MeasureErrorNo.INSTANTIATION_ERROR, res.time_cost)
                )
            else:
                out.append(failed_result(res.error, MeasureErrorNo.COMPILE_HOST, res.time_cost))
        return out

    def close(self) -> None:
        """Kill the workers and remove the built libraries (also done when the builder is
        garbage-collected, or at exit).
        """
        if self._finalizer is not None:
            self._finalizer()
        self._finalizer, self._pool, self._dir = None, None, None


def _release_builder(pool: PopenPoolExecutor, folder: str) -> None:
    pool.shutdown()
    shutil.rmtree(folder, ignore_errors=True)
