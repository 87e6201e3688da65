"""Default CPU schedules shared by every target: injective operators and reductions."""

from __future__ import annotations

from .injective import (
    schedule_broadcast,
    schedule_elemwise,
    schedule_injective,
    schedule_injective_from_existing,
)
from .reduction import schedule_reduce

__all__ = [
    "schedule_broadcast",
    "schedule_elemwise",
    "schedule_injective",
    "schedule_injective_from_existing",
    "schedule_reduce",
]
