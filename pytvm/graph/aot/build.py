"""``build_aot``: a model → C of an ahead-of-time executor (TVM's ``Executor("aot")``:
``interface-api`` ``c`` or ``packed``, ``link-params``).

The graph goes through the graph executor's pipeline (:func:`~pytvm.graph.build_module.
lower_graph`: optimize, fuse, lower each primitive call by the compile engine, lay out the
entries), the arena planner places the intermediates, the kernels are written as unpacked C
functions (``<mod>_lib0.c``, :mod:`pytvm.codegen.c.unpacked`) and the run function calls them
in order with pointers into one static workspace (``<mod>_lib1.c``, :mod:`.run_function`),
declared by ``tvmgen_<mod>.h`` (:mod:`.interface`). The kernels are always called unpacked;
with ``interface-api: packed`` (TVM's default) ``<mod>_lib1.c`` also defines TVM's packed entry
point ``tvmgen_<mod>___tvm_main__`` for the C runtime (:mod:`.packed_main`), a function of the
system library with ``Runtime("crt", {"system-lib": True})``. ``link-params: False`` is refused.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from ...codegen.c.unpacked import UnpackedKernel, codegen_c_unpacked
from ...ffi.errors import TVMValueError
from ...ir.transform import PassContext
from ...runtime.source_module import SourceModule
from ...target import Target
from ...tir.function import IRModule as KernelModule
from ...tir.transform import lower_if_needed
from ..build_module import build_target, lower_graph, main_function
from ..graph_codegen import GraphLayout
from ..memory_plan import run_planner
from ..printer import astext
from .factory import AOTExecutorFactoryModule, KernelInfo, TensorInfo, c_identifier
from .interface import header_name, interface_header, run_function_name
from .packed_main import main_function_name, packed_main_source
from .run_function import KernelCall, RunFunctionSource, run_function_source
from .workspace import layout_workspace

__all__ = ["build_aot"]

_CPU = 1
_DEFAULT_ALIGNMENT = 16


def _check_executor(executor: Any, runtime: Any) -> tuple[Any, Any]:
    """The executor and runtime configurations, checked (TVM's, from ``relay.backend``)."""
    from ...relay.backend import Executor, Runtime

    if executor is None:
        executor = Executor("aot", {"interface-api": "c", "unpacked-api": True})
    if runtime is None:
        runtime = Runtime("crt", {"system-lib": True})
    if not isinstance(executor, Executor) or executor.name != "aot":
        raise TVMValueError(f"build_aot: executor must be Executor('aot', ...), got {executor!r}")
    if not isinstance(runtime, Runtime) or runtime.name != "crt":
        raise TVMValueError(
            f"build_aot: the AOT executor's C interface runs without a runtime or on the C "
            f"runtime; use Runtime('crt'), got {runtime!r}"
        )
    api = executor.get("interface-api") or "packed"
    unpacked = executor.get("unpacked-api")
    if api not in ("c", "packed"):
        raise TVMValueError(
            f"build_aot: Executor('aot') option interface-api={api!r} is not one of 'c' (the "
            "structs of tvmgen_<mod>.h) or 'packed' (TVM's default: also a packed function)"
        )
    if api == "c" and not unpacked:
        raise TVMValueError(
            f"build_aot: interface-api='c' needs unpacked-api=True (got {unpacked!r}), as in "
            "TVM: use Executor('aot', {'interface-api': 'c', 'unpacked-api': True})"
        )
    if not executor.get("link-params", True):
        raise TVMValueError(
            "build_aot: Executor('aot', {'link-params': False}) is not supported: pytvm's AOT "
            "executor links the weights into the C as const arrays (flash on a "
            "microcontroller) and has no way to set them at run time; leave link-params at "
            "its default (True)"
        )
    for option in ("workspace-byte-alignment", "constant-byte-alignment"):
        value = executor.get(option, _DEFAULT_ALIGNMENT)
        if value < 1 or value & (value - 1):
            raise TVMValueError(f"build_aot: {option}={value} must be a power of two")
    return executor, runtime


def _cflags(tgt: Target) -> list[str]:
    """Flags for the C: the target's; on the host, its CPU's (the kernels' vector width)."""
    if not tgt.is_host:
        return list(tgt.cflags)
    mcpu = tgt.mcpu or "native"
    return [f"-march={mcpu}"]


def _check_layout(layout: GraphLayout) -> None:
    for node in layout.nodes:
        if node.op == "tvm_op" and node.func_name == "__copy":
            raise TVMValueError(
                f"build_aot: node {node.name} copies between devices; the AOT executor runs "
                "on one CPU (remove device annotations)"
            )
    if any(d != _CPU for d in layout.entry_devices):
        raise TVMValueError("build_aot: the AOT executor runs on the CPU; the graph uses others")


def build_aot(
    mod: Any,
    target: str | Target | None = None,
    params: Mapping[str, Any] | None = None,
    *,
    executor: Any = None,
    runtime: Any = None,
    mod_name: str = "default",
) -> AOTExecutorFactoryModule:
    """Compile a model to an AOT executor's C: ``pytvm.graph.build_aot(mod, "c -mcpu=cortex-m4",
    params)``.

    ``target`` is a C target (``"c"`` for this machine, ``"c -mcpu=cortex-m4"`` ...);
    ``executor`` is ``relay.backend.Executor("aot", ...)`` (default ``{"interface-api": "c",
    "unpacked-api": True}``; TVM's defaults, ``Executor("aot")``, give the packed interface as
    well: see the module; ``workspace-byte-alignment`` and ``constant-byte-alignment`` align the
    workspace and the constants) and ``runtime`` ``Runtime("crt")``. Every external C
    symbol starts with ``tvmgen_<mod_name>_``. Raises ``TVMValueError`` for other executors,
    targets or a kernel whose scratch memory has no constant size.
    """
    executor, runtime = _check_executor(executor, runtime)
    if c_identifier(mod_name) != mod_name:
        raise TVMValueError(
            f"build_aot: mod_name {mod_name!r} must be a C identifier (letters, digits, '_'), "
            f"e.g. {c_identifier(mod_name)!r}"
        )
    tgt = build_target(target if target is not None else "c")
    if tgt.kind.name != "c":
        raise TVMValueError(
            f"build_aot: the AOT executor generates C; target {tgt} must be a 'c' target "
            "('c' for this machine, 'c -mcpu=cortex-m4' for a microcontroller)"
        )
    ws_align = int(executor.get("workspace-byte-alignment", _DEFAULT_ALIGNMENT))
    const_align = int(executor.get("constant-byte-alignment", _DEFAULT_ALIGNMENT))
    lowered = lower_graph(main_function(mod, params), tgt, PassContext.current())
    layout = lowered.layout
    _check_layout(layout)
    if lowered.engine.external_modules:
        raise TVMValueError(
            "build_aot: kernels of external code generators need the graph executor"
        )
    plan = run_planner("arena", layout.buffers, layout.num_steps, layout.entry_names)
    with tgt:  # the intrinsics' lowering reads the target (lower_intrin)
        kernels = lower_if_needed(
            KernelModule({f.name: f.prim_func for f in lowered.engine.functions})
        )
    unpacked = codegen_c_unpacked(kernels, f"tvmgen_{mod_name}_", str(tgt))
    by_name = {k.name: k for k in unpacked.kernels}
    calls, steps = _calls(layout, by_name)
    workspace = layout_workspace(
        layout,
        plan,
        [
            (c.kernel.symbol, step, c.kernel.scratch_bytes)
            for c, step in zip(calls, steps, strict=True)
        ],
        ws_align,
    )
    inputs, constants = _inputs_and_constants(layout)
    outputs = [
        (
            layout.eid(entry),
            _tensor(
                layout, layout.eid(entry), "output" if len(layout.heads) == 1 else f"output{i}"
            ),
        )
        for i, entry in enumerate(layout.heads)
    ]
    source = RunFunctionSource(
        mod_name,
        inputs,
        outputs,
        constants,
        calls,
        workspace.offsets,
        dict(layout.aliases),
        workspace.scratch_offset,
        workspace.workspace_bytes,
        ws_align,
        const_align,
    )
    input_infos = [t for _, t in inputs]
    output_infos = [t for _, t in outputs]
    lib1 = run_function_source(source)
    entry_points = [run_function_name(mod_name)]
    if executor.get("interface-api") in (None, "packed"):
        lib1 += packed_main_source(
            mod_name, input_infos, output_infos, bool(runtime.get("system-lib", False))
        )
        entry_points.append(main_function_name(mod_name))
    lib = SourceModule(
        {f"{mod_name}_lib0.c": unpacked.source, f"{mod_name}_lib1.c": lib1},
        str(tgt),
        [*entry_points, *(k.symbol for k in unpacked.kernels)],
        {
            header_name(mod_name): interface_header(
                mod_name, input_infos, output_infos, workspace.workspace_bytes
            )
        },
        _cflags(tgt),
    )
    params_out = {name: values for name, values in constants.values()}
    return AOTExecutorFactoryModule(
        mod_name=mod_name,
        target=tgt,
        executor=executor,
        runtime=runtime,
        lib=lib,
        params=params_out,
        inputs=input_infos,
        outputs=output_infos,
        workspace_bytes=workspace.workspace_bytes,
        constant_bytes=sum(int(v.nbytes) for v in params_out.values()),
        memory_plan=workspace.buffers,
        kernels=[KernelInfo(c.kernel.symbol, c.kernel.scratch_bytes) for c in calls],
        ir_text=astext(lowered.fused),
    )


def _tensor(layout: GraphLayout, eid: int, name: str) -> TensorInfo:
    ty = layout.entry_types[eid]
    return TensorInfo(name, tuple(int(d) for d in ty.shape), ty.dtype, ty.nbytes)


def _calls(
    layout: GraphLayout, kernels: Mapping[str, UnpackedKernel]
) -> tuple[list[KernelCall], list[int]]:
    """The kernel calls in order and the step of each (``__nop`` views take a step, no call)."""
    calls: list[KernelCall] = []
    steps: list[int] = []
    step = 0
    for nid, node in enumerate(layout.nodes):
        if node.op != "tvm_op":
            continue
        if node.func_name != "__nop":
            outs = range(layout.node_row_ptr[nid], layout.node_row_ptr[nid + 1])
            args = (*(layout.eid(e) for e in node.inputs), *outs)
            calls.append(KernelCall(kernels[node.func_name], args, len(outs)))
            steps.append(step)
        step += 1
    return calls, steps


def _inputs_and_constants(
    layout: GraphLayout,
) -> tuple[list[tuple[int, TensorInfo]], dict[int, tuple[str, np.ndarray]]]:
    inputs: list[tuple[int, TensorInfo]] = []
    constants: dict[int, tuple[str, np.ndarray]] = {}
    c_names: set[str] = set()
    for nid, node in enumerate(layout.nodes):
        if node.op != "null":
            continue
        eid = layout.node_row_ptr[nid]
        if node.name in layout.params:
            constants[eid] = (node.name, np.asarray(layout.params[node.name]))
            continue
        info = _tensor(layout, eid, node.name)
        if info.c_name in c_names:
            raise TVMValueError(
                f"build_aot: inputs {node.name!r} and another have the same C name "
                f"{info.c_name!r}; rename one"
            )
        c_names.add(info.c_name)
        inputs.append((eid, info))
    return inputs, constants
