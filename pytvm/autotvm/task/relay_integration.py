"""A model's tuning tasks (TVM's ``autotvm.task.relay_integration``).

:func:`extract_from_program` runs the graph build's own pipeline for the target (graph passes
with ``AlterOpLayout`` and fusion, then the compile engine's lowering of every fused function;
no code generation) inside :class:`TaskExtractEnv`, a dispatch context that answers every
query with a fallback configuration (so the build is the untuned one) and records each
workload of a strategy row's template (``<row>.x86``) a schedule asks about. Each distinct
workload becomes one task (``autotvm.task.create``), in the order the build first asked for
it; a task whose space has one point (a row without knobs) has nothing to tune and is left out.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from ...ffi.errors import TVMTypeError, TVMValueError
from ...graph.build_module import lower_graph, main_function
from ...graph.expr import Function
from ...graph.module import IRModule
from ...ir.transform import PassContext
from ...target import Target
from ...topi.x86.tunable import SUFFIX
from .dispatcher import DispatchContext
from .space import FallbackConfigEntity
from .task import Task, create

__all__ = ["TaskExtractEnv", "extract_from_multiple_program", "extract_from_program"]

logger = logging.getLogger("autotvm")

#: Where a strategy row's workload holds the graph operator's name (``tunable.workload_of``).
_OP_FIELD = 3


def _op_names(ops: Iterable[Any] | None) -> frozenset[str] | None:
    """``ops`` (graph operator names, or objects with a ``name``: TVM's ``relay.op.get(...)``,
    ``pytvm.graph.op.get_op(...)``) as a set of names; None keeps every operator.
    """
    if ops is None:
        return None
    if isinstance(ops, str):
        ops = [ops]
    names = []
    for op in ops:
        name = op if isinstance(op, str) else getattr(op, "name", None)
        if not isinstance(name, str):
            raise TVMTypeError(
                f"extract_from_program(ops=...): {op!r} is not an operator; pass operator "
                "names such as 'nn.conv2d' or operator objects with a name"
            )
        names.append(name)
    return frozenset(names)


class TaskExtractEnv(DispatchContext):
    """The dispatch context of task extraction (TVM's name): every query is answered with a
    fallback configuration (one per target and workload, as the root context would), and each
    workload of a strategy row's template is recorded in first-seen order (of the operators in
    ``ops`` when given, by graph operator name).

    Examples
    --------
    >>> env = TaskExtractEnv(ops=["nn.conv2d"])
    >>> env.get_tasks()
    []
    """

    def __init__(self, ops: Iterable[Any] | None = None) -> None:
        super().__init__()
        self.wanted_ops = _op_names(ops)
        self.workloads: dict[tuple[Any, ...], None] = {}
        self._configs: dict[tuple[str, Any], FallbackConfigEntity] = {}

    def reset(self, ops: Iterable[Any] | None = None) -> None:
        """Forget the recorded workloads and keep those of ``ops`` from now on."""
        self.wanted_ops = _op_names(ops)
        self.workloads.clear()
        self._configs.clear()

    def _query_inside(self, target: Any, workload: Any) -> Any:
        if self._wanted(workload):
            self.workloads.setdefault(tuple(workload), None)
        key = (str(target), workload)
        cfg = self._configs.get(key)
        if cfg is None:
            cfg = self._configs[key] = FallbackConfigEntity()
        return cfg

    def _wanted(self, workload: Any) -> bool:
        if not isinstance(workload, tuple) or not workload:
            return False
        if not str(workload[0]).endswith(SUFFIX):
            return False
        return self.wanted_ops is None or (
            len(workload) > _OP_FIELD and workload[_OP_FIELD] in self.wanted_ops
        )

    def get_tasks(self) -> list[tuple[str, tuple[Any, ...]]]:
        """``(template name, arguments)`` of each recorded workload, in first-seen order."""
        return [(str(w[0]), tuple(w[1:])) for w in self.workloads]


def _as_module(mod: Any) -> IRModule:
    if isinstance(mod, Function):
        return IRModule.from_expr(mod)
    if not isinstance(mod, IRModule):
        raise TVMTypeError(
            f"extract_from_program: expected a graph IRModule or its main Function (from "
            f"pytvm.frontend.from_onnx / relay.frontend.from_onnx), got {type(mod).__name__}"
        )
    return mod


def extract_from_program(
    mod: Any,
    params: Mapping[str, Any] | None,
    target: str | Target,
    target_host: str | Target | None = None,
    ops: Iterable[Any] | None = None,
) -> list[Task]:
    """The tuning tasks of one model (``mod``: an IRModule or its main Function; ``params``:
    its weights by name, bound as the build binds them).

    Returns one :class:`Task` per distinct tunable workload the build for ``target`` asks a
    configuration for, in first-seen order; ``ops`` keeps those of these graph operators only
    (names such as ``"nn.conv2d"``, or operator objects).

    Examples
    --------
    >>> import numpy as np
    >>> from pytvm import autotvm, relay
    >>> x = relay.var("x", shape=(1, 8, 16, 16))
    >>> w = relay.var("w", shape=(16, 8, 3, 3))
    >>> y = relay.nn.conv2d(x, w, padding=(1, 1))
    >>> weights = {"w": np.ones((16, 8, 3, 3), "float32")}
    >>> tasks = autotvm.task.extract_from_program(
    ...     relay.Function([x, w], y), weights, target="llvm"
    ... )
    >>> all(t.name.endswith(".x86") and len(t.config_space) > 1 for t in tasks)
    True
    """
    return extract_from_multiple_program([mod], [params], target, target_host, ops)


#: The target kinds the strategy table's templates compile for.
_CPU_KINDS = ("llvm", "c")


def extract_from_multiple_program(
    mods: Sequence[Any],
    params: Sequence[Mapping[str, Any] | None],
    target: str | Target,
    target_host: str | Target | None = None,
    ops: Iterable[Any] | None = None,
) -> list[Task]:
    """The tuning tasks of several models (``mods[i]`` with weights ``params[i]``), each
    distinct workload once, in first-seen order (see :func:`extract_from_program`).
    """
    if len(mods) != len(params):
        raise TVMValueError(
            f"extract_from_multiple_program: {len(mods)} modules but {len(params)} parameter "
            "dicts; pass one dict (or None) per module"
        )
    tgt, _ = Target.canon_target_and_host(target, target_host)
    if tgt is None:
        raise TVMValueError("extract_from_program: target is None; pass e.g. target='llvm'")
    if tgt.kind.name not in _CPU_KINDS:
        raise TVMValueError(
            f"extract_from_program: target {str(tgt)!r} is of kind {tgt.kind.name!r}; pytvm's "
            f"tunable templates are its CPU schedules, for targets of kind {list(_CPU_KINDS)}"
        )
    env = TaskExtractEnv(ops)
    ctx = PassContext.current()
    for mod, param in zip(mods, params, strict=True):
        main = main_function(_as_module(mod), param)
        with env:
            lower_graph(main, tgt, ctx)  # graph passes and kernel lowering; no code generation
    tasks: list[Task] = []
    for name, args in env.get_tasks():
        task = create(name, args, tgt, target_host)
        if task.config_space is not None and len(task.config_space) > 1:
            tasks.append(task)
        else:
            logger.debug("task %s has one configuration; nothing to tune", name)
    return tasks
