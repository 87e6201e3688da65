"""The records of one measurement: its input (target, task, configuration) and its result."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

__all__ = ["MeasureErrorNo", "MeasureInput", "MeasureResult"]


class MeasureInput(NamedTuple):
    """What was measured: a configuration of a task on a target."""

    target: Any
    task: Any
    config: Any


class MeasureResult(NamedTuple):
    """Run times in seconds (or the errors), the error kind, the whole cost and when."""

    costs: Any
    error_no: int
    all_cost: float
    timestamp: float


class MeasureErrorNo(enum.IntEnum):
    """Why a measurement failed (TVM's numbering)."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8
