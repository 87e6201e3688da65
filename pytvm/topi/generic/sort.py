"""TVM's ``topi.generic.sort`` schedules: each computes its operator as written."""

from __future__ import annotations

from .default import as_written

__all__ = [
    "schedule_argsort",
    "schedule_sort",
    "schedule_topk",
]

schedule_sort = as_written("schedule_sort", "topi.sort")
schedule_argsort = as_written("schedule_argsort", "topi.argsort")
schedule_topk = as_written("schedule_topk", "topi.topk")
