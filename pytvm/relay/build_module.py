"""TVM's ``relay.build_module``: ``build``, ``create_executor`` and ``bind_params_by_name``
over :mod:`pytvm.graph`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..ffi.errors import TVMValueError
from ..frontend.onnx.specialize import ValueSpecializedModule
from ..graph import Function, IRModule
from ..graph import build as _graph_build
from ..graph.aot import AOTExecutorFactoryModule, build_aot
from ..graph.transform import bind_params
from ..runtime.graph_executor import GraphExecutorFactoryModule
from ..target import Target
from .backend import Executor, Runtime
from .executor import create_executor

__all__ = ["bind_params_by_name", "build", "create_executor"]


def bind_params_by_name(func: Function, params: Mapping[str, Any]) -> Function:
    """``func`` with the parameters named in ``params`` replaced by constants of their values
    (TVM's ``relay.build_module.bind_params_by_name``).
    """
    return bind_params(func, params)


def build(
    ir_mod: Any,
    target: Any = None,
    target_host: Any = None,
    executor: Any = None,
    runtime: Any = None,
    workspace_memory_pools: Any = None,
    constant_memory_pools: Any = None,
    params: Mapping[str, Any] | None = None,
    mod_name: str = "default",
) -> GraphExecutorFactoryModule | AOTExecutorFactoryModule:
    """TVM's ``relay.build``: compile ``ir_mod`` for the graph executor (see
    :func:`pytvm.graph.build`) or, with ``executor=relay.backend.Executor("aot", {
    "interface-api": "c", "unpacked-api": True})``, to the C of an AOT executor (see
    :func:`pytvm.graph.aot.build_aot`; ``runtime=Runtime("crt")``). The graph executor's kernels
    run on the host, so ``target_host`` (or the target's ``host``) must be a CPU target too;
    ``executor`` and ``runtime`` are ``relay.backend.Executor`` / ``Runtime`` (or their names).
    The graph executor's result also unpacks as TVM's legacy triple:
    ``graph_json, lib, params = relay.build(...)``.

    A module whose shapes depend on the values of graph inputs (a
    :class:`~pytvm.frontend.onnx.specialize.ValueSpecializedModule`) builds for the values of
    those inputs in ``params``, bound as constants; without them it raises
    :class:`~pytvm.frontend.onnx.specialize.ValueInputsRequiredError` naming them.
    """
    if isinstance(ir_mod, ValueSpecializedModule):
        ir_mod, params = _specialized(ir_mod, params)
    executor = _config(Executor, executor, "graph")
    runtime = _config(Runtime, runtime, "cpp")
    if executor.name == "aot":
        if target_host is not None or workspace_memory_pools or constant_memory_pools:
            raise TVMValueError(
                "relay.build: the AOT executor takes no target_host or memory pools (its C "
                "runs where it is compiled, with one static workspace); leave them out"
            )
        if isinstance(target, dict):
            raise TVMValueError("relay.build: the AOT executor takes one target, not a dict")
        return build_aot(
            ir_mod, target, params, executor=executor, runtime=runtime, mod_name=mod_name
        )
    for name, pools in (
        ("workspace_memory_pools", workspace_memory_pools),
        ("constant_memory_pools", constant_memory_pools),
    ):
        if pools is not None:
            raise TVMValueError(
                f"relay.build: {name} belongs to the AOT executor; the graph executor plans its "
                "own memory (leave it out)"
            )
    if isinstance(target, dict):
        if len(target) != 1:
            raise TVMValueError("relay.build: heterogeneous targets by dict are not supported")
        (target,) = target.values()
    if target is not None:
        tgt = Target(target, target_host) if target_host is not None else Target(target)
        if tgt.host is not None and tgt.host.kind.name not in ("llvm", "c"):
            raise TVMValueError(
                f"relay.build: host {tgt.host} is not a CPU target; use 'llvm' or 'c'"
            )
        tgt.check_buildable()
        target = Target(tgt.text)
    return _graph_build(ir_mod, target=target, params=params, mod_name=mod_name)


def _config(kind: type[Executor] | type[Runtime], value: Any, default: str) -> Any:
    """``value`` (None, a name or a configuration) as a configuration of ``kind``."""
    if value is None:
        return kind(default)
    if isinstance(value, str):
        return kind(value)
    if not isinstance(value, kind):
        raise TVMValueError(
            f"relay.build: expected a relay.backend.{kind.__name__} (or its name), got "
            f"{type(value).__name__} {value!r}"
        )
    return value


def _specialized(
    mod: ValueSpecializedModule, params: Mapping[str, Any] | None
) -> tuple[IRModule, dict[str, Any]]:
    """``mod`` imported with its value inputs bound to their values in ``params``; the other
    ``params`` (weights, inputs to bind) stay for the build.
    """
    given = {k: v.numpy() if hasattr(v, "numpy") else v for k, v in (params or {}).items()}
    spec = mod["main"].specialize(given, "relay.build")
    names = {p.name for p in spec.func.params}
    rest = {k: v for k, v in given.items() if k in names}
    return IRModule.from_expr(spec.func), rest
