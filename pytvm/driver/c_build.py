"""``build`` through the system C compiler: loop IR → C source → shared object → module.

The generated C is compiled with ``-O3 -march=native`` for the host (``-mcpu=`` picks another
CPU), plus the caller's ``options``; the object is cached by content hash (``c_compiler``).
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Sequence

from ..codegen.c import codegen_c
from ..target import Target
from ..tir.function import IRModule
from ..tir.transform import lower_if_needed
from .c_compiler import compile_shared_object, default_flags
from .compiled_module import CompiledModule

__all__ = ["build_with_c"]

_LOG = logging.getLogger("pytvm.driver")


def build_with_c(
    mod: IRModule,
    target: Target,
    name: str,
    cc: str | None,
    options: Sequence[str],
    cache_dir: str | os.PathLike[str] | None,
    start: float,
) -> CompiledModule:
    """Lower ``mod`` where needed, generate C for ``target`` and compile it with ``cc`` (the
    system C compiler by default) and ``options``; ``name`` names the object when ``mod`` is
    empty, and ``start`` is when the build began (for the stage times logged at INFO).
    """
    mod = lower_if_needed(mod)
    lowered = time.perf_counter()
    source = codegen_c(mod, system_lib=target.system_lib, target_text=str(target))
    generated = time.perf_counter()
    mcpu = target.mcpu or ("native" if target.is_host else "")
    flags = [*default_flags(mcpu if target.is_host else target.mcpu), *options]
    first = next(iter(mod.functions), name)
    path = compile_shared_object(source, first, cc=cc, flags=flags, cache=cache_dir)
    done = time.perf_counter()
    _LOG.info(
        "built %s for %s: lower %.1f ms, codegen %.1f ms, cc %.1f ms",
        ", ".join(mod.functions),
        target,
        (lowered - start) * 1e3,
        (generated - lowered) * 1e3,
        (done - generated) * 1e3,
    )
    return CompiledModule(path, source, str(target))
