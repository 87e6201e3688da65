"""TVM's storage-token planner (``GraphPlanMemory``): whole buffers reused from a free list.

Walking the operators in execution order, each output asks for a token: the free list of its
device type is searched for the smallest token at least as large within ``match_range`` times
the request, else the largest smaller one (within the range, enlarged to fit), else a new token
is made. A token returns to the free list after the last read of the entry it holds. Each
token becomes one storage id, as large as the largest entry it held.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence

from .lifetimes import PlannedEntry

__all__ = ["MATCH_RANGE", "plan_storage_tokens"]

MATCH_RANGE = 16


def plan_storage_tokens(
    buffers: Sequence[PlannedEntry], num_steps: int, match_range: int = MATCH_RANGE
) -> tuple[list[int], dict[int, int]]:
    """Storage id per entry (indexed by ``eid``) and bytes per storage id."""
    storage = [-1] * (max((b.eid for b in buffers), default=-1) + 1)
    size: dict[int, int] = {}
    device_of: dict[int, int] = {}
    free: dict[int, list[tuple[int, int]]] = defaultdict(list)  # device -> sorted (bytes, sid)
    starts: dict[int, list[PlannedEntry]] = defaultdict(list)
    ends: dict[int, list[PlannedEntry]] = defaultdict(list)
    for b in buffers:
        if b.pinned:
            sid = len(size)
            storage[b.eid], size[sid], device_of[sid] = sid, b.nbytes, b.device
        else:
            starts[b.start].append(b)
            ends[b.end].append(b)
    for step in range(-1, num_steps + 1):
        for b in starts.get(step, ()):
            taken = _take(free[b.device], b.nbytes, match_range)
            if taken is None:
                sid = len(size)
                size[sid], device_of[sid] = 0, b.device
            else:
                sid = taken
            size[sid] = max(size[sid], b.nbytes)
            storage[b.eid] = sid
        for b in ends.get(step, ()):
            sid = storage[b.eid]
            bisect.insort(free[b.device], (size[sid], sid))
    return storage, size


def _take(free: list[tuple[int, int]], nbytes: int, match_range: int) -> int | None:
    """Remove and return the best token of ``free`` for ``nbytes`` (None: make a new one)."""
    if not free:
        return None
    lo = bisect.bisect_left(free, (nbytes, -1))
    if lo < len(free) and free[lo][0] <= nbytes * match_range:
        return free.pop(lo)[1]  # the smallest at least as large
    if lo > 0 and free[lo - 1][0] * match_range >= nbytes:
        return free.pop(lo - 1)[1]  # the largest smaller one, enlarged
    return None
