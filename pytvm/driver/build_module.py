"""``lower`` and ``build``: a schedule or PrimFunc → loop IR through the passes → a module.

This is seed 004's ``tvm.lower``/``tvm.build`` flow. ``build`` picks the backend and hands the
module to it: ``c_build`` (C, the system C compiler) or ``llvm_build`` (LLVM IR, llvmlite).
Each logs the time spent in each stage (``logging`` at INFO, logger ``pytvm.driver``).
"""

from __future__ import annotations

import importlib.util
import os
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..ffi.errors import TVMTypeError, TVMValueError
from ..runtime.source_module import SourceModule
from ..target import Target
from ..tir.function import IRModule, PrimFunc
from ..tir.transform import lower_pipeline
from .c_build import build_with_c
from .compiled_module import CompiledModule
from .gc_pause import gc_paused
from .source_build import build_source_module

__all__ = ["build", "compile", "lower", "schedule_to_module"]

if TYPE_CHECKING:  # the llvmlite backend is imported when a build uses it
    from .llvm_jit_module import LLVMModule


def _as_module(inputs: Any, args: Sequence[Any] | None, name: str) -> IRModule:
    from .. import te

    if isinstance(inputs, IRModule):
        return inputs
    if isinstance(inputs, PrimFunc):
        if "global_symbol" not in inputs.attrs:
            inputs = inputs.with_attr("global_symbol", name)
        return IRModule.from_expr(inputs)
    schedule_type = getattr(te, "Schedule", None)
    if schedule_type is not None and isinstance(inputs, schedule_type):
        if args is None:
            raise TVMValueError(f"lower({name}): a schedule needs args (the tensors, in order)")
        return IRModule.from_expr(te.lower_schedule(inputs, list(args), name))
    raise TVMTypeError(
        f"lower/build expects a te.Schedule, a PrimFunc or an IRModule, got {type(inputs).__name__}"
    )


def schedule_to_module(
    sch: Any, args: Sequence[Any] | None = None, name: str = "main", binds: Any = None
) -> IRModule:
    """TVM's ``schedule_to_module``: the schedule as an IRModule, before any pass runs."""
    if binds:
        raise TVMValueError(f"schedule_to_module({name}): binds= is not supported by pytvm")
    return _as_module(sch, args, name)


def lower(
    inputs: Any,
    args: Sequence[Any] | None = None,
    name: str = "main",
    simple_mode: bool = False,
) -> IRModule:
    """Lower a schedule (with its ``args``), a PrimFunc or an IRModule through the passes.

    The result prints as readable loop IR (``print(pytvm.lower(s, [A, B, C], name="f"))``).
    """
    del simple_mode  # TVM's flag; the printout never shows metadata
    mod = _as_module(inputs, args, name)
    return lower_pipeline(mod)


@gc_paused()
def build(
    inputs: Any,
    args: Sequence[Any] | None = None,
    target: str | Target | None = None,
    name: str = "default_function",
    cc: str | None = None,
    options: Sequence[str] = (),
    cache_dir: str | os.PathLike[str] | None = None,
    runtime: Any = None,
) -> CompiledModule | LLVMModule | SourceModule:
    """Compile kernels into a module: ``build(s, [A, B, C], target="c", name="f")["f"](...)``.

    ``target`` is ``"c"`` (generated C, compiled by the system C compiler with ``-O3
    -march=native`` unless ``-mcpu=`` says otherwise; ``--system-lib`` also emits the C
    runtime's function registry; so does an IRModule with the attribute ``system_lib_prefix``,
    TVM's spelling) or ``"llvm"``, which builds for the host through the backend
    ``Target.backend`` names: ``-backend=llvmlite`` compiles LLVM IR in this process (no C
    compiler; the result is an ``LLVMModule``), ``-backend=c`` takes the C path. ``cc`` and
    ``options`` replace the C compiler and add flags (cross compiling), so they pick the C path
    when the target names no backend. Compiled code is cached by content hash under
    ``cache_dir``.

    A target that is not this machine (``Target.is_host`` False: ``c -mcpu=cortex-m4``,
    ``c -mtriple=thumbv7em-none-eabihf``, ``llvm -mtriple=aarch64-linux-gnu``) is not
    compiled: the result is a :class:`~pytvm.runtime.source_module.SourceModule` of the C
    (``llvm`` cross targets too: pytvm emits C for every target it cannot load), with the
    target's ``cflags`` plus ``options``; ``cc`` becomes its compiler for ``export_library``.

    ``runtime`` is TVM's ``relay.backend.Runtime``: ``Runtime("crt", {"system-lib": True})``
    asks for a system library, as ``--system-lib`` does.
    """
    tgt = Target(target) if target is not None else (Target.current() or Target("c"))
    start = time.perf_counter()
    mod = _as_module(inputs, args, name)
    tgt = _with_system_lib(tgt, mod)
    if runtime is not None and runtime.attrs.get("system-lib") and not tgt.system_lib:
        tgt = Target(f"{tgt} --system-lib")
    tgt.check_buildable()
    if not tgt.is_host:
        return build_source_module(mod, tgt, name, cc, options, start)
    if _uses_llvmlite(tgt, cc, options):
        from .llvm_build import build_with_llvm

        return build_with_llvm(mod, tgt, cache_dir, start)  # lowers as it goes
    return build_with_c(mod, tgt, name, cc, options, cache_dir, start)


def _with_system_lib(tgt: Target, mod: IRModule) -> Target:
    """``tgt``, with ``--system-lib`` when ``mod`` has the attribute ``system_lib_prefix`` (TVM's
    way to ask for a system library); pytvm's system libraries register names unprefixed.
    """
    prefix = mod.attrs.get("system_lib_prefix")
    if prefix is None:
        return tgt
    if prefix != "":
        raise TVMValueError(
            f"build: system_lib_prefix {prefix!r}: pytvm's system libraries register their "
            "functions under their own names; use system_lib_prefix='' (or target "
            "'... --system-lib')"
        )
    return tgt if tgt.system_lib else Target(f"{tgt} --system-lib")


def _uses_llvmlite(tgt: Target, cc: str | None, options: Sequence[str]) -> bool:
    """Whether ``tgt`` builds through llvmlite (an explicit ``-backend=llvmlite`` must)."""
    explicit = tgt.attrs.get("backend") == "llvmlite"
    if explicit and (cc is not None or options):
        raise TVMValueError(
            f"build: cc= and options= configure the C compiler, but target '{tgt}' compiles "
            "with llvmlite; drop them or use -backend=c"
        )
    if tgt.backend != "llvmlite":
        return False
    if explicit:
        if importlib.util.find_spec("llvmlite") is None:
            raise TVMValueError(
                f"build: target '{tgt}' needs the llvmlite package (pip install llvmlite)"
            )
        return True
    return cc is None and not options and importlib.util.find_spec("llvmlite") is not None


def compile(
    mod: Any, target: str | Target | None = None, **kwargs: Any
) -> CompiledModule | LLVMModule | SourceModule:
    """TVM 0.27's spelling of :func:`build` (``pytvm.compile(prim_func, target="llvm")``)."""
    return build(mod, target=target, **kwargs)
