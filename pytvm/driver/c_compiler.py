"""Compiling generated C into a shared object, cached on disk by content hash.

The cache key is the source, the compiler and its version, and the flags, so an unchanged kernel
is not compiled again (in this process or the next). Entries are kept by
:mod:`pytvm.ffi.compile_cache`: built in a private temporary folder and renamed into place with
a checksum, so concurrent builds of one kernel never see a partial file and a damaged entry is
compiled again.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from ..ffi import compile_cache
from ..ffi.cache_folder import DEFAULT_REMEDY
from ..ffi.errors import TVMError
from ..ffi.libinfo import cache_dir, cc_version, find_cc, include_dir

__all__ = [
    "CompileStats",
    "KernelCache",
    "compile_shared_object",
    "compile_stats",
    "default_flags",
    "kernel_cache",
]


class CompileStats:
    """How many times the C compiler ran, and how many builds the cache answered."""

    def __init__(self) -> None:
        self.compiled = 0
        self.cached = 0
        self._lock = threading.Lock()

    def count(self, compiled: bool) -> None:
        """Record one build."""
        with self._lock:
            if compiled:
                self.compiled += 1
            else:
                self.cached += 1


_STATS = CompileStats()


def compile_stats() -> CompileStats:
    """The process's compile counters (the cache's effect is visible here)."""
    return _STATS


@dataclass(frozen=True, slots=True)
class KernelCache:
    """Where compiled kernels are kept: ``kernels`` inside the trusted cache folder ``root``;
    ``remedy`` tells the user what to do if that folder is refused.
    """

    root: Path
    kernels: Path
    remedy: str


def kernel_cache(cache: str | os.PathLike[str] | None) -> KernelCache:
    """The kernel cache in the folder ``cache`` (a ``cache_dir=`` argument), or in the per-user
    cache (``<cache_dir()>/kernels``) when it is None.
    """
    if cache is not None:
        return KernelCache(Path(cache), Path(cache), "remove it or pass another cache_dir")
    return KernelCache(cache_dir(), cache_dir() / "kernels", DEFAULT_REMEDY)


def default_flags(mcpu: str = "native") -> list[str]:
    """Flags for a host kernel: optimised, position independent, tuned for ``mcpu``."""
    flags = ["-O3", "-std=gnu11", "-fPIC", "-shared", "-fno-math-errno"]
    if mcpu:
        flags.append(f"-march={mcpu}" if mcpu == "native" else f"-mcpu={mcpu}")
    return flags


def compile_shared_object(
    source: str,
    name: str,
    cc: str | None = None,
    flags: Sequence[str] = (),
    cache: str | os.PathLike[str] | None = None,
) -> Path:
    """The shared object of C ``source`` (compiled unless the cache has it)."""
    compiler = cc or find_cc()
    if compiler is None:
        raise TVMError(
            f"no C compiler found (looked for $CC, else cc, gcc, clang): building {name} needs "
            "one; install gcc or clang, or pass cc="
        )
    argv = [*shlex.split(compiler), *flags, f"-I{include_dir()}"]
    key = hashlib.sha256(
        "\0".join([source, cc_version(compiler) or compiler, *argv]).encode()
    ).hexdigest()[:24]
    where = kernel_cache(cache)
    target = where.kernels / key[:2] / f"{name}-{key}.so"
    compiled = False

    def build(out: Path) -> None:
        nonlocal compiled
        src = out.with_name(f"{name}.c")
        src.write_text(source)
        cmd = [*argv, str(src), "-o", str(out), "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise TVMError(
                f"compiling {name} failed:\n$ {shlex.join(cmd)}\n{result.stdout}{result.stderr}"
            )
        compiled = True

    compile_cache.cached_file(target, build, root=where.root, remedy=where.remedy)
    _STATS.count(compiled=compiled)
    return target
