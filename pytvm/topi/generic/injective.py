"""Default CPU schedule of injective operators (elementwise, broadcast, layout transforms)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.schedule.stage import ATTACH_TYPES
from ...te.tensor import ComputeOp, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ._lane_reduction import _loads, _uses
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


def _inlined_ids(s: Any, op: ComputeOp) -> set[int]:
    """Ids of the operations inlined into ``op`` (directly or through other inlined ones)."""
    found: set[int] = set()
    todo = [t.op for t in op.input_tensors]
    while todo:
        producer = todo.pop()
        if id(producer) in found or not isinstance(producer, ComputeOp):
            continue
        if s[producer].attach_type != ATTACH_TYPES["inline"]:
            continue
        found.add(id(producer))
        todo.extend(t.op for t in producer.input_tensors)
    return found


def _reads_fuse(s: Any, op: ComputeOp, k: int) -> bool:
    """Whether fusing the last ``k`` axes of ``op`` keeps every load a row or a constant: each
    load (through inlined stages) reads those axes as its own last ``k`` indices over the same
    extents, or reads none of them. A load that reads some (a per-channel scale over fused
    planes, a padded or transposed input) would need a division per element.
    """
    axes = list(op.axis)
    fused = [iv.var for iv in axes[-k:]]
    names = set(fused)
    extents = [extent(iv) for iv in axes[-k:]]
    for body in op.body:
        for load in _loads(body, _inlined_ids(s, op)):
            if not any(_uses(i, names) for i in load.indices):
                continue
            idx = list(load.indices)
            shape = [const_int(d) for d in load.producer.shape]
            if len(idx) < k or shape[-k:] != extents:
                return False
            if any(a is not b for a, b in zip(idx[-k:], fused, strict=True)):
                return False
            if any(_uses(i, names) for i in idx[:-k]):
                return False
    return True


def schedule_injective_from_existing(s: Any, out: Tensor) -> Any:
    """Schedule ``out`` in ``s``: the trailing axes fused until whole vectors cover them (as
    far as every input reads the fused axes as a row, or not at all), split by the target's
    vector lanes and vectorized; the rest fused with the leading axes and run in parallel.
    A row that leaves a partial vector keeps its vector loop out of the parallel loop, so
    loop partitioning splits the partial vector off and the rest stays in full vectors.
    """
    stage = s[out.op]
    axes = list(out.op.axis)
    if not axes:
        return s
    extents = [extent(a) for a in axes]
    lanes = vector_lanes(out.dtype)
    k = _trailing_axes(extents, lanes) if lanes >= 2 else 1  # noqa: PLR2004
    while k > 1 and not (isinstance(out.op, ComputeOp) and _reads_fuse(s, out.op, k)):
        k -= 1
    inner = axes[-1] if k == 1 else stage.fuse(*axes[-k:])
    row = product(extents[-k:])
    rest = vectorize_inner(stage, inner, out.dtype)
    tail = rest is not None and row is not None and row % lanes != 0 and len(axes) > k
    leading = [*axes[:-k], *([rest] if rest is not None and not tail else [])]
    fuse_parallel(stage, leading, product(extents))
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
