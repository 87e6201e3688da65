"""Libraries built by Apache TVM 0.27: loading them on pytvm's runtime and calling their functions.

Such a library exports each function as ``__tvm_ffi_<name>`` with tvm-ffi's safe-call signature
and imports tvm-ffi's C API by its standard names. pytvm's tvm-ffi environment library
(``src/runtime/tvm_ffi_env.c``) provides those names on pytvm's runtime, but it is never made
global: a process may also hold Apache TVM itself, whose runtime must keep its own names. So a
library is bound to the environment alone: a small wrapper object that needs the library and the
environment is linked with the system linker and opened with ``RTLD_DEEPBIND``, which makes the
library look its imports up there before the global scope. The loader then fills the library's
context symbols (``__tvm_ffi__library_ctx`` and the ``__TVMBackend...`` function pointers) as
tvm-ffi's own loader does, and each function is called through a C adapter that presents it as a
packed function, so it is called, timed and passed around like any compiled pytvm function.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import re
import subprocess
import tempfile
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from . import compile_cache, libinfo
from .c_function import CFunction
from .elf_check import check_shared_object
from .elf_symbols import read_dynamic_symbols
from .errors import TVMError, TVMOSError, TVMValueError
from .host_library import runtime_library

__all__ = [
    "CONTEXT_SYMBOLS",
    "LIBRARY_BIN",
    "LIBRARY_CTX",
    "PACKED_MARKER",
    "SYMBOL_PREFIX",
    "embedded_module_kinds",
    "env_library",
    "init_library_context",
    "is_tvm_ffi_library",
    "load_tvm_ffi_library",
    "safe_call_function",
]

#: Defined by libraries pytvm compiles: their packed functions are used, not their tvm-ffi exports.
PACKED_MARKER = "__pytvm_packed_library"
#: Prefix of every function a TVM 0.27 library exports (``__tvm_ffi_myadd``, ``__tvm_ffi_main``).
SYMBOL_PREFIX = "__tvm_ffi_"
#: The library's pointer to its module, read by kernels that look functions up.
LIBRARY_CTX = "__tvm_ffi__library_ctx"
#: Modules serialized into the library (a Relax VM executable, device code ...), if any.
LIBRARY_BIN = "__tvm_ffi__library_bin"
#: tvm-ffi C functions a library may take through a pointer ``__<name>`` the loader fills in
#: (Apache TVM registers the same list in src/runtime/module.cc).
CONTEXT_SYMBOLS = (
    "TVMFFIFunctionCall",
    "TVMFFIErrorSetRaisedFromCStr",
    "TVMFFIEnvModLookupFromImports",
    "TVMFFIHandleInitOnce",
    "TVMBackendAllocWorkspace",
    "TVMBackendFreeWorkspace",
    "TVMBackendParallelLaunch",
    "TVMBackendParallelBarrier",
)
_ENV_SOURCE = "runtime/tvm_ffi_env.c"


@lru_cache(maxsize=1)
def _env_library_path() -> Path:
    runtime = libinfo.runtime_library_path()
    digest = hashlib.sha256((libinfo.source_dir() / _ENV_SOURCE).read_bytes())
    for header in sorted(libinfo.include_dir().rglob("*.h")):
        digest.update(header.read_bytes())
    digest.update(str(runtime).encode())
    target = libinfo.cache_dir() / "tvm_ffi_env" / digest.hexdigest()[:16] / "libpytvm_tvm_ffi.so"
    # The runtime is a dependency by its absolute path, so the environment (and every library
    # bound to it) finds pytvm's private runtime names even with no global scope.
    return compile_cache.cached_file(
        target,
        lambda staged: libinfo.compile_shared(
            [libinfo.source_dir() / _ENV_SOURCE],
            staged,
            ["-Wl,--no-as-needed", str(runtime)],
            "the tvm-ffi environment library",
        ),
        root=libinfo.cache_dir(),
    )


@cache
def env_library() -> ctypes.CDLL:
    """The tvm-ffi environment library, loaded locally (its names never become global)."""
    runtime_library()  # hooks set before any kernel runs
    path = _env_library_path()
    check_shared_object(path)
    return ctypes.CDLL(str(path), mode=os.RTLD_LOCAL)


def is_tvm_ffi_library(path: str | os.PathLike[str]) -> bool:
    """Whether a shared object follows tvm-ffi's convention (exports ``__tvm_ffi_*`` functions
    or imports tvm-ffi's C API), as libraries built by Apache TVM 0.27 do.
    """
    symbols = read_dynamic_symbols(path)
    if symbols is None or PACKED_MARKER in symbols.defined:
        return False  # pytvm's own kernels: packed functions (their __tvm_ffi_ exports serve TVM)
    return any(name.startswith(SYMBOL_PREFIX) for name in symbols.defined) or any(
        name.startswith("TVMFFI") for name in symbols.undefined
    )


def _link_binding_wrapper(library: Path, env: Path, output: Path) -> None:
    """An empty shared object that needs ``library`` then ``env`` (by absolute path)."""
    cc = libinfo.find_cc()
    if cc is None:
        raise TVMError(
            f"no C compiler found (looked for cc, gcc, clang): pytvm links a small wrapper to "
            f"bind {library.name} (built by TVM) to its runtime; install gcc or clang"
        )
    cmd = [cc, "-shared", "-nostdlib", "-o", str(output), "-Wl,--no-as-needed"]
    cmd += [str(library), str(env)]
    # A library named by an open descriptor (/proc/self/fd/<n>) is read by the linker through
    # the same descriptor number, so the wrapper records that very name.
    by_fd = re.fullmatch(r"/(?:proc/self|dev)/fd/(\d+)", str(library))
    pass_fds = (int(by_fd.group(1)),) if by_fd else ()
    result = subprocess.run(cmd, capture_output=True, text=True, pass_fds=pass_fds, check=False)
    if result.returncode != 0:
        raise TVMOSError(
            f"cannot bind {library} to pytvm's runtime: linking the wrapper failed:\n"
            f"$ {' '.join(cmd)}\n{result.stderr}"
        )


def load_tvm_ffi_library(path: str | os.PathLike[str]) -> ctypes.CDLL:
    """Load a TVM-built shared object with its tvm-ffi imports bound to pytvm's environment.

    Returns the handle of the library itself (symbols are looked up in it alone). The path is
    used as given, made absolute (a ``/proc/self/fd/<n>`` name loads the file open there).
    """
    library = Path(os.path.abspath(path))  # noqa: PTH100 - lexical, not resolved (see above)
    check_shared_object(library)
    env_path = _env_library_path()
    env_library()
    deepbind = getattr(os, "RTLD_DEEPBIND", 0)
    with tempfile.TemporaryDirectory(prefix="pytvm-bind-") as tmp:
        wrapper = Path(tmp) / "bind.so"
        _link_binding_wrapper(library, env_path, wrapper)  # just linked: no check needed
        try:
            # Kept open (never closed): the library stays loaded as long as the process.
            ctypes.CDLL(str(wrapper), mode=os.RTLD_NOW | os.RTLD_LOCAL | deepbind)
        except OSError as err:
            raise TVMOSError(f"cannot load shared object {str(path)!r}: {err}") from None
    try:
        return ctypes.CDLL(str(library), mode=os.RTLD_NOW | os.RTLD_LOCAL | os.RTLD_NOLOAD)
    except OSError as err:
        raise TVMOSError(f"cannot reopen shared object {str(path)!r}: {err}") from None


def embedded_module_kinds(lib: ctypes.CDLL) -> list[str]:
    """Kinds of the modules serialized in the library's ``__tvm_ffi__library_bin`` (``"_lib"``
    stands for the library itself); empty when it has none.

    Layout (tvm-ffi's library_module.cc): ``<nbytes: u64>``, the import tree as two
    ``vec<u64>`` (CSR), then per module ``<kind: str>`` and, unless the kind is ``_lib``,
    ``<bytes>``; ``str``, ``bytes`` and ``vec`` are a ``u64`` count then the items.
    """
    try:
        start = ctypes.addressof(ctypes.c_char.in_dll(lib, LIBRARY_BIN))
    except ValueError:
        return []
    nbytes = int.from_bytes(ctypes.string_at(start, 8), "little")
    blob = ctypes.string_at(start + 8, nbytes)
    pos = 0

    def count(item_size: int) -> int:
        nonlocal pos
        n = int.from_bytes(blob[pos : pos + 8], "little")
        if pos + 8 + n * item_size > len(blob):
            raise TVMValueError(f"{LIBRARY_BIN} is truncated or corrupt ({nbytes} bytes)")
        pos += 8
        return n

    def skip(item_size: int) -> int:  # a vec, str or bytes: its count, its items skipped
        nonlocal pos
        n = count(item_size)
        pos += n * item_size
        return n

    num_modules = skip(8) - 1  # import tree: indptr, then child indices
    skip(8)
    kinds = []
    for _ in range(max(num_modules, 0)):
        start_of_kind = pos + 8
        kind = blob[start_of_kind : start_of_kind + skip(1)].decode("utf-8", "replace")
        if kind != "_lib":
            skip(1)
        kinds.append(kind)
    return kinds


def init_library_context(lib: ctypes.CDLL, module_handle: int) -> None:
    """Fill the library's context symbols: its module pointer and tvm-ffi C functions."""
    env = env_library()
    try:
        ctypes.c_void_p.in_dll(lib, LIBRARY_CTX).value = module_handle
    except ValueError:
        pass  # a library that never looks functions up
    for name in CONTEXT_SYMBOLS:
        try:
            slot = ctypes.c_void_p.in_dll(lib, f"__{name}")
        except ValueError:
            continue
        slot.value = ctypes.cast(env[name], ctypes.c_void_p).value


class _Binding(ctypes.Structure):
    """``PyTVMFFIBinding`` of pytvm/tvm_ffi_abi.h: what the adapter calls."""

    _fields_ = [
        ("func", ctypes.c_void_p),
        ("self", ctypes.c_void_p),
        ("name", ctypes.c_char_p),
    ]


def safe_call_function(lib: ctypes.CDLL, name: str, owner: Any) -> CFunction | None:
    """The function ``__tvm_ffi_<name>`` of ``lib`` as a packed function; None if it has none.

    ``owner`` (the module) is kept alive by the function.
    """
    try:
        symbol = lib[SYMBOL_PREFIX + name]
    except AttributeError:
        return None
    address = ctypes.cast(symbol, ctypes.c_void_p).value or 0
    label = ctypes.create_string_buffer(name.encode("utf-8"))
    binding = _Binding(address, None, ctypes.addressof(label))
    adapter = ctypes.cast(env_library().PyTVMFFIAdapterCall, ctypes.c_void_p).value or 0
    return CFunction(
        adapter, resource=ctypes.addressof(binding), owner=(owner, binding, label), name=name
    )
