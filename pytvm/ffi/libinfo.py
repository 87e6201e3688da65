"""Where pytvm's C headers and sources live, the system C compiler, and the host runtime library.

The host runtime library (``libpytvm_runtime.so``) provides the C runtime API that compiled
kernels call (``TVMFuncCall``, ``TVMBackendAllocWorkspace`` ...). It is built from the sources
shipped in the package the first time a shared object is loaded, with the system C compiler, and
cached per source hash, so a plain ``pip install`` needs no build step.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from .errors import TVMError

__all__ = [
    "package_dir",
    "include_dir",
    "source_dir",
    "find_cc",
    "cc_version",
    "cache_dir",
    "runtime_library_path",
]

_RUNTIME_SOURCES = ("runtime/host_runtime.c",)


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
    """Path of the system C compiler (``cc``, ``gcc`` or ``clang``), or None if there is none."""
    for name in ("cc", "gcc", "clang"):
        path = shutil.which(name)
        if path:
            return path
    return None


@lru_cache(maxsize=8)
def cc_version(cc: str) -> str:
    """First line of ``cc --version``."""
    try:
        out = subprocess.run([cc, "--version"], capture_output=True, text=True, timeout=30)
    except OSError as err:
        return f"unavailable ({err})"
    return (out.stdout or out.stderr).splitlines()[0] if (out.stdout or out.stderr) else "unknown"


def cache_dir() -> Path:
    """Per-user cache of built runtime libraries."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(Path.home(), ".cache")
    return Path(base) / "pytvm"


def _sources_digest() -> str:
    digest = hashlib.sha256()
    for rel in _RUNTIME_SOURCES:
        digest.update((source_dir() / rel).read_bytes())
    for header in sorted(include_dir().rglob("*.h")) + sorted(source_dir().rglob("*.h")):
        digest.update(header.read_bytes())
    digest.update(sys.platform.encode())
    return digest.hexdigest()[:16]


@lru_cache(maxsize=1)
def runtime_library_path() -> Path:
    """Path of the host runtime library, building it once per source version if needed."""
    target = cache_dir() / _sources_digest() / "libpytvm_runtime.so"
    if target.exists():
        return target
    cc = find_cc()
    if cc is None:
        raise TVMError(
            "no C compiler found (looked for cc, gcc, clang): pytvm needs one to build its host "
            "runtime library before loading compiled modules; install gcc or clang"
        )
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
        staged = Path(tmp) / target.name
        cmd = [cc, "-std=c11", "-O2", "-fPIC", "-shared", f"-I{include_dir()}",
               f"-I{source_dir() / 'runtime'}",
               *[str(source_dir() / rel) for rel in _RUNTIME_SOURCES],
               "-o", str(staged), "-lpthread"]
        result = subprocess.run(cmd, capture_output=True, text=True)
        if result.returncode != 0:
            raise TVMError(f"building the host runtime library failed:\n$ {' '.join(cmd)}\n"
                           f"{result.stderr}")
        os.replace(staged, target)  # atomic: concurrent builders race harmlessly
    return target
