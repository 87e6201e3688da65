"""TVM's ``topi.generic.search`` schedules: each computes its operator as written."""

from __future__ import annotations

from .default import as_written

__all__ = [
    "schedule_argwhere",
    "schedule_sparse_fill_empty_rows",
    "schedule_unique",
]

schedule_argwhere = as_written("schedule_argwhere", "topi.argwhere")
schedule_sparse_fill_empty_rows = as_written(
    "schedule_sparse_fill_empty_rows", "topi.sparse_fill_empty_rows"
)
schedule_unique = as_written("schedule_unique", "topi.unique")
