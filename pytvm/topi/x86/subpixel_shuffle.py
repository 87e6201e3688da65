"""CPU schedule of a pixel shuffle (``topi.nn.subpixel_shuffle_nchw``) and what follows it.

The generic injective schedule vectorizes the output's last axis, where consecutive columns
come from different phase planes: every lane is a gather through a division and a remainder.
Here each output row is walked phase by phase: the columns ``x = p * fw + rw`` split into the
phase ``rw`` (unrolled) and ``p`` (vectorized by the target's lanes), so each vector reads
consecutive elements of one phase plane and the row index is computed once per row. The
elementwise stages after the shuffle (bias, activation, a folded batch norm) are inlined into
the same loop.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from ...te.tensor import ComputeOp, Operation, Tensor
from .._shape import const_int
from .._target import vector_lanes
from ..generic._tiling import extent, fuse_parallel, product, vectorize_inner
from ..generic._traverse import as_outputs, create_schedule, traverse_inline
from ..generic.injective import schedule_injective_from_existing
from ..nn.conv2d_transpose import SUBPIXEL_SHUFFLE_TAG
from ..tag import is_broadcast

__all__ = ["schedule_subpixel_shuffle"]

_NCHW = 4


def _dims(t: Tensor) -> list[int | None]:
    return [const_int(d) for d in t.shape]


def _shuffle_of(out: Tensor) -> ComputeOp | None:
    """The shuffle stage that ``out`` computes through elementwise or broadcast stages of its
    own shape (None: there is none).
    """
    shape = _dims(out)
    stack: list[Operation] = [out.op]
    while stack:
        op = stack.pop()
        if not isinstance(op, ComputeOp):
            continue
        if op.tag == SUBPIXEL_SHUFFLE_TAG:
            return op if _dims(op.output(0)) == shape else None
        if is_broadcast(op.tag):
            stack += [t.op for t in op.input_tensors if _dims(t) == shape]
    return None


def _schedule_output(s: Any, out: Tensor, shuffle: ComputeOp) -> None:
    stage = s[out.op]
    n, f, y, x = stage.op.axis
    fw = int(shuffle.attrs["factors"][1])
    outer = [n, f, y]
    if fw == 1:
        rest = vectorize_inner(stage, x, out.dtype)
        outer += [rest] if rest is not None else []
    else:
        p, rw = stage.split(x, factor=fw)
        lanes = vector_lanes(out.dtype)
        po, pi = stage.split(p, factor=lanes)
        stage.reorder(n, f, y, po, rw, pi)
        stage.unroll(rw)
        stage.vectorize(pi)
    fuse_parallel(stage, outer, product([extent(a) for a in stage.op.axis]))


def schedule_subpixel_shuffle(outs: Tensor | Sequence[Tensor]) -> Any:
    """Schedule ``outs``, an injective group holding a pixel shuffle: its rows phase by phase.

    An output that is the shuffle or elementwise after it is computed in that loop nest; a
    shuffle that a reshape or transpose reads is computed into its own buffer that way, and
    the outputs reading it get the injective schedule.

    Examples
    --------
    >>> from pytvm import te, topi
    >>> z = te.placeholder((1, 8, 4, 4), name="z")
    >>> y = topi.nn.relu(topi.nn.subpixel_shuffle_nchw(z, (2, 2)))
    >>> s = topi.x86.subpixel_shuffle.schedule_subpixel_shuffle(y)
    """
    outputs = as_outputs(outs)
    s = create_schedule(outputs)
    direct = {id(out.op): _shuffle_of(out) if len(out.shape) == _NCHW else None for out in outputs}
    inlined = {id(op) for op in direct.values() if op is not None}
    kept: list[ComputeOp] = []

    def keep(op: ComputeOp) -> bool:
        """A shuffle read through a reshape or transpose: its own phase-by-phase loop nest."""
        if op.tag != SUBPIXEL_SHUFFLE_TAG or id(op) in inlined:
            return False
        kept.append(op)
        return True

    traverse_inline(s, outputs, keep=keep)
    for op in kept:
        _schedule_output(s, op.output(0), op)
    for out in outputs:
        shuffle = direct[id(out.op)]
        if shuffle is None:
            schedule_injective_from_existing(s, out)
        else:
            _schedule_output(s, out, shuffle)
    return s
