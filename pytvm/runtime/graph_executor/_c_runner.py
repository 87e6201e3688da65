"""The C loop that runs a stretch of prebuilt operator calls (``src/runtime/graph_run.c``).

Built with the system C compiler the first time an executor needs it and cached beside the host
runtime library (by source hash); ``None`` when it cannot be built, and executors then call each
operator from Python.
"""

from __future__ import annotations

import ctypes
import hashlib
import threading
from pathlib import Path

from ...ffi import compile_cache, libinfo
from ...ffi.elf_check import check_shared_object
from ...ffi.errors import SharedObjectError, TVMError, TVMPermissionError

__all__ = ["GraphOp", "runner_library"]

_SOURCE = "runtime/graph_run.c"
_lock = threading.Lock()


class GraphOp(ctypes.Structure):
    """``PyTVMGraphOp``: one operator call, ready to run."""

    _fields_ = [
        ("func", ctypes.c_void_p),
        ("resource", ctypes.c_void_p),
        ("values", ctypes.c_void_p),
        ("codes", ctypes.c_void_p),
        ("num_args", ctypes.c_int32),
        ("reserved", ctypes.c_int32),
    ]


class _Runner:
    lib: ctypes.CDLL | None = None
    tried = False


def _path() -> Path:
    digest = hashlib.sha256()
    digest.update((libinfo.source_dir() / _SOURCE).read_bytes())
    digest.update((libinfo.include_dir() / "pytvm" / "c_runtime_api.h").read_bytes())
    return libinfo.cache_dir() / f"graph-run-{digest.hexdigest()[:16]}" / "libpytvm_graph_run.so"


def _build(target: Path) -> Path:
    return compile_cache.cached_file(
        target,
        lambda staged: libinfo.compile_shared(
            [libinfo.source_dir() / _SOURCE], staged, (), "the graph runner"
        ),
        root=libinfo.cache_dir(),
    )


def runner_library() -> ctypes.CDLL | None:
    """The loaded runner library, or None when there is no C compiler to build it."""
    if _Runner.tried:
        return _Runner.lib
    with _lock:
        if not _Runner.tried:
            try:
                path = _build(_path())
                check_shared_object(path)
                lib = ctypes.CDLL(str(path))
            except (TVMPermissionError, SharedObjectError):
                raise  # an untrusted cache or a damaged library is the user's to know about
            except (TVMError, OSError):
                lib = None
            if lib is not None:
                lib.PyTVMGraphRun.argtypes = [ctypes.c_void_p, ctypes.c_int32, ctypes.c_int32]
                lib.PyTVMGraphRun.restype = ctypes.c_int
                lib.PyTVMGraphRunTimed.argtypes = [
                    ctypes.c_void_p,
                    ctypes.c_int32,
                    ctypes.c_int32,
                    ctypes.c_void_p,
                    ctypes.c_void_p,
                ]
                lib.PyTVMGraphRunTimed.restype = ctypes.c_int
                lib.PyTVMGraphNow.argtypes = []
                lib.PyTVMGraphNow.restype = ctypes.c_double
            _Runner.lib = lib
            _Runner.tried = True
    return _Runner.lib
