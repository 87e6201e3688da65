"""``time_evaluator``: time a module's function where it runs (seed 004's ``time_evaluator``).

The timing loop is the global function ``runtime.RPCTimeEvaluator`` -- the name TVM clients call
on a server -- so the same code times a function here, in C, or on a remote device; only the
list of per-repeat means (float64 seconds, packed as bytes) travels back.
"""

from __future__ import annotations

import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..ffi import Device, PackedFunc
from ..ffi.c_function import CFunction
from ..ffi.errors import TVMValueError
from ..ffi.function import PyFunction
from ..ffi.registry import get_global_func, register_func
from .device_api import DeviceAPI

__all__ = ["BenchmarkResult", "make_evaluator", "time_function"]


@dataclass(frozen=True)
class BenchmarkResult:
    """Per-repeat mean seconds of a timed function, with TVM's summary statistics."""

    results: tuple[float, ...]

    @property
    def mean(self) -> float:
        """Mean of the per-repeat means, in seconds."""
        return float(np.mean(self.results))

    @property
    def median(self) -> float:
        """Median of the per-repeat means, in seconds."""
        return float(np.median(self.results))

    @property
    def min(self) -> float:
        """Fastest repeat, in seconds."""
        return float(np.min(self.results))

    @property
    def max(self) -> float:
        """Slowest repeat, in seconds."""
        return float(np.max(self.results))

    @property
    def std(self) -> float:
        """Standard deviation of the repeats, in seconds."""
        return float(np.std(self.results))

    def __str__(self) -> str:
        ms = [r * 1e3 for r in self.results]
        return (
            f"Execution time summary:\n {'mean (ms)':>10} {'median (ms)':>12} "
            f"{'max (ms)':>10} {'min (ms)':>10} {'std (ms)':>10}\n"
            f" {np.mean(ms):10.4f} {np.median(ms):12.4f} {np.max(ms):10.4f} "
            f"{np.min(ms):10.4f} {np.std(ms):10.4f}"
        )


def _run_batch(
    func: PackedFunc, args: tuple[Any, ...], number: int, api: DeviceAPI, dev: Device
) -> float:
    """Seconds for ``number`` calls. Compiled functions are timed inside C (no Python per
    call, the device sync is not part of the kernel); others include the final device sync.
    """
    if isinstance(func, CFunction):
        seconds = func.time_call(args, number)
        api.stream_sync(dev, None)
        return seconds
    start = time.perf_counter()
    for _ in range(number):
        func(*args)
    api.stream_sync(dev, None)
    return time.perf_counter() - start


def time_function(
    func: PackedFunc,
    dev: Device,
    args: tuple[Any, ...],
    number: int,
    repeat: int,
    min_repeat_ms: int = 0,
    limit_zero_time_iterations: int = 100,
    cooldown_interval_ms: int = 0,
    repeats_to_cooldown: int = 1,
    f_preproc: Callable[..., Any] | None = None,
) -> list[float]:
    """Per-repeat mean seconds of ``func(*args)``, as TVM's time evaluator measures them.

    One warm-up call; then each repeat runs ``number`` calls, growing ``number`` until a repeat
    lasts at least ``min_repeat_ms``; the device is synchronised at the end of every repeat.
    """
    if number <= 0 or repeat <= 0:
        raise TVMValueError(
            f"time_evaluator needs number > 0 and repeat > 0, got number={number}, repeat={repeat}"
        )
    api = DeviceAPI.get(dev)
    func(*args)  # warm up (and surface errors before timing)
    api.stream_sync(dev, None)
    results = []
    for index in range(repeat):
        if f_preproc is not None:
            f_preproc(*args)
        zero_tries = 0
        while True:
            total = _run_batch(func, args, number, api, dev)
            if total * 1e3 >= min_repeat_ms or (
                total == 0 and zero_tries >= limit_zero_time_iterations
            ):
                break
            if total == 0:
                zero_tries += 1
                number *= 2
                continue
            number = max(int(min_repeat_ms / (total / number * 1e3)) + 1, int(number * 1.618))
        results.append(total / number)
        if cooldown_interval_ms > 0 and (index + 1) % repeats_to_cooldown == 0:
            time.sleep(cooldown_interval_ms / 1e3)
    return results


@register_func("runtime.RPCTimeEvaluator")
def _rpc_time_evaluator(
    mod: Any,
    name: str,
    device_type: int,
    device_id: int,
    number: int,
    repeat: int,
    min_repeat_ms: int,
    limit_zero_time_iterations: int,
    cooldown_interval_ms: int,
    repeats_to_cooldown: int,
    cache_flush_bytes: int,
    f_preproc_name: str,
) -> PackedFunc:
    """TVM's evaluator factory: returns a function whose result is the float64 means as bytes."""
    dev = Device(device_type, device_id)
    # As TVM: a module's imports are searched too (the kernels of a graph's library, ...).
    func = mod.get_function(name, query_imports=True) if mod is not None else get_global_func(name)
    preproc = get_global_func(f_preproc_name) if f_preproc_name else None
    flush = np.empty(cache_flush_bytes // 8 + 1, dtype=np.float64) if cache_flush_bytes else None

    def evaluate(*args: Any) -> bytes:
        def flushing_preproc(*inner: Any) -> None:
            if flush is not None:
                flush[:] = flush + 1.0  # touch cache_flush_bytes of memory
            if preproc is not None:
                preproc(*inner)

        means = time_function(
            func,
            dev,
            args,
            number,
            repeat,
            min_repeat_ms,
            limit_zero_time_iterations,
            cooldown_interval_ms,
            repeats_to_cooldown,
            flushing_preproc if (flush is not None or preproc) else None,
        )
        return struct.pack(f"<{len(means)}d", *means)

    return PyFunction(evaluate, f"time_evaluator({name})")


def make_evaluator(
    mod: Any,
    func_name: str,
    dev: Device,
    number: int,
    repeat: int,
    min_repeat_ms: int,
    limit_zero_time_iterations: int,
    cooldown_interval_ms: int,
    repeats_to_cooldown: int,
    cache_flush_bytes: int,
    f_preproc: str,
) -> Any:
    """Client side of ``time_evaluator``: call the evaluator factory where the module lives
    (``mod.evaluator_factory()``: the local ``runtime.RPCTimeEvaluator``, or the server's for a
    remote module, which then gets the device without its RPC session mask).
    """
    real = dev.without_session()
    feval = mod.evaluator_factory()(
        mod,
        func_name,
        real.device_type,
        real.device_id,
        number,
        repeat,
        min_repeat_ms,
        limit_zero_time_iterations,
        cooldown_interval_ms,
        repeats_to_cooldown,
        cache_flush_bytes,
        f_preproc,
    )

    def evaluator(*args: Any) -> BenchmarkResult:
        blob = bytes(feval(*args))
        return BenchmarkResult(struct.unpack(f"<{len(blob) // 8}d", blob))

    return evaluator
