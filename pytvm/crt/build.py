"""Build and cache ``pytvm-device``, the host device binary (CRT + MinRPC over two pipes).

The binary is made by the C runtime's Makefile (``make -C <pkg>/src/crt pytvm-device``) the
first time it is asked for, into the per-user cache keyed by a hash of the C sources and the
compiler, so editing a source or switching compilers builds a fresh one. The cache entry is
kept by :mod:`pytvm.ffi.compile_cache`: each build runs in a private temporary folder and the
result is moved into place with an atomic rename and a checksum, so concurrent first uses (test
workers, servers) never see a half-written binary and a damaged one is built again.

Examples
--------
>>> from pytvm import rpc
>>> from pytvm.crt import device_binary
>>> sess = rpc.PopenSession(str(device_binary()))          # doctest: +SKIP
>>> sess.get_function("pytvm.device.echo")(7)                # doctest: +SKIP
7
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import sys
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path

from ..ffi import compile_cache
from ..ffi.errors import TVMError
from ..ffi.libinfo import cache_dir, cc_version, find_cc, include_dir, source_dir

__all__ = ["crt_source_dir", "device_binary", "sources_digest"]

BINARY_NAME = "pytvm-device"
HEXAGON_WRAPPER_NAME = "pytvm-device-hexagon"
_SOURCE_SUFFIXES = (".c", ".h", ".mk")
MINIMAL_CONFIG_FLAGS = "-DTVM_CRT_CONFIG_MINIMAL=1"


def crt_source_dir() -> Path:
    """The C runtime's source folder (its Makefile builds ``pytvm-device``)."""
    return source_dir() / "crt"


def sources_digest(cc: str) -> str:
    """A short hash of every C runtime source, pytvm's C headers and the compiler ``cc``."""
    digest = hashlib.sha256()
    root = crt_source_dir()
    files = [p for p in root.rglob("*") if p.is_file() and p.suffix in _SOURCE_SUFFIXES]
    files.append(root / "Makefile")
    # the skel linked into the binary is generated from these (src/crt/device/skel.mk)
    idl_dir = source_dir().parent / "contrib" / "hexagon"
    generator = ("hexagon_rpc.idl", "idl.py", "idl_parser.py", "skel_generator.py", "wire.py")
    files += [idl_dir / name for name in generator]
    files += list((idl_dir / "templates").glob("*.in"))
    files += list(include_dir().rglob("*.h"))
    for path in sorted(files):
        digest.update(str(path.relative_to(source_dir().parent)).encode())
        digest.update(path.read_bytes())
    digest.update(f"{cc}\n{cc_version(cc)}\n{sys.platform}".encode())
    return digest.hexdigest()[:16]


def device_binary(
    hexagon: bool = False,
    cc: str | None = None,
    minimal: bool = False,
    system_lib: Sequence[str | os.PathLike[str]] = (),
) -> Path:
    """Path of the ``pytvm-device`` binary, built on first use.

    Parameters
    ----------
    hexagon : bool
        Return a wrapper script that starts the binary with ``--hexagon`` (the accelerator
        emulator: device type 16 backed by its own memory pool). Hosts that pass only a binary
        path, such as TVM's ``rpc.PopenSession``, can start the emulator through it.
    cc : str, optional
        The C compiler (default: :func:`pytvm.ffi.libinfo.find_cc`).
    minimal : bool
        Build the C runtime's minimal configuration (``-DTVM_CRT_CONFIG_MINIMAL=1``, the one a
        microcontroller gets: a 16 KiB pool, 2 KiB packets, no tracing, no accelerator, error
        texts reduced to kind and place). Such a binary has no ``--hexagon``.
    system_lib : sequence of paths
        C sources of a system library (``pytvm.build(..., target="c --system-lib")`` writes
        them; they define ``TVMSystemLibEntryPoint``) linked into the binary instead of the
        empty one, so ``sess.system_lib()["name"]`` calls those kernels on the device. Each
        distinct set of sources gets its own cached binary.

    Returns
    -------
    pathlib.Path
        An executable run as ``<path> <read_fd> <write_fd>`` (the ``PopenSession``
        convention).

    Raises
    ------
    TVMError
        No C compiler or no ``make``, or the build failed (the compiler output is included).
    """
    compiler = cc or find_cc()
    if compiler is None:
        raise TVMError(
            "no C compiler found (looked for $CC, else cc, gcc, clang): building pytvm-device "
            "needs one; "
            "install gcc or clang, or pass cc="
        )
    if hexagon and minimal:
        raise TVMError(
            "device_binary(hexagon=True, minimal=True): the minimal configuration is built "
            "without accelerator support; pass minimal=False for the hexagon emulator"
        )
    sources = tuple(sorted(str(Path(p).resolve()) for p in system_lib))
    for src in sources:
        if not src.endswith(".c") or not Path(src).is_file():
            raise TVMError(f"device_binary: system_lib source {src!r} is not a C file")
    binary = _built_binary(compiler, MINIMAL_CONFIG_FLAGS if minimal else "", sources)
    return _hexagon_wrapper(binary) if hexagon else binary


def _system_lib_digest(sources: tuple[str, ...]) -> str:
    digest = hashlib.sha256()
    for src in sources:
        digest.update(Path(src).name.encode() + b"\0" + Path(src).read_bytes())
    return digest.hexdigest()[:12]


def _built_binary(cc: str, config_flags: str = "", system_lib: tuple[str, ...] = ()) -> Path:
    variant = "minimal-" if config_flags else ""
    if system_lib:
        variant += f"syslib-{_system_lib_digest(system_lib)}-"
    return _build_variant(cc, config_flags, system_lib, variant)


@lru_cache(maxsize=32)
def _build_variant(cc: str, config_flags: str, system_lib: tuple[str, ...], variant: str) -> Path:
    target = cache_dir() / "crt" / (variant + sources_digest(cc)) / BINARY_NAME

    def build(built: Path) -> None:
        make = shutil.which("make")
        if make is None:
            raise TVMError("building pytvm-device needs `make`; install it (e.g. apt install make)")
        tmp = built.parent
        jobs = str(min(8, os.cpu_count() or 1))
        cmd = [make, "-s", "-j", jobs, "-C", str(crt_source_dir()), f"BUILD={tmp}", f"CC={cc}"]
        if config_flags:
            cmd.append(f"CRT_CONFIG_FLAGS={config_flags}")
        if system_lib:
            syslib_dir = Path(tmp) / "syslib-src"
            syslib_dir.mkdir()
            for src in system_lib:
                shutil.copyfile(src, syslib_dir / Path(src).name)
            cmd.append(f"DEVICE_SYSLIB_DIR={syslib_dir}")
        if sys.executable:
            cmd.append(f"PYTHON={sys.executable}")  # generates the hexagon_rpc skel
        cmd.append(BINARY_NAME)
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0 or not built.exists():
            raise TVMError(
                f"building pytvm-device failed:\n$ {shlex.join(cmd)}\n{result.stdout}"
                f"{result.stderr}"
            )

    return compile_cache.cached_file(target, build, root=cache_dir())


def _hexagon_wrapper(binary: Path) -> Path:
    text = f'#!/bin/sh\nexec {shlex.quote(str(binary))} "$@" --hexagon\n'
    return compile_cache.cached_file(
        binary.parent / HEXAGON_WRAPPER_NAME, lambda staged: staged.write_text(text), cache_dir()
    )
