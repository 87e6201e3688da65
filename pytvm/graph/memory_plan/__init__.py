"""Memory planning of graph entries: TVM's storage tokens and an offset arena."""

from __future__ import annotations

from .arena import plan_arena
from .lifetimes import PlannedEntry, lower_bound, overlapping_pairs
from .plan import PLANNERS, DevicePlan, MemoryPlan, run_planner
from .storage_token import plan_storage_tokens

__all__ = [
    "PLANNERS",
    "DevicePlan",
    "MemoryPlan",
    "PlannedEntry",
    "lower_bound",
    "overlapping_pairs",
    "plan_arena",
    "plan_storage_tokens",
    "run_planner",
]
