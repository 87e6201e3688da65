"""``build`` for a target that is not this machine: loop IR → C source → ``SourceModule``.

Nothing is compiled or loaded here: the C is for the target's own toolchain (a Cortex-M's
``arm-none-eabi-gcc``, a board project). The module carries the target's compiler flags
(``Target.cflags``) and the caller's ``options``; ``cc`` becomes its default compiler for
``export_library`` of an object file.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from ..codegen.c import codegen_c
from ..runtime.source_module import SourceModule
from ..target import Target
from ..tir.function import IRModule
from ..tir.transform import lower_if_needed

__all__ = ["build_source_module"]

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
