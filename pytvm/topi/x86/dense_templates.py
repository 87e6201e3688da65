"""TVM's x86 matrix-product templates (``topi.x86.dense_nopack``, ``dense_pack``,
``dense_dynamic``, ``batch_matmul``) over pytvm's kernels.

Each compute is an AutoTVM template (``@register_topi_compute``): called without a
configuration, it records its workload in the output operation and takes its configuration
from the current dispatch context. The schedules (:mod:`.dense`) read their knobs from the
configuration of that workload, so these are tunable tasks too (``autotvm.task.create``).

Two names are shared with the strategy table's rows (:mod:`.strategy`, templates
``<row>.x86``): ``dense_pack.x86`` and ``batch_matmul.x86``. Each name holds both kinds of
task: its compute in ``TASK_TABLE`` takes either TVM's arguments (``(data, weight, bias,
out_dtype)``; ``(tensor_a, tensor_b, out_shape, out_dtype, transpose_a, transpose_b)``) and
goes to the function here, or a row's workload arguments ``(data, weight, op, attributes,
weight_constant)`` (``op`` a string: what a graph build's tasks hold) and goes to the row. The
two kinds' workloads never compare equal (the row's holds the operator's name as its third
element, where TVM's holds a tensor, None or a shape, and a panel product's weight already
packed), so a tuning record of one kind is never applied to the other.
"""

from __future__ import annotations

from typing import Any

from ...autotvm.task.task import TASK_TABLE
from ...autotvm.task.topi_integration import register_topi_compute
from ...te.tensor import Tensor
from .. import nn
from .dense import schedule_batch_matmul, schedule_dense, schedule_dense_pack
from .strategy import STRATEGY

#: The template names of both a strategy row and a TVM entry point here.
_SHARED = ("dense_pack.x86", "batch_matmul.x86")
#: Row-kind computes of the shared names (importing :mod:`.strategy` registered the rows).
_ROW_COMPUTE = {row.template: TASK_TABLE[row.template]["compute"] for row in STRATEGY}
_ROW_ARGS = 5

__all__ = [
    "batch_matmul",
    "dense_dynamic",
    "dense_nopack",
    "dense_pack",
    "schedule_batch_matmul",
    "schedule_dense_dynamic",
    "schedule_dense_nopack",
    "schedule_dense_pack",
]


@register_topi_compute("dense_nopack.x86")
def dense_nopack(
    cfg: Any, data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """``data @ weight.T (+ bias)`` with ``weight`` as given (``[N, K]``)."""
    return nn.dense(data, weight, bias, out_dtype)


@register_topi_compute("dense_pack.x86")
def dense_pack(
    cfg: Any, data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """``data @ weight.T (+ bias)`` with ``weight`` packed into column panels first."""
    return nn.dense_pack(data, weight, bias, out_dtype)


@register_topi_compute("dense_dynamic.x86")
def dense_dynamic(
    cfg: Any, data: Tensor, weight: Tensor, bias: Tensor | None = None, out_dtype: str | None = None
) -> Tensor:
    """``data @ weight.T (+ bias)`` for a batch that may be symbolic."""
    return nn.dense(data, weight, bias, out_dtype)


@register_topi_compute("batch_matmul.x86")
def batch_matmul(
    cfg: Any,
    tensor_a: Tensor,
    tensor_b: Tensor,
    out_shape: Any = None,
    out_dtype: str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = True,
) -> Tensor:
    """Batched ``A @ B`` (``B`` transposed by default, as TVM)."""
    return nn.batch_matmul(tensor_a, tensor_b, out_shape, out_dtype, transpose_a, transpose_b)


#: ``dense_nopack`` and ``dense_dynamic`` are ``nn.dense`` stages: the dense schedule.
schedule_dense_nopack = schedule_dense
schedule_dense_dynamic = schedule_dense


def _row_args(args: tuple[Any, ...]) -> bool:
    """Whether ``args`` are a strategy row's ``(data, weight, op, attributes, weight_constant)``."""
    return len(args) == _ROW_ARGS and isinstance(args[2], str) and isinstance(args[4], bool)


def _dense_pack_task(*args: Any) -> Tensor:
    """The compute of template ``dense_pack.x86``: the row's for a row's workload arguments,
    else :func:`dense_pack`'s (TVM's arguments).
    """
    if _row_args(args):
        out: Tensor = _ROW_COMPUTE["dense_pack.x86"](*args)
        return out
    return dense_pack(*args)  # type: ignore[no-any-return]


def _batch_matmul_task(*args: Any) -> Tensor:
    """The compute of template ``batch_matmul.x86``: the row's for a row's workload arguments,
    else :func:`batch_matmul`'s (TVM's arguments).
    """
    if _row_args(args):
        out: Tensor = _ROW_COMPUTE["batch_matmul.x86"](*args)
        return out
    return batch_matmul(*args)  # type: ignore[no-any-return]


TASK_TABLE["dense_pack.x86"] = {"compute": _dense_pack_task, "schedule": schedule_dense_pack}
TASK_TABLE["batch_matmul.x86"] = {
    "compute": _batch_matmul_task,
    "schedule": schedule_batch_matmul,
}
TASK_TABLE["dense_nopack.x86"]["schedule"] = schedule_dense_nopack
TASK_TABLE["dense_dynamic.x86"]["schedule"] = schedule_dense_dynamic
