"""The AOT executor's one static workspace: where each intermediate and the kernels' scratch
live.

The arena planner (:mod:`pytvm.graph.memory_plan.arena`) places every intermediate (an entry
written by one kernel call and read by later ones; not an input, constant or output, which the
caller and the constants hold) at a byte offset of one arena. The workspace is that arena, then
(at the next multiple of ``alignment``) one scratch region as big as the largest scratch any
kernel needs: kernels run one at a time, so they all share it (TVM's global workspace). A
``__nop`` reshape takes no bytes of its own: it reads the memory of the entry it views.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...ffi.errors import TVMValueError
from ..graph_codegen import GraphLayout
from ..memory_plan import MemoryPlan
from .factory import PlannedBuffer

__all__ = ["WorkspaceLayout", "layout_workspace"]


@dataclass(frozen=True, slots=True)
class WorkspaceLayout:
    """Byte offsets in the workspace: of each intermediate entry (by entry id, views included)
    and of the scratch region; ``arena_bytes`` is the arena planner's figure.
    """

    offsets: dict[int, int]
    arena_bytes: int
    scratch_offset: int
    scratch_bytes: int
    workspace_bytes: int
    buffers: tuple[PlannedBuffer, ...]


def _align(n: int, alignment: int) -> int:
    return (n + alignment - 1) // alignment * alignment


def layout_workspace(
    layout: GraphLayout,
    plan: MemoryPlan,
    calls: Sequence[tuple[str, int, int]],
    alignment: int = 16,
) -> WorkspaceLayout:
    """The workspace of ``layout`` planned by the arena ``plan``; ``calls`` are the kernel
    calls ``(name, step, scratch_bytes)`` in order.
    """
    if plan.storage_offset is None:
        raise TVMValueError("the AOT workspace needs the arena planner's byte offsets")
    names = layout.entry_names
    offsets: dict[int, int] = {}
    arena: set[int] = set()
    buffers: list[PlannedBuffer] = []
    for b in plan.buffers:
        if b.pinned:
            continue
        offsets[b.eid] = plan.storage_offset[b.eid]
        arena.add(plan.storage_id[b.eid])
        buffers.append(
            PlannedBuffer(names[b.eid], offsets[b.eid], b.nbytes, b.start, b.end, "intermediate")
        )
    if len(arena) > 1:
        raise TVMValueError(
            f"the AOT executor runs on one device; the graph's intermediates are planned on "
            f"{len(arena)} (remove device copies)"
        )
    for eid, root in layout.aliases.items():
        if root in offsets:
            offsets[eid] = offsets[root]
    arena_bytes = sum(plan.storage_bytes[sid] for sid in arena)
    scratch_offset = _align(arena_bytes, alignment)
    scratch_bytes = max((s for _, _, s in calls), default=0)
    for name, step, scratch in calls:
        if scratch:
            buffers.append(
                PlannedBuffer(f"{name}:scratch", scratch_offset, scratch, step, step, "scratch")
            )
    buffers.sort(key=lambda b: (b.offset, b.first_step))
    total = scratch_offset + scratch_bytes if scratch_bytes else arena_bytes
    return WorkspaceLayout(
        offsets, arena_bytes, scratch_offset, scratch_bytes, total, tuple(buffers)
    )
