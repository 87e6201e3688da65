"""TVM's x86 matrix-product templates (``topi.x86.dense_nopack``, ``dense_pack``,
``dense_dynamic``, ``batch_matmul``) over pytvm's kernels.

Each compute is an AutoTVM template (``@register_topi_compute``): called without a
configuration, it records its workload in the output operation and takes its configuration
from the current dispatch context. pytvm's schedules choose tiles from the target and the
shapes (:mod:`.dense`), so they read no knob of it.
"""

from __future__ import annotations

from typing import Any

from ...autotvm.task.topi_integration import register_topi_compute
from ...te.tensor import Tensor
from .. import nn
from .dense import schedule_batch_matmul, schedule_dense, schedule_dense_pack

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
