"""The host runtime library: found (built from the package's C sources), loaded once, declared.

:func:`runtime_library` loads it with ``RTLD_GLOBAL`` (so compiled kernels resolve its symbols),
declares the C signatures Python calls, then runs the initializers other modules registered with
:func:`when_loaded` (the hooks C calls back through, the fast-call extension) before any thread
can see it.

Examples
--------
>>> lib = runtime_library()
>>> loaded_library() is lib
True
"""

from __future__ import annotations

import ctypes
import threading
from collections.abc import Callable

from . import libinfo
from .elf_check import check_shared_object

__all__ = ["loaded_library", "runtime_library", "when_loaded"]


class _Loaded:
    """The loaded library (``None`` until :func:`runtime_library` first runs)."""

    lib: ctypes.CDLL | None = None


_lock = threading.Lock()
_initializers: list[Callable[[ctypes.CDLL], None]] = []

# Runtime API functions the host library exports under private names (see c_runtime_api.h).
_PRIVATE_API = (
    "TVMAPISetLastError",
    "TVMGetLastError",
    "TVMFuncCreateFromCFunc",
    "TVMFuncFree",
    "TVMFuncRetain",
    "TVMFuncCall",
    "TVMFuncGetGlobal",
)


def runtime_library() -> ctypes.CDLL:
    """The host runtime library, loaded globally (so kernels resolve its symbols) with hooks set."""
    lib = _Loaded.lib
    if lib is not None:
        return lib
    with _lock:
        lib = _Loaded.lib
        if lib is None:
            path = libinfo.runtime_library_path()
            check_shared_object(path)
            lib = ctypes.CDLL(str(path), mode=ctypes.RTLD_GLOBAL)
            _declare(lib)
            for init in _initializers:
                init(lib)
            _Loaded.lib = lib
    return lib


def loaded_library() -> ctypes.CDLL | None:
    """The host runtime library if it is loaded, else None (for releases, which never load it)."""
    return _Loaded.lib


def when_loaded(init: Callable[[ctypes.CDLL], None]) -> None:
    """Call ``init(lib)`` once the library is loaded, before other threads see it (at once if it
    already is); initializers run in the order they were registered.
    """
    with _lock:
        lib = _Loaded.lib
        if lib is None:
            _initializers.append(init)
            return
    init(lib)


def _declare(lib: ctypes.CDLL) -> None:
    vp, i = ctypes.c_void_p, ctypes.c_int
    for name in _PRIVATE_API:
        setattr(lib, name, lib[f"pytvm_{name}"])
    lib.TVMGetLastError.restype = ctypes.c_char_p
    lib.TVMAPISetLastError.argtypes = [ctypes.c_char_p]
    lib.TVMFuncCreateFromCFunc.argtypes = [vp, vp, vp, ctypes.POINTER(vp)]
    lib.TVMFuncFree.argtypes = [vp]
    lib.TVMFuncRetain.argtypes = [vp]
    lib.TVMFuncCall.argtypes = [vp, vp, vp, i, vp, vp]
    lib.PyTVMFuncGetCFunc.argtypes = [vp, ctypes.POINTER(vp), ctypes.POINTER(vp)]
    lib.PyTVMTimeCall.argtypes = [vp, vp, vp, vp, i, i, ctypes.POINTER(ctypes.c_double)]
    lib.PyTVMSetNumThreads.argtypes = [i]
