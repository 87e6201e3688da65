"""The strategy table's rows as AutoTVM templates: one task ``<row>.x86`` per row.

A row's compute records its workload on the anchor operation (``attrs["workload"]``):
``(template, data, weight, op, attributes, weight_constant)`` with the tensors as
``("TENSOR", shape, dtype)`` and the graph operator's attributes as sorted ``(name, value)``
pairs. Its schedule asks the current dispatch context for the configuration of that workload
(:func:`config`) and reads its knobs from it: each knob is declared where the schedule
decides it (``cfg.define_split`` / ``define_knob``), and on a fallback configuration the
schedule's own choice is set, so an untuned build is the same as before the knobs existed.

:func:`register_rows` puts every row in AutoTVM's template table, so a task made from a
recorded workload (``autotvm.task.create``) builds the same kernel standalone.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ...autotvm.env import GLOBAL_SCOPE
from ...autotvm.task.dispatcher import DispatchContext, FallbackContext
from ...autotvm.task.space import FallbackConfigEntity, OtherOptionEntity
from ...autotvm.task.task import TASK_TABLE
from ...autotvm.task.topi_integration import get_workload
from ...ffi.errors import TVMValueError
from ...target import Target
from ...te.tensor import Tensor
from ...tir.expr import FloatImm, IntImm, StringImm

__all__ = [
    "SUFFIX",
    "attrs_key",
    "config",
    "knob",
    "register_rows",
    "template_name",
    "with_workload",
    "workload_of",
]

#: The target family of the rows' templates (TVM's ``conv2d_NCHWc.x86`` naming).
SUFFIX = ".x86"


def template_name(row_name: str) -> str:
    """The AutoTVM task name of the strategy row ``row_name``."""
    return f"{row_name}{SUFFIX}"


def _value(v: Any) -> Any:
    if isinstance(v, tuple | list):
        return tuple(_value(x) for x in v)
    if v is None or isinstance(v, bool | int | float | str):
        return v
    if isinstance(v, IntImm | FloatImm | StringImm):
        return v.value
    return str(v)


def attrs_key(attrs: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Operator attributes as sorted, hashable ``(name, value)`` pairs (values that are not
    numbers, strings or sequences of them as their string).
    """
    return tuple(sorted((str(k), _value(v)) for k, v in attrs.items()))


def _tensor(t: Any) -> tuple[Any, ...]:
    shape = tuple(d.value if isinstance(d, IntImm) else d for d in t.shape)
    return ("TENSOR", shape, str(t.dtype))


def workload_of(template: str, data: Any, weight: Any, wl: Any) -> tuple[Any, ...]:
    """The workload of row ``template`` computing ``wl`` (an ``OpWorkload``) over ``data`` and
    ``weight`` (tensors).
    """
    return (
        template,
        _tensor(data),
        _tensor(weight),
        str(wl.op),
        attrs_key(wl.attrs),
        bool(wl.weight_constant),
    )


def with_workload(out: Tensor, workload: tuple[Any, ...]) -> Tensor:
    """``out`` with ``workload`` recorded on its operation (``attrs["workload"]``)."""
    op = out.op
    if not dataclasses.is_dataclass(op) or "attrs" not in {f.name for f in dataclasses.fields(op)}:
        raise TVMValueError(f"autotvm: cannot record a workload on {op}; expected a compute")
    new = dataclasses.replace(op, attrs={**op.attrs, "workload": workload})
    return new.output(out.value_index)


def config(outs: Tensor | Sequence[Tensor]) -> Any:
    """The configuration a schedule of ``outs`` reads its knobs from: the current dispatch
    context's for the workload recorded on ``outs``' anchor (a row's template), else a fresh
    fallback (a computation made outside the strategy table, which records no workload).

    A row's fallback is its hand-chosen schedule, so an untuned build (only the root fallback
    context) logs no "cannot find config" warning; under records (``apply_history_best``) a
    workload they lack is still reported once, as TVM does.
    """
    workload = get_workload(outs)
    if workload is None or not str(workload[0]).endswith(SUFFIX):
        return FallbackConfigEntity()
    ctx, target = DispatchContext.current, Target.current(allow_none=True)
    if not isinstance(ctx, FallbackContext):
        return ctx.query(target, workload)
    silent, GLOBAL_SCOPE.silent = GLOBAL_SCOPE.silent, True
    try:
        return ctx.query(target, workload)
    finally:
        GLOBAL_SCOPE.silent = silent


def knob(cfg: Any, name: str, candidates: Sequence[Any], default: Any) -> Any:
    """Declare knob ``name`` over ``candidates`` (``default`` added when missing) and return its
    value: ``default`` on a fallback configuration (the schedule's own choice), else the
    configuration's.
    """
    values = list(dict.fromkeys([*candidates, default]))
    cfg.define_knob(name, values)
    if cfg.is_fallback:
        cfg[name] = OtherOptionEntity(default)
    return cfg[name].val


Compute = Callable[[Tensor, Tensor, Any], Tensor]


def recording(template: str, compute: Compute) -> Compute:
    """``compute`` (a row's ``(data, weight, wl)``) recording its workload on its output."""

    def compute_with_workload(data: Tensor, weight: Tensor, wl: Any) -> Tensor:
        return with_workload(compute(data, weight, wl), workload_of(template, data, weight, wl))

    compute_with_workload.__name__ = getattr(compute, "__name__", template)
    compute_with_workload.__doc__ = compute.__doc__
    return compute_with_workload


def register_rows(rows: Sequence[Any], make_workload: Callable[..., Any]) -> None:
    """Put each row of ``rows`` in AutoTVM's template table as ``<row>.x86``: its compute takes
    the workload's arguments ``(data, weight, op, attributes, weight_constant)`` (``data`` and
    ``weight`` as tensors) and ``make_workload(op, data, weight, attrs, weight_constant)`` makes
    the row's ``OpWorkload`` of them; its schedule is the row's.
    """
    for row in rows:

        def compute(
            data: Tensor,
            weight: Tensor,
            op: str,
            attrs: tuple[tuple[str, Any], ...],
            weight_constant: bool,
            _row: Any = row,
        ) -> Tensor:
            wl = make_workload(op, data, weight, dict(attrs), weight_constant)
            out: Tensor = _row.compute(data, weight, wl)
            return out

        TASK_TABLE[template_name(row.name)] = {"compute": compute, "schedule": row.schedule}
