"""What operator definitions and schedules ask of the current target: vector lanes, cores,
registers.

The values come from ``pytvm.target.Target.current()`` when a target is active, else from the
host target; without the target layer they fall back to 8 lanes and the process's CPU count.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["num_cores", "num_registers", "vector_lanes"]

_DEFAULT_LANES = 8


def _current() -> Any:
    """The active target, else the host's (``Target("c")``), else None without a target layer."""
    try:
        from ..target import Target
    except ImportError:  # pragma: no cover - the target layer ships with the compiler
        return None
    current = Target.current(allow_none=True)
    return current if current is not None else Target("c")


def vector_lanes(dtype: str) -> int:
    """SIMD lanes of ``dtype`` on the current target (8 without one)."""
    tgt = _current()
    fn = getattr(tgt, "vector_lanes", None)
    if callable(fn):
        lanes = int(fn(dtype))
        if lanes > 0:
            return lanes
    return _DEFAULT_LANES


def num_registers() -> int | None:
    """Registers a register tile may use on the current target (``Target.num_registers``: 8
    on a one-lane CPU such as a Cortex-M), None without a target layer.
    """
    regs = getattr(_current(), "num_registers", None)
    return regs if isinstance(regs, int) and regs > 0 else None


def num_cores() -> int:
    """Cores the current target runs parallel loops on (the process's CPUs without one)."""
    tgt = _current()
    cores = getattr(tgt, "num_cores", None)
    if isinstance(cores, int) and cores > 0:
        return cores
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
