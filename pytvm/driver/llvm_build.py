"""``build`` through llvmlite: loop IR → LLVM IR → object code → kernels in process.

On a machine with more than one core, a library of several kernels is compiled in parts: this
thread lowers and generates one part after another while worker threads optimise the parts
already generated, each in an LLVM context of its own (LLVM's optimiser runs without Python's
lock); the optimised parts are then linked into one module and emitted as one object, the same
artefact a one-part build makes. On one core the library is one part.
"""

from __future__ import annotations

import logging
import math
import os
import sys
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

from ..codegen.abi import ENTRY_SYMBOL, entry_kernel, export_symbol
from ..codegen.llvm import codegen_llvm
from ..target import Target
from ..tir.function import IRModule
from ..tir.transform import lower_if_needed
from .llvm_compiler import (
    Machine,
    compile_object,
    data_layout,
    jit_link,
    link_parts,
    machine_for,
    optimized_part,
    parts_in_parallel,
)
from .llvm_jit_module import MODULE_CTX_SYMBOL, LLVMModule

__all__ = ["build_with_llvm"]

_LOG = logging.getLogger("pytvm.driver")

#: Parts per core: more parts balance the workers better, each repeats the small prelude.
_PARTS_PER_CORE = 2
#: Kernels per core below which a library is one part: each part's fixed costs (its prelude, a
#: worker's target machine) outweigh the overlap (the 4 kernels of the reference MLP build in
#: 0.17 s as one part, 0.22-0.26 s in parts).
_MIN_KERNELS_PER_CORE = 3


def _cores(target: Target) -> int:
    return target.num_cores


def _parts(mod: IRModule, cores: int) -> list[IRModule]:
    """``mod`` as consecutive groups of functions, ``_PARTS_PER_CORE`` per core at most (one
    group on one core, or for a few kernels).
    """
    names = list(mod.functions)
    split = cores > 1 and len(names) >= _MIN_KERNELS_PER_CORE * cores
    count = min(len(names), _PARTS_PER_CORE * cores) if split else 1
    size = math.ceil(len(names) / max(1, count)) or 1
    groups = [names[i : i + size] for i in range(0, len(names), size)] or [[]]
    return [IRModule({n: mod.functions[n] for n in group}) for group in groups]


def build_with_llvm(
    mod: IRModule, target: Target, cache_dir: str | os.PathLike[str] | None, start: float
) -> LLVMModule:
    """The module of ``mod`` (lowered here unless it already is) compiled for host ``target``
    (``start``: when the build started, for the log).
    """
    machine = machine_for(target)
    layout = data_layout(machine)
    cores = _cores(target)
    parts = _parts(mod, cores) if parts_in_parallel() else [mod]
    first = next(iter(mod.functions), "kernels")
    if len(parts) == 1:
        lowered = lower_if_needed(mod)
        source = codegen_llvm(lowered, str(target), machine.triple, layout)
        generated = time.perf_counter()
        code = compile_object(source, first, machine, cache=cache_dir)
        exported = list(lowered.functions)
    else:
        with _prompt_handover():
            source, code, exported, generated = _build_in_parts(
                parts, cores, target, machine, layout, first, cache_dir
            )
    compiled = time.perf_counter()
    entry = [ENTRY_SYMBOL] if entry_kernel(exported) is not None else []
    symbols = [*(export_symbol(name) for name in exported), *entry, MODULE_CTX_SYMBOL]
    library, by_symbol = jit_link(code, symbols)
    # Looked up by kernel name: ``exp`` is exported as ``pytvm_kernel_exp`` (libm has ``exp``).
    addresses = {name: by_symbol[export_symbol(name)] for name in exported if name != "main"}
    addresses.update((symbol, by_symbol[symbol]) for symbol in entry)
    if "main" in exported:
        addresses[ENTRY_SYMBOL] = by_symbol[ENTRY_SYMBOL]
    addresses[MODULE_CTX_SYMBOL] = by_symbol[MODULE_CTX_SYMBOL]
    done = time.perf_counter()
    _LOG.info(
        "built %s for %s in %d part(s): lower + codegen %.1f ms, then llvm %.1f ms, "
        "jit link %.1f ms",
        ", ".join(exported),
        target,
        len(parts),
        (generated - start) * 1e3,
        (compiled - generated) * 1e3,
        (done - compiled) * 1e3,
    )
    return LLVMModule(library, addresses, source, code, str(target))


@contextmanager
def _prompt_handover() -> Iterator[None]:
    """A worker needs Python's lock back after each LLVM call: hand it over within 0.1 ms
    rather than 5, or the workers queue behind this thread's code generation.
    """
    interval = sys.getswitchinterval()
    sys.setswitchinterval(min(interval, 1e-4))
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _build_in_parts(
    parts: list[IRModule],
    cores: int,
    target: Target,
    machine: Machine,
    layout: str,
    first: str,
    cache_dir: str | os.PathLike[str] | None,
) -> tuple[str, bytes, list[str], float]:
    texts: list[str] = []
    exported: list[str] = []
    with ThreadPoolExecutor(max_workers=cores, thread_name_prefix="pytvm-llvm") as pool:
        jobs: list[Future[Path]] = []
        for k, part in enumerate(parts):
            lowered = lower_if_needed(part)
            text = codegen_llvm(
                lowered, str(target), machine.triple, layout, definitions=k == 0, entry=False
            )
            texts.append(text)
            exported += lowered.functions
            jobs.append(pool.submit(optimized_part, text, machine, cache_dir))
        generated = time.perf_counter()
        optimized = [job.result() for job in jobs]
    code = link_parts(optimized, texts, first, machine, cache=cache_dir)
    source = "".join(
        f"; part {k + 1} of {len(texts)} (optimised separately, linked into one object)\n{text}"
        for k, text in enumerate(texts)
    )
    return source, code, exported, generated
