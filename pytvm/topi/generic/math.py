"""TVM's ``topi.generic.math`` schedules: each computes its operator as written."""

from __future__ import annotations

from .default import as_written

__all__ = [
    "schedule_einsum",
]

schedule_einsum = as_written("schedule_einsum", "topi.einsum")
