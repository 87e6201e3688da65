"""``build`` for a target that is not this machine: loop IR → C source → ``SourceModule``.

Nothing is compiled or loaded here: the C is for the target's own toolchain (a Cortex-M's
``arm-none-eabi-gcc``, a board project). The module carries the target's compiler flags
(``Target.cflags``) and the caller's ``options``; ``cc`` becomes its default compiler for
``export_library`` of an object file. :func:`compile_for_host` compiles the same C for this
machine, to check a cross target's kernels (its one-lane, one-core schedules) numerically here.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence

from ..codegen.c import codegen_c
from ..ffi.errors import TVMValueError
from ..runtime.source_module import SourceModule
from ..target import Target
from ..tir.function import IRModule
from ..tir.transform import lower_if_needed
from .c_compiler import compile_shared_object, default_flags
from .compiled_module import CompiledModule

__all__ = ["build_source_module", "compile_for_host"]

_LOG = logging.getLogger("pytvm.driver")


def build_source_module(
    mod: IRModule,
    target: Target,
    name: str,
    cc: str | None,
    options: Sequence[str],
    start: float,
) -> SourceModule:
    """Lower ``mod`` where needed and generate C for ``target`` (with its system library
    registry under ``--system-lib``) as the source module ``<name>.c``; ``start`` is when the
    build began (for the stage times logged at INFO).
    """
    with target:  # the intrinsics' lowering reads the target (lower_intrin)
        mod = lower_if_needed(mod)
    lowered = time.perf_counter()
    source = codegen_c(mod, system_lib=target.system_lib, target_text=str(target))
    done = time.perf_counter()
    _LOG.info(
        "generated C of %s for %s (not the host: no compile): lower %.1f ms, codegen %.1f ms",
        ", ".join(mod.functions),
        target,
        (lowered - start) * 1e3,
        (done - lowered) * 1e3,
    )
    return SourceModule(
        {f"{name}.c": source},
        str(target),
        list(mod.functions),
        cflags=[*target.cflags, *options],
        cc=cc,
    )


def compile_for_host(
    mod: SourceModule, cache_dir: str | os.PathLike[str] | None = None
) -> CompiledModule:
    """The kernels of ``mod`` (C generated for another target) compiled for this machine and
    loaded: the same kernel code, linked against pytvm's host runtime instead of the CRT (no
    ``-DPYTVM_CRT``), so the schedules chosen for a Cortex-M can be checked against numpy.
    """
    if not isinstance(mod, SourceModule):
        raise TVMValueError(
            f"compile_for_host expects a SourceModule (pytvm.build for a cross target), got "
            f"{type(mod).__name__}"
        )
    if mod.headers or len(mod.all_sources()) != 1:
        raise TVMValueError(
            f"compile_for_host: {mod!r} has {len(mod.all_sources())} sources and "
            f"{len(mod.headers)} headers; only a one-file kernel module is compiled here"
        )
    source = mod.get_source()
    name = next(iter(mod.sources)).removesuffix(".c")
    path = compile_shared_object(source, name, flags=default_flags("native"), cache=cache_dir)
    return CompiledModule(path, source, mod.target)
