"""The host runtime's thread pool: how many threads a parallel kernel loop runs on.

By default the pool uses every core the process may run on (so ``taskset -c 0`` means one
thread). ``set_num_threads`` changes it for later launches; TVM's global
``runtime.config_threadpool`` and ``runtime.NumThreads`` do the same over RPC.

A launch's tasks are claimed, not assigned: the launching thread and the pool's workers take
task ids until none is left, and the launch waits only for tasks already taken. On a busy
machine (other processes on the cores, or more threads than free cores) a worker that is not
running takes nothing and the launching thread does its share, so a parallel loop never waits
a scheduler time slice for it.
"""

from __future__ import annotations

import ctypes

from ..ffi.errors import TVMValueError
from ..ffi.host_library import runtime_library
from ..ffi.registry import register_func

__all__ = ["num_threads", "set_num_threads"]


def num_threads() -> int:
    """Threads a parallel loop uses now."""
    lib = runtime_library()
    lib.PyTVMNumThreads.restype = ctypes.c_int
    return int(lib.PyTVMNumThreads())


def set_num_threads(count: int) -> None:
    """Run parallel loops on ``count`` threads (0: every core the process may use)."""
    if not isinstance(count, int) or count < 0:
        raise TVMValueError(f"set_num_threads: expected a count >= 0, got {count!r}")
    lib = runtime_library()
    lib.PyTVMSetNumThreads.argtypes = [ctypes.c_int]
    lib.PyTVMSetNumThreads(count)


def _config_threadpool(mode: int = 1, count: int = 0) -> None:
    del mode  # TVM's affinity mode: the pool does not pin threads
    set_num_threads(int(count))


register_func("runtime.config_threadpool", _config_threadpool, override=True)
register_func("runtime.NumThreads", num_threads, override=True)
