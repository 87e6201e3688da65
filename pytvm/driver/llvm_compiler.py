"""Compiling LLVM IR in this process with llvmlite: no C compiler, no linker, no subprocess.

IR text is optimised at ``-O3`` for the target's CPU (the host's name and features for
``-mcpu=native`` or none) and turned into a position-independent object, cached on disk by
content hash (the text, LLVM's version, the triple, CPU and features) like the C path's shared
objects. The object is then linked into this process by LLVM's JIT linker, with pytvm's host
runtime functions and the C library resolved for it, and its kernels' addresses are taken.
Only :func:`link_shared_object` (``export_library``) needs a system linker.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import shlex
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import llvmlite  # type: ignore[import-untyped]
import llvmlite.binding as llvm  # type: ignore[import-untyped]
from llvmlite.binding import ffi

from ..ffi import compile_cache
from ..ffi.errors import TVMError
from ..ffi.host_library import runtime_library
from ..ffi.libinfo import find_cc
from ..target import Target
from .c_compiler import KernelCache, compile_stats, kernel_cache

__all__ = [
    "Machine",
    "compile_object",
    "jit_link",
    "link_parts",
    "link_shared_object",
    "machine_for",
    "optimized_part",
    "parts_in_parallel",
]

#: pytvm's host runtime functions generated code reaches through weak references.
RUNTIME_HOOKS = (
    "pytvm_TVMAPISetLastError",
    "pytvm_TVMBackendAllocWorkspace",
    "pytvm_TVMBackendFreeWorkspace",
    "pytvm_TVMBackendParallelLaunch",
    "pytvm_TVMBackendGetFuncFromEnv",
    "pytvm_TVMFuncCall",
    "pytvm_TVMFuncFree",
)
_LOCK = threading.RLock()
_LIBRARY_NAMES = itertools.count()


@cache
def _initialized() -> bool:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return True


@dataclass(frozen=True)
class Machine:
    """What objects are compiled for: triple, CPU name and feature string."""

    triple: str
    cpu: str
    features: str

    @property
    def key(self) -> str:
        """Everything about the compiler and machine that changes the object code."""
        return f"llvm {llvm.llvm_version_info} llvmlite {llvmlite.__version__} {self}"


def machine_for(target: Target) -> Machine:
    """The machine of a host ``target``: its ``-mcpu`` (the host's CPU for ``native`` or none)
    with the host's features, plus its ``-mattr``.
    """
    _initialized()
    mcpu = target.mcpu
    if mcpu in ("", "native"):
        cpu, features = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    else:
        cpu, features = mcpu, ""
    mattr = str(target.attrs.get("mattr", ""))
    if mattr:
        features = f"{features},{mattr}" if features else mattr
    return Machine(llvm.get_process_triple(), cpu, features)


def _new_target_machine(machine: Machine) -> llvm.TargetMachine:
    _initialized()
    target = llvm.Target.from_triple(machine.triple)
    return target.create_target_machine(
        cpu=machine.cpu, features=machine.features, opt=3, reloc="pic", codemodel="default"
    )


@cache
def _target_machine(machine: Machine) -> llvm.TargetMachine:
    """The target machine of ``machine`` that serves under ``_LOCK``."""
    return _new_target_machine(machine)


def data_layout(machine: Machine) -> str:
    """The data layout of ``machine`` (for the IR's header)."""
    return str(_target_machine(machine).target_data)


def _cache_path(
    texts: Sequence[str], machine: Machine, stage: str, name: str, where: KernelCache, suffix: str
) -> Path:
    key = hashlib.sha256("\0".join([*texts, machine.key, stage]).encode()).hexdigest()[:24]
    return where.kernels / key[:2] / f"{name}-{key}{suffix}"


def _cached_object(
    texts: Sequence[str],
    machine: Machine,
    stage: str,
    name: str,
    cache: str | os.PathLike[str] | None,
    emit: Callable[[], bytes],
) -> bytes:
    """The object code cached for ``texts`` (compiled by ``emit`` unless the cache has it)."""
    where = kernel_cache(cache)
    path = _cache_path(texts, machine, stage, name, where, ".o")
    compiled = False

    def build() -> bytes:
        nonlocal compiled
        compiled = True
        return emit()

    code = compile_cache.cached_bytes(path, build, root=where.root, remedy=where.remedy)
    compile_stats().count(compiled=compiled)
    return code


def _pass_builder(tm: llvm.TargetMachine) -> Any:
    tuning = llvm.create_pipeline_tuning_options(speed_level=3)
    tuning.loop_vectorization = True
    tuning.slp_vectorization = True
    tuning.loop_unrolling = True
    return llvm.create_pass_builder(tm, tuning)


def compile_object(
    text: str, name: str, machine: Machine, cache: str | os.PathLike[str] | None = None
) -> bytes:
    """The object code of IR ``text`` for ``machine`` (compiled unless the cache has it)."""

    def emit() -> bytes:
        tm = _target_machine(machine)
        with _LOCK:  # LLVM's global context and a target machine serve one thread at a time
            module = llvm.parse_assembly(text)
            module.verify()
            builder = _pass_builder(tm)
            builder.getModulePassManager().run(module, builder)
            return bytes(tm.emit_object(module))

    return _cached_object([text], machine, "O3", name, cache, emit)


def _unlocked_optimizer() -> Any:
    """The entry to LLVM's module optimiser without llvmlite's process-wide lock, or None.

    llvmlite runs every LLVM call under one lock. LLVM itself runs work on modules of separate
    contexts with separate target machines concurrently (as compilers' parallel code-generation
    units do), so the optimiser of a part in its own context may run beside another's.
    """
    handle = getattr(ffi.lib, "_lib", None)
    return getattr(handle, "LLVMPY_RunNewModulePassManager", None)


def parts_in_parallel() -> bool:
    """Whether parts of a library can be optimised concurrently here."""
    return _unlocked_optimizer() is not None


_THREAD = threading.local()


def _thread_target_machine(machine: Machine) -> llvm.TargetMachine:
    machines: dict[Machine, llvm.TargetMachine] = _THREAD.__dict__.setdefault("machines", {})
    if machine not in machines:
        machines[machine] = _new_target_machine(machine)
    return machines[machine]


def optimized_part(
    text: str, machine: Machine, cache: str | os.PathLike[str] | None = None
) -> Path:
    """Optimise one part of a library compiled in parts, in a context and target machine of
    this thread's own; returns the file of its optimised bitcode (cached by the text).
    """
    where = kernel_cache(cache)
    path = _cache_path([text], machine, "O3 part", "part", where, ".bc")

    def build(staged: Path) -> None:
        context = llvm.create_context()
        module = llvm.parse_assembly(text, context=context)
        module.verify()
        builder = _pass_builder(_thread_target_machine(machine))
        _unlocked_optimizer()(builder.getModulePassManager(), module, builder)
        staged.write_bytes(bytes(module.as_bitcode()))

    return compile_cache.cached_file(path, build, root=where.root, mode=0o600, remedy=where.remedy)


def link_parts(
    parts: Sequence[Path],
    texts: Sequence[str],
    name: str,
    machine: Machine,
    cache: str | os.PathLike[str] | None = None,
) -> bytes:
    """The object code of a library compiled in parts (IR ``texts``, optimised to the bitcode
    files ``parts``): linked into one module and emitted, one object as a one-part build makes
    (cached by the texts).
    """

    def emit() -> bytes:
        with _LOCK:
            first, *rest = (llvm.parse_bitcode(p.read_bytes()) for p in parts)
            for part in rest:
                first.link_in(part)
            return bytes(_target_machine(machine).emit_object(first))

    return _cached_object(texts, machine, "O3 parts", name, cache, emit)


@cache
def _jit() -> Any:
    host = machine_for(Target("llvm"))
    return llvm.create_lljit_compiler(_target_machine(host))


def _runtime_addresses() -> dict[str, int]:
    import ctypes

    lib = runtime_library()
    return {name: ctypes.cast(lib[name], ctypes.c_void_p).value or 0 for name in RUNTIME_HOOKS}


def jit_link(code: bytes, exports: Sequence[str]) -> tuple[Any, dict[str, int]]:
    """Link object ``code`` into this process; returns the library's keep-alive handle (the
    code is unloaded when it is collected) and the addresses of the ``exports``.
    """
    builder = llvm.JITLibraryBuilder().add_object_img(code)
    for name, address in _runtime_addresses().items():
        builder.import_symbol(name, address)
    builder.add_current_process()  # the C library and libm
    for name in exports:
        builder.export_symbol(name)
    with _LOCK:
        tracker = builder.link(_jit(), f"pytvm_kernels_{next(_LIBRARY_NAMES)}")
    return tracker, {name: tracker[name] for name in exports}


def link_shared_object(code: bytes, output: str | os.PathLike[str]) -> None:
    """Write a shared object holding object ``code`` to ``output``, linked by the system C
    compiler driver (``$CC``, cc, gcc, clang) or, without one, by ``ld``.
    """
    linker = find_cc()
    argv = [*shlex.split(linker), "-shared"] if linker else []
    if not argv:
        ld = shutil.which("ld")
        if ld is None:
            raise TVMError(
                "export_library of an LLVM-built module needs a linker (a C compiler driver "
                "or ld) to write a shared object; install binutils or gcc, or build with "
                "target='llvm -backend=c'"
            )
        argv = [ld, "-shared"]
    with tempfile.TemporaryDirectory(prefix="export-") as tmp:
        obj = Path(tmp) / "kernels.o"
        obj.write_bytes(code)
        staged = Path(tmp) / "kernels.so"
        cmd = [*argv, "-o", str(staged), str(obj), "-lm"]
        result = subprocess.run(cmd, capture_output=True, text=True, check=False)
        if result.returncode != 0:
            raise TVMError(
                f"linking {output} failed:\n$ {shlex.join(cmd)}\n{result.stdout}{result.stderr}"
            )
        shutil.copyfile(staged, output)
