"""What a memory planner plans: buffers with sizes, devices and lifetimes (execution steps)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["PlannedEntry", "lower_bound", "overlapping_pairs"]


@dataclass(frozen=True, slots=True)
class PlannedEntry:
    """Entry ``eid``: ``nbytes`` on device type ``device``, written at step ``start`` and last
    read at step ``end`` (inclusive). ``pinned`` buffers (inputs, parameters, outputs) keep
    their memory for the executor's whole life and are never shared.
    """

    eid: int
    nbytes: int
    device: int
    start: int
    end: int
    pinned: bool = False

    def overlaps(self, other: PlannedEntry) -> bool:
        """Whether the two are alive at one step."""
        if self.pinned or other.pinned:
            return True
        return self.start <= other.end and other.start <= self.end


def lower_bound(buffers: Sequence[PlannedEntry]) -> dict[int, int]:
    """Per device: the most bytes alive at any one step (pinned buffers always alive)."""
    pinned: dict[int, int] = defaultdict(int)
    events: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for b in buffers:
        if b.pinned:
            pinned[b.device] += b.nbytes
        else:
            events[b.device].append((b.start, b.nbytes))
            events[b.device].append((b.end + 1, -b.nbytes))
    out: dict[int, int] = {}
    for device in set(pinned) | set(events):
        live = peak = 0
        for _, delta in sorted(events[device], key=lambda e: (e[0], e[1])):
            live += delta
            peak = max(peak, live)
        out[device] = pinned[device] + peak
    return out


def overlapping_pairs(
    buffers: Sequence[PlannedEntry],
    storage: Sequence[int],
    offset: Sequence[int],
    size: dict[int, int],
) -> list[tuple[int, int]]:
    """Pairs of entries alive together whose bytes overlap in the plan (empty: the plan is safe).

    ``storage[eid]``/``offset[eid]`` place each entry; ``size`` gives each storage's bytes.
    """
    by_storage: dict[int, list[PlannedEntry]] = defaultdict(list)
    for b in buffers:
        by_storage[storage[b.eid]].append(b)
    bad: list[tuple[int, int]] = []
    for sid, group in by_storage.items():
        for i, a in enumerate(group):
            a_lo = offset[a.eid]
            if a_lo + a.nbytes > size[sid]:
                bad.append((a.eid, a.eid))
            for b in group[i + 1 :]:
                b_lo = offset[b.eid]
                if a.overlaps(b) and a_lo < b_lo + b.nbytes and b_lo < a_lo + a.nbytes:
                    bad.append((a.eid, b.eid))
    return bad
