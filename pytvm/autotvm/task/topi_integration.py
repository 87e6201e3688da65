"""Tunable topi templates (TVM's ``autotvm.task.topi_integration``).

``@register_topi_compute("dense_nopack.x86")`` wraps a compute written as ``f(cfg, *args)``
into ``f(*args)``: the wrapper asks the current dispatch context for the configuration of the
call's workload on the current target, calls ``f`` with it, and records the workload in the
output operation's ``attrs["workload"]``. ``@register_topi_schedule`` wraps ``g(cfg, outs)``
into ``g(outs)``: it finds that workload among the operations of ``outs`` and asks for the
same configuration, so compute and schedule agree.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Sequence
from typing import Any

from ...ffi.errors import TVMValueError
from ...target import Target
from ...te.tensor import Operation, Tensor
from .dispatcher import DispatchContext
from .task import TASK_TABLE, query_config

__all__ = ["get_workload", "register_topi_compute", "register_topi_schedule"]

Func = Callable[..., Any]


def _with_workload(t: Tensor, workload: tuple[Any, ...]) -> Tensor:
    op = t.op
    if not dataclasses.is_dataclass(op) or "attrs" not in {f.name for f in dataclasses.fields(op)}:
        raise TVMValueError(f"autotvm: cannot record a workload on {op}; expected a compute")
    new = dataclasses.replace(op, attrs={**op.attrs, "workload": workload})
    return new.output(t.value_index)


def register_topi_compute(task_name: str, func: Func | None = None) -> Func:
    """Register ``func(cfg, *args)`` as the compute of template ``task_name``; the result is
    called as ``func(*args)`` (see the module). Use as ``@register_topi_compute(name)``.
    """

    def decorate(compute: Func) -> Func:
        @functools.wraps(compute)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            workload, cfg = query_config(task_name, args, kwargs)
            out = compute(cfg, *args)
            if isinstance(out, Tensor):
                return _with_workload(out, workload)
            return [_with_workload(t, workload) for t in out]

        TASK_TABLE.setdefault(task_name, {})["compute"] = wrapper
        return wrapper

    return decorate(func) if func is not None else decorate


def register_topi_schedule(task_name: str, func: Func | None = None) -> Func:
    """Register ``func(cfg, outs)`` as the schedule of template ``task_name``; the result is
    called as ``func(outs)`` (see the module). Use as ``@register_topi_schedule(name)``.
    """

    def decorate(schedule: Func) -> Func:
        @functools.wraps(schedule)
        def wrapper(outs: Tensor | Sequence[Tensor], *args: Any, **kwargs: Any) -> Any:
            workload = get_workload(outs, task_name)
            if workload is None:
                raise TVMValueError(
                    f"cannot find the workload of template {task_name} in the outputs: compute "
                    "them with the template's compute (registered by register_topi_compute)"
                )
            cfg = DispatchContext.current.query(Target.current(), workload)
            return schedule(cfg, outs, *args, **kwargs)

        TASK_TABLE.setdefault(task_name, {})["schedule"] = wrapper
        return wrapper

    return decorate(func) if func is not None else decorate


def get_workload(outs: Tensor | Sequence[Tensor], task_name: str | None = None) -> Any:
    """The workload recorded in the operations of ``outs`` (of ``task_name`` when given;
    producers first), or None.
    """
    seen: set[int] = set()

    def visit(ops: Sequence[Operation]) -> Any:
        for op in ops:
            if id(op) in seen:
                continue
            seen.add(id(op))
            found = visit([t.op for t in op.input_tensors])
            if found is not None:
                return found
            workload = getattr(op, "attrs", {}).get("workload")
            if workload is not None and (task_name is None or workload[0] == task_name):
                return workload
        return None

    tensors = [outs] if isinstance(outs, Tensor) else list(outs)
    return visit([t.op for t in tensors])
