"""The arena planner: every intermediate at a byte offset in one arena per device.

Buffers are placed largest first, each at the lowest offset where it overlaps no placed buffer
alive at the same time (greedy by size, as TFLite's planner); offsets are aligned. Unlike whole
storage tokens, a small buffer can use part of a large free region, so the arena usually comes
within a few percent of the lower bound (the most bytes alive at once).
"""

from __future__ import annotations

from collections.abc import Sequence

from .lifetimes import PlannedEntry

__all__ = ["ALIGNMENT", "plan_arena"]

ALIGNMENT = 64  # bytes: a cache line and an AVX-512 vector


def _align(n: int) -> int:
    return (n + ALIGNMENT - 1) // ALIGNMENT * ALIGNMENT


def plan_arena(buffers: Sequence[PlannedEntry]) -> tuple[list[int], list[int], dict[int, int]]:
    """Storage id and byte offset per entry, and bytes per storage id.

    Pinned buffers get storage ids of their own (offset 0); the others of a device share its
    arena's storage id.
    """
    count = max((b.eid for b in buffers), default=-1) + 1
    storage, offset = [-1] * count, [0] * count
    size: dict[int, int] = {}
    arena_of: dict[int, int] = {}
    for b in buffers:
        if b.pinned:
            sid = len(size)
            storage[b.eid], size[sid] = sid, b.nbytes
    placed: dict[int, list[tuple[int, int, PlannedEntry]]] = {}
    for b in sorted((b for b in buffers if not b.pinned), key=lambda b: (-b.nbytes, b.start)):
        if b.device not in arena_of:
            arena_of[b.device] = len(size)
            size[arena_of[b.device]] = 0
            placed[b.device] = []
        live = sorted((lo, hi) for lo, hi, other in placed[b.device] if other.overlaps(b))
        at = 0
        for lo, hi in live:
            if at + b.nbytes <= lo:
                break
            at = max(at, _align(hi))
        placed[b.device].append((at, at + b.nbytes, b))
        sid = arena_of[b.device]
        storage[b.eid], offset[b.eid] = sid, at
        size[sid] = max(size[sid], at + b.nbytes)
    return storage, offset, size
