"""The host runtime library loads once, with every initializer run before any thread sees it."""

from __future__ import annotations

import subprocess
import sys

import pytest

from pytvm.ffi import host_library

pytestmark = pytest.mark.needs_cc

# A fresh interpreter: pytvm.ffi imported, the library not loaded yet.
FIRST_LOAD_SCRIPT = r"""
import ctypes, threading
import pytvm
from pytvm.ffi import c_function, host_library, libinfo

assert host_library.loaded_library() is None, "importing pytvm loaded the library"
calls = []
def first(lib):
    calls.append(("first", host_library.loaded_library()))
def second(lib):
    calls.append(("second", host_library.loaded_library()))
host_library.when_loaded(first)
host_library.when_loaded(second)

start = threading.Barrier(4)
seen = []
def load():
    start.wait(timeout=30)
    lib = host_library.runtime_library()
    seen.append((lib, c_function._fast_call is not None))
threads = [threading.Thread(target=load) for _ in range(4)]
for t in threads: t.start()
for t in threads: t.join(timeout=60)
lib = host_library.runtime_library()
assert calls == [("first", None), ("second", None)], calls
fast = libinfo.fastcall_extension_path() is not None
assert seen == [(lib, fast)] * 4, (seen, fast)

late = []
host_library.when_loaded(late.append)
assert late == [lib], late

# The hooks were installed: C finds a Python global through them.
pytvm.register_func("test_host_library.answer", lambda: 42)
out = ctypes.c_void_p()
assert lib.TVMFuncGetGlobal(b"test_host_library.answer", ctypes.byref(out)) == 0 and out.value
lib.TVMFuncFree(out)
print("loaded once")
"""


def test_library_loads_once_with_initializers_hooks_and_fast_path_before_threads_see_it() -> None:
    result = subprocess.run(
        [sys.executable, "-c", FIRST_LOAD_SCRIPT],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0 and "loaded once" in result.stdout, result.stderr


def test_initializer_registered_after_loading_runs_at_once() -> None:
    lib = host_library.runtime_library()
    got: list[object] = []
    host_library.when_loaded(got.append)
    assert got == [lib]
    assert host_library.loaded_library() is lib
