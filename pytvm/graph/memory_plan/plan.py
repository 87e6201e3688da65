"""``plan_memory``: place a graph's entries with a planner and report what it saved."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass

from ...ffi.errors import TVMValueError
from .arena import plan_arena
from .lifetimes import PlannedEntry, lower_bound, overlapping_pairs
from .storage_token import plan_storage_tokens

__all__ = ["PLANNERS", "DevicePlan", "MemoryPlan", "run_planner"]

PLANNERS = ("arena", "storage_token")


@dataclass(frozen=True, slots=True)
class DevicePlan:
    """Bytes on one device: as planned, with no reuse at all, and the least possible; each
    includes ``pinned_bytes`` (inputs, parameters and outputs, which are never shared).
    """

    device_type: int
    planned_bytes: int
    no_reuse_bytes: int
    lower_bound: int
    pinned_bytes: int = 0

    @property
    def ratio_to_bound(self) -> float:
        """``planned_bytes / lower_bound``."""
        return self.planned_bytes / self.lower_bound if self.lower_bound else 1.0


@dataclass(frozen=True, slots=True)
class MemoryPlan:
    """Where each entry lives (storage id, byte offset), and the per-device figures."""

    planner: str
    storage_id: tuple[int, ...]
    storage_offset: tuple[int, ...] | None
    storage_bytes: dict[int, int]
    devices: dict[int, DevicePlan]
    buffers: tuple[PlannedEntry, ...]
    #: The graph node each entry belongs to (``name`` or ``name:i`` for output ``i > 0``).
    entry_names: tuple[str, ...] = ()

    def __str__(self) -> str:
        lines = [f"memory plan ({self.planner}):"]
        for d in self.devices.values():
            lines.append(
                f"  device type {d.device_type}: planned {d.planned_bytes:,} B, no reuse "
                f"{d.no_reuse_bytes:,} B, lower bound {d.lower_bound:,} B "
                f"({d.ratio_to_bound:.3f}x the bound; {d.pinned_bytes:,} B of it inputs, "
                "parameters and outputs)"
            )
        return "\n".join(lines)


def run_planner(
    planner: str,
    buffers: Sequence[PlannedEntry],
    num_steps: int,
    entry_names: Sequence[str] = (),
) -> MemoryPlan:
    """Plan ``buffers`` with ``planner`` (``"arena"`` or ``"storage_token"``) and check it."""
    if planner == "arena":
        storage, offset, size = plan_arena(buffers)
        offsets: list[int] | None = offset
    elif planner == "storage_token":
        storage, size = plan_storage_tokens(buffers, num_steps)
        offsets = None
    else:
        raise TVMValueError(f"unknown memory planner {planner!r}; choose one of {PLANNERS}")
    bad = overlapping_pairs(buffers, storage, offsets or [0] * len(storage), size)
    if bad:  # a planner bug would corrupt results silently: refuse the plan instead
        raise TVMValueError(f"memory planner {planner!r} overlapped live entries {bad[:5]}")
    device_of = {storage[b.eid]: b.device for b in buffers}
    planned: dict[int, int] = defaultdict(int)
    for sid, nbytes in size.items():
        planned[device_of[sid]] += nbytes
    no_reuse: dict[int, int] = defaultdict(int)
    pinned: dict[int, int] = defaultdict(int)
    for b in buffers:
        no_reuse[b.device] += b.nbytes
        if b.pinned:
            pinned[b.device] += b.nbytes
    bound = lower_bound(buffers)
    devices = {
        d: DevicePlan(d, planned[d], no_reuse[d], bound.get(d, 0), pinned[d])
        for d in sorted(no_reuse)
    }
    return MemoryPlan(
        planner,
        tuple(storage),
        None if offsets is None else tuple(offsets),
        dict(size),
        devices,
        tuple(buffers),
        tuple(entry_names),
    )
