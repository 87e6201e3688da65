"""Tasks and workloads (TVM's ``autotvm.task.task``): a workload is the hashable form of a
template call, ``(task_name, *arguments)`` with each tensor as ``("TENSOR", shape, dtype)``;
it is the key tuning records and dispatch contexts look configurations up by.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ...ffi.errors import TVMTypeError
from ...target import Target
from ...te.operation import placeholder
from ...te.tensor import Tensor
from ...tir.expr import FloatImm, IntImm, StringImm, Var

__all__ = [
    "TASK_TABLE",
    "Task",
    "args_to_workload",
    "deserialize_args",
    "serialize_args",
]

#: Template name -> {"compute": f, "schedule": f} of the registered templates.
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


def deserialize_args(args: Sequence[Any]) -> list[Any]:
    """Serialized arguments back as call arguments (a placeholder per tensor)."""
    return [
        placeholder(a[1], dtype=a[2]) if isinstance(a, tuple) and a and a[0] == "TENSOR" else a
        for a in args
    ]


def args_to_workload(args: Sequence[Any], task_name: str | None = None) -> tuple[Any, ...]:
    """The workload of a call: ``(task_name, *serialize_args(args))`` (no name when None)."""
    body = serialize_args(args)
    return body if task_name is None else (task_name, *body)


class Task:
    """A tunable task: a template's name and the arguments of one call."""

    def __init__(self, name: str, args: Sequence[Any]) -> None:
        self.name = name
        self.args = tuple(args)
        self.kwargs: dict[str, Any] = {}
        self.config_space: Any = None
        self.flop: float | None = None
        self.target: Target | None = None
        self.target_host: Target | None = None

    @property
    def workload(self) -> tuple[Any, ...]:
        """``(name, *serialized args)``."""
        return (self.name, *serialize_args(self.args))

    def __repr__(self) -> str:
        return f"Task(func_name={self.name}, args={self.args}, workload={self.workload})"
