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
from ..graph.transform import bind_params
from ..runtime.graph_executor import GraphExecutorFactoryModule
from ..target import Target
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
) -> GraphExecutorFactoryModule:
    """TVM's ``relay.build``: compile ``ir_mod`` for the graph executor (see
    :func:`pytvm.graph.build`). The kernels run on the host, so ``target_host`` (or the
    target's ``host``) must be a CPU target too; ``executor`` and ``runtime`` may only be the
    graph executor and the C++ or C runtime. The result also unpacks as TVM's legacy triple:
    ``graph_json, lib, params = relay.build(...)``.

    A module whose shapes depend on the values of graph inputs (a
    :class:`~pytvm.frontend.onnx.specialize.ValueSpecializedModule`) builds for the values of
    those inputs in ``params``, bound as constants; without them it raises
    :class:`~pytvm.frontend.onnx.specialize.ValueInputsRequiredError` naming them.
    """
    if isinstance(ir_mod, ValueSpecializedModule):
        ir_mod, params = _specialized(ir_mod, params)
    for name, value, allowed in (
        ("executor", executor, ("graph",)),
        ("runtime", runtime, ("cpp", "crt")),
    ):
        kind = getattr(value, "name", value)
        if value is not None and str(kind) not in allowed:
            raise TVMValueError(
                f"relay.build: {name}={kind!r} is not supported; use {allowed[0]!r}"
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
