"""Default CPU schedule of injective operators (elementwise, broadcast, layout transforms)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import Tensor
from ._tiling import extent, fuse_parallel, product, vectorize_inner
from ._traverse import as_outputs, create_schedule, traverse_inline

__all__ = [
    "schedule_broadcast",
    "schedule_elemwise",
    "schedule_injective",
    "schedule_injective_from_existing",
]


def schedule_injective_from_existing(s: Any, out: Tensor) -> Any:
    """Schedule ``out`` in ``s``: its leading axes fused and run in parallel, the last axis
    split by the target's vector lanes and vectorized.
    """
    stage = s[out.op]
    axes = list(out.op.axis)
    if not axes:
        return s
    rest = vectorize_inner(stage, axes[-1], out.dtype)
    fuse_parallel(stage, [*axes[:-1], *([rest] if rest is not None else [])],
                  product([extent(a) for a in axes]))  # fmt: skip
    return s


def schedule_injective(outs: Tensor | Sequence[Tensor]) -> Any:
    """A schedule of the injective computation ``outs``: every injective stage that is not an
    output is inlined; each output gets :func:`schedule_injective_from_existing`.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> A = te.placeholder((4, 16), name="A")
    >>> B = topi.nn.relu(topi.add(A, 1.0))
    >>> s = topi.generic.schedule_injective(B)  # doctest: +SKIP
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    traverse_inline(s, outputs)
    for out in outputs:
        schedule_injective_from_existing(s, out)
    return s


#: Elementwise and broadcast operators share the injective schedule, as in TVM.
schedule_elemwise = schedule_injective
schedule_broadcast = schedule_injective
