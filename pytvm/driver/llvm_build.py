"""``build`` through llvmlite: lowered loop IR → LLVM IR → object code → kernels in process."""

from __future__ import annotations

import logging
import os
import time

from ..codegen.llvm_module import codegen_llvm
from ..codegen.packed_args import export_symbol
from ..target import Target
from ..tir.function import IRModule
from .llvm_compiler import compile_object, data_layout, jit_link, machine_for
from .llvm_jit_module import LLVMModule

__all__ = ["build_with_llvm"]

_LOG = logging.getLogger("pytvm.driver")


def build_with_llvm(
    mod: IRModule,
    target: Target,
    cache_dir: str | os.PathLike[str] | None,
    times: tuple[float, float],
) -> LLVMModule:
    """The module of lowered ``mod`` compiled for host ``target`` (``times``: when the build
    started and when lowering ended, for the log).
    """
    machine = machine_for(target)
    source = codegen_llvm(mod, str(target), machine.triple, data_layout(machine))
    generated = time.perf_counter()
    first = next(iter(mod.functions), "kernels")
    code = compile_object(source, first, machine, cache=cache_dir)
    compiled = time.perf_counter()
    library, addresses = jit_link(code, [export_symbol(name) for name in mod.functions])
    done = time.perf_counter()
    start, lowered = times
    _LOG.info(
        "built %s for %s: lower %.1f ms, codegen %.1f ms, llvm %.1f ms, jit link %.1f ms",
        ", ".join(mod.functions),
        target,
        (lowered - start) * 1e3,
        (generated - lowered) * 1e3,
        (compiled - generated) * 1e3,
        (done - compiled) * 1e3,
    )
    return LLVMModule(library, addresses, source, code, str(target))
