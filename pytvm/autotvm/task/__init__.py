"""Templates, their configuration spaces and the contexts that dispatch configurations
(TVM's ``autotvm.task``).
"""

from __future__ import annotations

from . import dispatcher, space, task, topi_integration
from .dispatcher import (
    ApplyConfig,
    ApplyHistoryBest,
    DispatchContext,
    FallbackContext,
    clear_fallback_cache,
    get_config,
)
from .space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from .task import Task, args_to_workload, deserialize_args, serialize_args
from .topi_integration import get_workload, register_topi_compute, register_topi_schedule

__all__ = [
    "ApplyConfig",
    "ApplyHistoryBest",
    "ConfigEntity",
    "ConfigSpace",
    "DispatchContext",
    "FallbackConfigEntity",
    "FallbackContext",
    "Task",
    "args_to_workload",
    "clear_fallback_cache",
    "deserialize_args",
    "dispatcher",
    "get_config",
    "get_workload",
    "register_topi_compute",
    "register_topi_schedule",
    "serialize_args",
    "space",
    "task",
    "topi_integration",
]
