"""Tasks and workloads (TVM's ``autotvm.task.task``).

A workload is the hashable form of a template call, ``(task_name, *arguments)`` with each
tensor as ``("TENSOR", shape, dtype)``; it is the key tuning records and dispatch contexts look
configurations up by. A :class:`Task` is one template call to tune: :func:`create` collects its
configuration space (``task.config_space``) and counts its floating-point operations
(``task.flop``); :meth:`Task.instantiate` builds the schedule of one configuration.

Two kinds of template live in :data:`TASK_TABLE`:

* topi templates: ``{"compute": f, "schedule": g}`` (``register_topi_compute`` /
  ``register_topi_schedule``, and the strategy table's rows ``<row>.x86``); ``f(*args)`` returns
  the output tensor(s) and ``g(outs)`` their schedule;
* user templates (:func:`template`, TVM's tutorial style): ``{"template": f}`` where
  ``f(*args)`` reads ``cfg = autotvm.get_config()`` and returns ``(s, [tensors])``.

FLOP count (:func:`compute_flop`): every compute operation reachable from the outputs counts
its output elements times the arithmetic nodes of its body; a reduction step counts the nodes of
its source plus one for the combiner (a multiply-add is 2). Loads (their index arithmetic
included), casts, constants and the condition of a ``Select`` count nothing; a ``Select`` counts
its costlier branch. Pure data movement (padding, layout changes) computes no arithmetic:
``compute_flop`` raises for it, as TVM's does, and :func:`create` counts it 0.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

import cloudpickle

from ...ffi.errors import TVMError, TVMTypeError, TVMValueError
from ...target import Target
from ...te.operation import placeholder
from ...te.schedule.schedule import Schedule, create_schedule
from ...te.tensor import ComputeOp, Operation, PlaceholderOp, Tensor
from ...tir.expr import Call, FloatImm, IntImm, Reduce, Select, StringImm, Var
from ...tir.expr_operators import BinaryOp, Cast
from .dispatcher import ApplyConfig, DispatchContext, get_config
from .space import ConfigSpace

__all__ = [
    "TASK_TABLE",
    "Task",
    "args_to_workload",
    "compute_flop",
    "create",
    "deserialize_args",
    "get_config",
    "query_config",
    "serialize_args",
    "template",
]

#: Template name -> {"compute": f, "schedule": g} (topi) or {"template": f} (user).
TASK_TABLE: dict[str, dict[str, Callable[..., Any]]] = {}


def _const_shape(t: Tensor) -> tuple[Any, ...]:
    return tuple(d.value if isinstance(d, IntImm) else d for d in t.shape)


def _encode(x: Any) -> Any:
    if isinstance(x, Tensor):
        return ("TENSOR", _const_shape(x), x.dtype)
    if isinstance(x, tuple | list):
        return tuple(_encode(a) for a in x)
    if x is None or isinstance(x, str | int | float | Var):
        return x
    if isinstance(x, IntImm | FloatImm | StringImm):
        return x.value
    raise TVMTypeError(
        f"autotvm workload: argument {x!r} of type {type(x).__name__}; expected a tensor, a "
        "number, a string, a tir.Var, None or a tuple of them"
    )


def serialize_args(args: Sequence[Any]) -> tuple[Any, ...]:
    """The arguments of a template call as a hashable tuple (tensors as ``("TENSOR", shape,
    dtype)``).

    Examples
    --------
    >>> from pytvm import te
    >>> serialize_args([te.placeholder((2, 3), name="A"), [1, 1], "float32"])
    (('TENSOR', (2, 3), 'float32'), (1, 1), 'float32')
    """
    return tuple(_encode(a) for a in args)


def _is_tensor_arg(a: Any) -> bool:
    return isinstance(a, tuple) and len(a) == 3 and a[0] == "TENSOR"  # noqa: PLR2004


def deserialize_args(args: Sequence[Any]) -> list[Any]:
    """Serialized arguments back as call arguments (a placeholder per tensor)."""
    return [placeholder(a[1], dtype=a[2]) if _is_tensor_arg(a) else a for a in args]


def args_to_workload(args: Sequence[Any], task_name: str | None = None) -> tuple[Any, ...]:
    """The workload of a call: ``(task_name, *serialize_args(args))`` (no name when None)."""
    body = serialize_args(args)
    return body if task_name is None else (task_name, *body)


def query_config(
    task_name: str, args: Sequence[Any], kwargs: dict[str, Any]
) -> tuple[tuple[Any, ...], Any]:
    """The workload of a call of template ``task_name`` and the configuration the current
    dispatch context gives it under the current target. Keyword arguments are refused: they
    would not be part of the workload.
    """
    if kwargs:
        raise TVMValueError(
            f"template {task_name}: keyword arguments {sorted(kwargs)}; pass every "
            "argument positionally (they form the workload)"
        )
    workload = args_to_workload(args, task_name)
    return workload, DispatchContext.current.query(Target.current(), workload)


_F = TypeVar("_F", bound=Callable[..., Any])


@overload
def template(task_name: str, func: None = None) -> Callable[[_F], _F]: ...
@overload
def template(task_name: str, func: _F) -> _F: ...


def template(task_name: str, func: Callable[..., Any] | None = None) -> Any:
    """Register a user template (TVM's ``@autotvm.template("name")``).

    ``func(*args)`` reads its configuration with ``autotvm.get_config()`` and returns
    ``(schedule, [tensors])``. Called directly, the decorated function asks the current dispatch
    context for the configuration of its workload (so ``apply_history_best`` applies) and runs
    ``func`` under it.

    Examples
    --------
    >>> from pytvm import te
    >>> @template("doc_add_one")
    ... def add_one(n):
    ...     cfg = get_config()
    ...     cfg.define_knob("unroll", [0, 1])
    ...     A = te.placeholder((n,), name="A")
    ...     B = te.compute((n,), lambda i: A[i] + 1, name="B")
    ...     return te.create_schedule(B.op), [A, B]
    >>> len(create("doc_add_one", (8,), "llvm").config_space)
    2
    """

    def decorate(f: Callable[..., Any]) -> Callable[..., Any]:
        if not callable(f):
            raise TVMTypeError(f"autotvm.template({task_name!r}): {f!r} is not a function")

        @functools.wraps(f)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            _, cfg = query_config(task_name, args, kwargs)
            with ApplyConfig(cfg):
                return f(*args)

        TASK_TABLE[task_name] = {"template": f}
        return wrapper

    return decorate(func) if func is not None else decorate


def _walk(outs: Sequence[Tensor]) -> list[Operation]:
    """Every operation ``outs`` depend on, producers first, each once."""
    order: list[Operation] = []
    seen: set[int] = set()
    stack: list[tuple[Operation, bool]] = [(t.op, False) for t in reversed(outs)]
    while stack:
        op, expanded = stack.pop()
        if expanded:
            order.append(op)
            continue
        if id(op) in seen:
            continue
        seen.add(id(op))
        stack.append((op, True))
        stack.extend((t.op, False) for t in reversed(op.input_tensors))
    return order


def _count(e: Any) -> int:
    """Arithmetic nodes of ``e`` (see the module for what counts)."""
    if isinstance(e, Reduce):
        raise TVMValueError("a reduction nested inside an expression cannot be counted")
    if isinstance(e, BinaryOp):
        return 1 + _count(e.a) + _count(e.b)
    if isinstance(e, Cast):
        return _count(e.value)
    if isinstance(e, Select):
        return max(_count(e.true_value), _count(e.false_value))
    if isinstance(e, Call):
        if str(getattr(e.op, "name", e.op)) == "tir.if_then_else":
            return max(_count(a) for a in e.args[1:])
        return sum(_count(a) for a in e.args)
    return 0  # loads, variables, constants


def _extent(iv: Any) -> int:
    ext = iv.dom.extent
    if not isinstance(ext, IntImm):
        raise TVMValueError(f"axis {iv.var.name} has extent {ext}; FLOPs need constant shapes")
    return int(ext.value)


def compute_flop(outs: Sequence[Tensor] | Schedule) -> int:
    """Floating-point (arithmetic) operations computing ``outs``, output tensors or a schedule
    of them (TVM's argument; see the module for what counts).

    Raises TVMError (a RuntimeError, as TVM's) when they compute no arithmetic at all (pure data
    movement): a template of such an operator sets its count with ``cfg.add_flop``.
    """
    if isinstance(outs, Schedule):
        outs = [op.output(i) for op in outs.outputs for i in range(op.num_outputs)]
    total = 0
    for op in _walk(outs):
        if not isinstance(op, ComputeOp):
            continue
        points = math.prod(_extent(iv) for iv in op.axis)
        for body in op.body[:1] if isinstance(op.body[0], Reduce) else op.body:
            if isinstance(body, Reduce):
                steps = math.prod(_extent(iv) for iv in body.axis)
                per = _count(body.source[body.value_index]) + 1
                total += points * steps * per
            else:
                total += points * _count(body)
    if total == 0:
        raise TVMError(
            "compute_flop: the outputs compute no floating-point operation (pure data "
            "movement); set the template's count with cfg.add_flop(n)"
        )
    return total


class Task:
    """A tunable task: a template's name and the arguments of one call (serialized).

    Attributes: ``config_space`` (set by :func:`create`), ``flop`` (FLOPs of one run),
    ``target`` / ``target_host``. Tasks pickle (the template travels with them, by reference
    when importable, else by value through ``cloudpickle``), so worker processes rebuild them.
    """

    def __init__(self, name: str, args: Sequence[Any]) -> None:
        self.name = name
        self.args = tuple(args)
        self.kwargs: dict[str, Any] = {}
        self.config_space: Any = None
        self.flop: float | None = None
        self.target: Target | None = None
        self.target_host: Target | None = None
        self.func: dict[str, Callable[..., Any]] | None = TASK_TABLE.get(name)

    @property
    def workload(self) -> tuple[Any, ...]:
        """``(name, *serialized args)``."""
        return (self.name, *serialize_args(self.args))

    def _template(self) -> dict[str, Callable[..., Any]]:
        func = self.func if self.func is not None else TASK_TABLE.get(self.name)
        if func is None:
            raise TVMValueError(
                f"no autotvm template named {self.name!r}: register it with "
                "@autotvm.template(name) or import the topi module defining it (known: "
                f"{sorted(TASK_TABLE)[:20]}...)"
            )
        self.func = func
        return func

    def instantiate(self, config: Any) -> tuple[Any, list[Tensor]]:
        """The schedule and tensors (inputs, then outputs) of ``config``: the template run
        under ``ApplyConfig(config)`` with the task's target entered.
        """
        func = self._template()
        if self.target is None:
            raise TVMValueError(f"task {self.name}: no target; make it with autotvm.task.create")
        config.flop = 0
        with ApplyConfig(config), self.target:
            args = deserialize_args(self.args)
            if "template" in func:
                sch, tensors = func["template"](*args)
                return sch, list(tensors)
            out = func["compute"](*args)
            outs = [out] if isinstance(out, Tensor) else list(out)
            sch = func["schedule"](outs) if "schedule" in func else create_schedule(outs)
            return sch, [*_inputs_of(outs, args), *outs]

    def __getstate__(self) -> dict[str, Any]:
        func = self.func if self.func is not None else TASK_TABLE.get(self.name)
        return {
            "name": self.name,
            "args": self.args,
            "kwargs": self.kwargs,
            "config_space": self.config_space,
            "flop": self.flop,
            "target": None if self.target is None else str(self.target),
            "target_host": None if self.target_host is None else str(self.target_host),
            "func": None if func is None else cloudpickle.dumps(func),
        }

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.name, self.args, self.kwargs = state["name"], state["args"], state["kwargs"]
        self.config_space, self.flop = state["config_space"], state["flop"]
        self.target = None if state["target"] is None else Target(state["target"])
        host = state["target_host"]
        self.target_host = None if host is None else Target(host)
        self.func = None if state["func"] is None else cloudpickle.loads(state["func"])
        if self.func is not None:
            TASK_TABLE.setdefault(self.name, self.func)

    def __repr__(self) -> str:
        return f"Task(func_name={self.name}, args={self.args}, workload={self.workload})"


def _inputs_of(outs: Sequence[Tensor], args: Sequence[Any]) -> list[Tensor]:
    """The placeholders ``outs`` read: those among ``args`` first, in order, then the rest."""
    read = [op for op in _walk(outs) if isinstance(op, PlaceholderOp)]
    ids = {id(op) for op in read}
    first = [a for a in args if isinstance(a, Tensor) and id(a.op) in ids]
    taken = {id(t.op) for t in first}
    return first + [op.output(0) for op in read if id(op) not in taken]


def _flop_or_zero(outs: Sequence[Tensor]) -> int:
    """:func:`compute_flop`, 0 for pure data movement (such a task is still tunable)."""
    try:
        return compute_flop(outs)
    except TVMError:
        return 0


def create(task_name: str, args: Sequence[Any], target: Any, target_host: Any = None) -> Task:
    """A task of template ``task_name`` called with ``args`` (tensors or their serialized form)
    for ``target``: its configuration space (the template run once under
    ``ApplyConfig(ConfigSpace())``) and its FLOP count (the space's if the template added one,
    else :func:`compute_flop` of the default configuration's outputs).

    Raises TVMValueError when no template of that name is registered.
    """
    if task_name not in TASK_TABLE:
        raise TVMValueError(
            f"autotvm.task.create: no template named {task_name!r}; register it with "
            "@autotvm.template(name), or import the topi module that defines it"
        )
    task = Task(task_name, serialize_args(args))
    task.target = target if isinstance(target, Target) else Target(str(target))
    if target_host is not None:
        task.target_host = target_host if isinstance(target_host, Target) else Target(target_host)
    space = ConfigSpace()
    _, tensors = task.instantiate(space)
    task.config_space = space
    outs = [t for t in tensors if not isinstance(t.op, PlaceholderOp)]
    task.flop = float(space.flop) if space.flop else float(_flop_or_zero(outs))
    return task
