"""Compiling and running an AOT factory's C: the CRT's strict flags, a host shared object called
through ctypes (``tvmgen_<mod>_run`` with the structs as arrays of pointers), Cortex-M4 objects.
"""

from __future__ import annotations

import ctypes
import re
import shutil
import subprocess
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.graph.aot import AOTExecutorFactoryModule

CRT_MAKEFILE = Path(pytvm.__file__).resolve().parent / "src" / "crt" / "Makefile"
M4_FLAGS = ["-mcpu=cortex-m4", "-mthumb", "-mfloat-abi=hard", "-mfpu=fpv4-sp-d16"]


def crt_strict_flags() -> list[str]:
    """``CRT_STRICT_FLAGS`` of ``pytvm/src/crt/Makefile`` (continuation lines joined)."""
    text = CRT_MAKEFILE.read_text().replace("\\\n", " ")
    match = re.search(r"^CRT_STRICT_FLAGS\s*:=(.*)$", text, re.MULTILINE)
    assert match is not None, "CRT_STRICT_FLAGS is gone from the CRT's Makefile"
    return match.group(1).split()


STRICT = ["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", *crt_strict_flags()]


def write_sources(factory: AOTExecutorFactoryModule, folder: Path) -> list[Path]:
    """The factory's sources and headers written to ``folder``; the ``.c`` paths in order."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in factory.lib.headers.items():
        (folder / name).write_text(text)
    paths = []
    for name, text in factory.lib.sources.items():
        (folder / name).write_text(text)
        paths.append(folder / name)
    return paths


def compile_c(cc: str, args: Sequence[str], cwd: Path) -> None:
    """Run ``cc args``; fail the test with the compiler's messages."""
    proc = subprocess.run(
        [cc, *args], cwd=cwd, capture_output=True, text=True, timeout=120, check=False
    )
    assert proc.returncode == 0, f"{cc} {' '.join(args)}\n{proc.stderr[-4000:]}"


def host_shared_object(factory: AOTExecutorFactoryModule, folder: Path, cc: str) -> Path:
    """The factory's C compiled by ``cc`` for this machine under the strict flags."""
    sources = write_sources(factory, folder)
    out = folder / f"lib_{Path(cc).name}.so"
    compile_c(
        cc,
        [*STRICT, "-O2", *factory.lib.cflags, "-fPIC", "-shared", f"-I{folder}"]
        + [str(p) for p in sources]
        + ["-o", str(out)],
        folder,
    )
    return out


def run_shared_object(
    path: Path, factory: AOTExecutorFactoryModule, inputs: Sequence[np.ndarray]
) -> list[np.ndarray]:
    """``tvmgen_<mod>_run`` of the library at ``path`` on ``inputs``; the outputs."""
    lib = ctypes.CDLL(str(path))
    run = getattr(lib, f"tvmgen_{factory.mod_name}_run")
    run.restype = ctypes.c_int32
    ins = [np.ascontiguousarray(x, dtype=t.dtype) for x, t in zip(inputs, factory.inputs)]
    outs = [np.full(t.shape, np.nan if "float" in t.dtype else 0, t.dtype) for t in factory.outputs]
    in_ptrs = (ctypes.c_void_p * max(1, len(ins)))(*[x.ctypes.data for x in ins])
    out_ptrs = (ctypes.c_void_p * max(1, len(outs)))(*[y.ctypes.data for y in outs])
    rc = run(ctypes.byref(in_ptrs), ctypes.byref(out_ptrs))
    assert rc == 0, f"tvmgen_{factory.mod_name}_run returned {rc}"
    return outs


def undefined_symbols(nm: str, objects: Sequence[Path]) -> set[str]:
    """The symbols ``objects`` reference without defining them."""
    proc = subprocess.run(
        [nm, "-u", *map(str, objects)], capture_output=True, text=True, timeout=60, check=True
    )
    return {
        line.split()[-1] for line in proc.stdout.splitlines() if line.strip() and ":" not in line
    }


class AotC:
    """The helpers above, for tests (``aot_c`` fixture)."""

    STRICT = STRICT
    M4_FLAGS = M4_FLAGS
    write_sources = staticmethod(write_sources)
    compile_c = staticmethod(compile_c)
    host_shared_object = staticmethod(host_shared_object)
    run_shared_object = staticmethod(run_shared_object)
    undefined_symbols = staticmethod(undefined_symbols)


@pytest.fixture
def aot_c() -> type[AotC]:
    """Compiling and running AOT C (:class:`AotC`)."""
    return AotC


@pytest.fixture
def host_cc() -> str:
    """The host C compiler (gcc, else clang)."""
    cc = shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        pytest.skip("needs gcc or clang (neither is installed)")
    return cc


@pytest.fixture
def compile_and_run(
    tmp_path: Path, host_cc: str
) -> Callable[[AOTExecutorFactoryModule, Sequence[np.ndarray]], list[np.ndarray]]:
    """Compile a factory for this machine and run it once on some inputs."""

    def go(factory: AOTExecutorFactoryModule, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
        folder = tmp_path / f"build_{factory.mod_name}"
        return run_shared_object(host_shared_object(factory, folder, host_cc), factory, inputs)

    return go
