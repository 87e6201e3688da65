"""The host thread pool follows the process's CPU affinity and can be resized."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

import pytvm
from pytvm import runtime


@pytest.mark.skipif(not hasattr(os, "sched_setaffinity"), reason="needs sched_setaffinity")
def test_pool_size_follows_cpu_affinity() -> None:
    code = (
        "import os; os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]}); "
        "from pytvm import runtime; print(runtime.num_threads())"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"


def test_set_num_threads_and_tvm_globals() -> None:
    runtime.set_num_threads(0)  # the default, whatever a test before this one in the process set
    default = runtime.num_threads()
    assert default == len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else default
    try:
        runtime.set_num_threads(3)
        assert runtime.num_threads() == 3
        assert pytvm.get_global_func("runtime.NumThreads")() == 3
        pytvm.get_global_func("runtime.config_threadpool")(1, 1)
        assert runtime.num_threads() == 1
    finally:
        runtime.set_num_threads(0)
    assert runtime.num_threads() == default
    with pytest.raises(ValueError, match="set_num_threads"):
        runtime.set_num_threads(-1)
