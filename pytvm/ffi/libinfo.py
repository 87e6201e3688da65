"""Where pytvm's C headers and sources live, the system C compiler, and the host runtime library.

The host runtime library (``libpytvm_runtime.so``) provides the C runtime API that compiled
kernels call (``TVMFuncCall``, ``TVMBackendAllocWorkspace`` ...). It is built from the sources
shipped in the package the first time a shared object is loaded, with the system C compiler, and
cached per source hash, so a plain ``pip install`` needs no build step.

The cache is ``$XDG_CACHE_HOME/pytvm`` (``~/.cache/pytvm`` when the variable is unset); every
file in it is written and read through :mod:`pytvm.ffi.compile_cache` (checksummed entries) in
folders :mod:`pytvm.ffi.cache_folder` trusts (private to this user, no links).
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import sysconfig
from functools import lru_cache
from pathlib import Path

from . import compile_cache
from .errors import TVMError

__all__ = [
    "cache_dir",
    "cc_version",
    "compile_shared",
    "fastcall_extension_path",
    "find_cc",
    "include_dir",
    "package_dir",
    "runtime_library_path",
    "source_dir",
]

_RUNTIME_SOURCES = ("runtime/host_runtime.c",)
_FASTCALL_SOURCE = "runtime/fastcall.c"


def package_dir() -> Path:
    """The installed ``pytvm`` package directory."""
    return Path(__file__).resolve().parent.parent


def include_dir() -> Path:
    """Directory to pass as ``-I`` so that ``#include "pytvm/c_runtime_api.h"`` works."""
    return package_dir() / "include"


def source_dir() -> Path:
    """Directory of the C sources shipped in the package."""
    return package_dir() / "src"


@lru_cache(maxsize=1)
def find_cc() -> str | None:
    """Path of the system C compiler: ``$CC`` when it is set (None if it names no executable),
    else the first of ``cc``, ``gcc``, ``clang`` on ``PATH``; None if there is none.
    """
    chosen = os.environ.get("CC", "").strip()
    if chosen:
        return shutil.which(chosen)
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return None


@lru_cache(maxsize=8)
def cc_version(cc: str) -> str:
    """First line of ``cc --version``."""
    try:
        out = subprocess.run(
            [cc, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
    except OSError as err:
        return f"unavailable ({err})"
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else "unknown"


def cache_dir() -> Path:
    """Per-user cache of what pytvm builds: ``$XDG_CACHE_HOME/pytvm``, else
    ``~/.cache/pytvm`` (not created here; see :mod:`pytvm.ffi.compile_cache`).
    """
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "pytvm"


@lru_cache(maxsize=1)
def _sources_digest() -> str:
    digest = hashlib.sha256()
    for rel in (*_RUNTIME_SOURCES, _FASTCALL_SOURCE):
        digest.update((source_dir() / rel).read_bytes())
    for header in sorted(include_dir().rglob("*.h")) + sorted(source_dir().rglob("*.h")):
        digest.update(header.read_bytes())
    digest.update(sys.platform.encode())
    return digest.hexdigest()[:16]


def compile_shared(
    sources: list[Path], output: Path, options: list[str] | tuple[str, ...] = (), what: str = ""
) -> Path:
    """Compile C ``sources`` into the shared object ``output`` with the system compiler.

    pytvm's headers are on the include path (``#include "pytvm/c_backend_api.h"``). Raises
    ``TVMError`` with the compiler's messages if there is no compiler or compiling fails.
    """
    what = what or output.name
    cc = find_cc()
    if cc is None:
        raise TVMError(
            f"no C compiler found (looked for $CC, else cc, gcc, clang): pytvm needs one to "
            f"build {what}; install gcc or clang"
        )
    cmd = [
        cc,
        "-std=c11",
        "-O2",
        "-fPIC",
        "-shared",
        f"-I{include_dir()}",
        f"-I{source_dir() / 'runtime'}",
        *options,
        *map(str, sources),
        "-o",
        str(output),
        "-lpthread",
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise TVMError(f"building {what} failed:\n$ {' '.join(cmd)}\n{result.stderr}")
    return output


def _build(target: Path, sources: list[Path], extra: list[str], what: str) -> Path:
    """Build a cached shared object once (again if it fails its checksum); concurrent builders
    race harmlessly.
    """
    return compile_cache.cached_file(
        target, lambda staged: compile_shared(sources, staged, extra, what), root=cache_dir()
    )


@lru_cache(maxsize=1)
def runtime_library_path() -> Path:
    """Path of the host runtime library, building it once per source version if needed."""
    target = cache_dir() / _sources_digest() / "libpytvm_runtime.so"
    return _build(
        target, [source_dir() / rel for rel in _RUNTIME_SOURCES], [], "the host runtime library"
    )


@lru_cache(maxsize=1)
def fastcall_extension_path() -> Path | None:
    """Path of the optional fast-call CPython extension; None if it cannot be built here
    (no compiler or no Python headers), in which case calls go through ctypes.
    """
    python_include = Path(sysconfig.get_paths()["include"])
    if find_cc() is None or not (python_include / "Python.h").exists():
        return None
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    target = cache_dir() / _sources_digest() / f"_pytvm_fastcall{suffix}"
    try:
        return _build(
            target,
            [source_dir() / _FASTCALL_SOURCE],
            [f"-I{python_include}"],
            "the fast-call extension",
        )
    except TVMError:
        return None
