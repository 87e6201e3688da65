"""``pytvm.graph.build`` and ``plan_memory``: a model's graph IR → graph JSON + params + kernels.

This is seed 004's ``relay.build``: parameters are bound, the optimization pipeline fuses the
graph, each primitive function is lowered once by the compile engine, all kernels are compiled
into one library, the entries are placed by the memory planner, and the result is a graph
executor factory (``lib["default"](dev)``, ``get_graph_json()``, ``get_params()``,
``get_lib()``, ``export_library``). Stage times and compile-engine cache hits are logged at INFO
(logger ``pytvm.graph``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..driver.build_module import build as build_kernels
from ..driver.gc_pause import gc_paused
from ..ffi.errors import TVMTypeError
from ..ir.transform import PassContext
from ..runtime.graph_executor.factory import GraphExecutorFactoryModule
from ..target import Target
from ..tir.function import IRModule as KernelModule
from .compile_engine import CompileEngine
from .expr import Call, Function
from .functor import post_order
from .graph_codegen import GraphLayout, layout_graph
from .memory_plan import MemoryPlan, run_planner
from .module import IRModule
from .progress import DELAY_S, BuildProgress
from .transform import bind_params, optimize

__all__ = ["LoweredGraph", "build", "build_target", "lower_graph", "main_function", "plan_memory"]

_LOG = logging.getLogger("pytvm.graph")


def main_function(mod: Any, params: Mapping[str, Any] | None) -> IRModule:
    """``mod`` (an IRModule or Function) as an IRModule whose ``main`` has ``params`` bound."""
    if isinstance(mod, Function):
        mod = IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TVMTypeError(
            f"graph build expects a graph IRModule or Function (from pytvm.frontend.from_onnx), "
            f"got {type(mod).__name__}"
        )
    main = mod["main"]
    if params:
        main = bind_params(main, params)
    return mod.with_function(main, "main")


def build_target(target: str | Target | None) -> Target:
    """``target`` as a Target; by default the current one, else ``llvm``."""
    return Target(target) if target is not None else (Target.current() or Target("llvm"))


def plan_memory(
    mod: Any,
    params: Mapping[str, Any] | None = None,
    planner: str = "arena",
    *,
    target: str | Target | None = None,
) -> MemoryPlan:
    """The memory plan ``build`` would make for ``mod``: per device ``planned_bytes``,
    ``no_reuse_bytes`` and ``lower_bound`` (the most bytes alive at one step of the order).

    The graph is optimized for ``target`` as ``build`` does (the same default), and kernels are
    named by the compile engine's :meth:`~pytvm.graph.compile_engine.CompileEngine.kernel_name`
    without being lowered, so ``entry_names`` are the graph JSON's node names.
    """
    tgt = build_target(target)
    with tgt:
        fused = optimize(main_function(mod, params))
        layout = layout_graph(fused["main"], CompileEngine(tgt).kernel_name)
    return run_planner(planner, layout.buffers, layout.num_steps, layout.entry_names)


@gc_paused()
def build(
    mod: Any,
    target: str | Target | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    memory_planner: str = "arena",
    mod_name: str = "default",
) -> GraphExecutorFactoryModule:
    """Compile a model: ``lib = pytvm.graph.build(mod, target="c", params=params)``.

    Returns a factory: ``GraphModule(lib["default"](dev))`` runs it; ``lib.export_library(path)``
    writes one shared object with the kernels, the graph and the parameters (the factory's
    parameters are read-only views of the built weights, and of the arrays in ``params`` the
    build did not transform: weights are not copied again). ``memory_planner``
    is ``"arena"`` (entries at offsets in one arena per device; pytvm's executor) or
    ``"storage_token"`` (TVM's planner: plain storage ids any TVM graph executor reads).
    A build that runs over a second draws a progress bar on a terminal (``PassContext`` config
    ``"graph.progress"``: ``True``/``False`` to force it).
    """
    tgt = build_target(target)
    ctx = PassContext.current()
    t0 = time.perf_counter()
    main = main_function(mod, params)
    bar = BuildProgress(
        1,
        enabled=ctx.get("graph.progress"),
        delay_s=float(ctx.get("graph.progress_delay_s", DELAY_S)),
    )
    bar.step("optimizing the graph")
    lowered = lower_graph(main, tgt, ctx, bar)
    engine, layout, t1 = lowered.engine, lowered.layout, lowered.optimized_at
    t2 = time.perf_counter()
    plan = run_planner(memory_planner, layout.buffers, layout.num_steps)
    graph = layout.to_graph(list(plan.storage_id), _offsets(plan))
    kernels = KernelModule({f.name: f.prim_func for f in engine.functions})
    bar.step(f"compiling {len(kernels)} kernels for {tgt.kind.name}", 1)
    lib = build_kernels(kernels, target=tgt)
    for external in engine.external_modules:
        lib.import_module(external)
    t3 = time.perf_counter()
    bar.finish(f"built {len(kernels)} kernels in {t3 - t0:.1f} s")
    _LOG.info(
        "graph build: optimize %.0f ms, lower %d kernels %.0f ms (compile-engine cache: %d "
        "hits, %d misses), C compile %.0f ms; %s",
        (t1 - t0) * 1e3,
        len(engine.functions),
        (t2 - t1) * 1e3,
        engine.hits,
        engine.misses,
        (t3 - t2) * 1e3,
        plan,
    )
    # the factory shares the weights (read-only views), so no second copy is made
    return GraphExecutorFactoryModule(graph.to_json(), _read_only(layout.params), lib, mod_name)


@dataclass(frozen=True, slots=True)
class LoweredGraph:
    """A model's ``main`` fused and its kernels lowered: what every executor's build starts
    from (the graph executor's here, the AOT executor's in :mod:`pytvm.graph.aot`).
    """

    fused: IRModule
    engine: CompileEngine
    layout: GraphLayout
    #: ``time.perf_counter()`` when the graph passes finished (for the stage times logged).
    optimized_at: float


def lower_graph(
    main: IRModule, tgt: Target, ctx: PassContext, bar: BuildProgress | None = None
) -> LoweredGraph:
    """Optimize and fuse ``main`` (parameters bound) for ``tgt`` under ``ctx``, lower each
    primitive call by the compile engine, and lay out the graph's nodes and entries; ``bar``
    counts the kernels as they are lowered.
    """
    with tgt:  # layout choices and schedules follow the target
        fused = optimize(main, ctx)
        optimized_at = time.perf_counter()
        engine = CompileEngine(tgt)
        calls = sum(isinstance(n, Call) for n in post_order(fused["main"].body))
        if bar is not None:
            bar.total = 2 * calls + 2
            bar.step("lowering kernels", calls)

        def kernel(call: Call, device_type: int) -> str:
            name = engine.kernel(call, device_type)
            if bar is not None:
                bar.step(f"lowering kernels: {name}", 1)
            return name

        layout = layout_graph(fused["main"], kernel)
    return LoweredGraph(fused, engine, layout, optimized_at)


def _read_only(params: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for name, value in params.items():
        view = np.asarray(value).view()
        view.flags.writeable = False
        out[name] = view
    return out


def _offsets(plan: MemoryPlan) -> list[int] | None:
    return None if plan.storage_offset is None else list(plan.storage_offset)
