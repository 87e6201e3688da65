"""Default CPU schedule of injective operators (elementwise, broadcast, layout transforms)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import Tensor
from .._target import vector_lanes
from ._tiling import extent, fuse_parallel, product, vectorize_inner
from ._traverse import as_outputs, create_schedule, traverse_inline

__all__ = [
    "schedule_broadcast",
    "schedule_elemwise",
    "schedule_injective",
    "schedule_injective_from_existing",
]


def _trailing_axes(extents: Sequence[int | None], lanes: int) -> int:
    """How many trailing axes to fuse so that whole vectors cover them: the fewest whose
    element count is a multiple of ``lanes`` (all of them when none is; 1 for symbolic ones).
    """
    count = 1
    for k in range(1, len(extents) + 1):
        e = extents[-k]
        if e is None:
            return max(1, k - 1)
        count *= e
        if count % lanes == 0:
            return k
    return len(extents)


def schedule_injective_from_existing(s: Any, out: Tensor) -> Any:
    """Schedule ``out`` in ``s``: the trailing axes fused until whole vectors cover them (only
    the last when its extent is a multiple of the target's vector lanes), split by the lanes
    and vectorized; the rest fused with the leading axes and run in parallel. When no trailing
    group divides into vectors, every axis is fused and the one partial vector at the end is
    split off by loop partitioning, so the rest stays in full vectors.
    """
    stage = s[out.op]
    axes = list(out.op.axis)
    if not axes:
        return s
    extents = [extent(a) for a in axes]
    lanes = vector_lanes(out.dtype)
    k = _trailing_axes(extents, lanes) if lanes >= 2 else 1  # noqa: PLR2004
    inner = axes[-1] if k == 1 else stage.fuse(*axes[-k:])
    rest = vectorize_inner(stage, inner, out.dtype)
    fuse_parallel(stage, [*axes[:-k], *([rest] if rest is not None else [])],
                  product(extents))  # fmt: skip
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
