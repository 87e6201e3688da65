"""Templates, their configuration spaces and the contexts that dispatch configurations
(TVM's ``autotvm.task``).
"""

from __future__ import annotations

import importlib
from typing import Any

from . import code_hash, dispatcher, space, task, topi_integration
from .code_hash import attach_code_hash, attach_code_hash_to_arg
from .dispatcher import (
    ApplyConfig,
    ApplyGraphBest,
    ApplyHistoryBest,
    DispatchContext,
    FallbackContext,
    clear_fallback_cache,
    get_config,
)
from .space import ConfigEntity, ConfigSpace, FallbackConfigEntity
from .task import (
    TASK_TABLE,
    Task,
    args_to_workload,
    compute_flop,
    create,
    deserialize_args,
    serialize_args,
    template,
)
from .topi_integration import get_workload, register_topi_compute, register_topi_schedule

__all__ = [
    "TASK_TABLE",
    "ApplyConfig",
    "ApplyGraphBest",
    "ApplyHistoryBest",
    "ConfigEntity",
    "ConfigSpace",
    "DispatchContext",
    "FallbackConfigEntity",
    "FallbackContext",
    "Task",
    "TaskExtractEnv",
    "args_to_workload",
    "attach_code_hash",
    "attach_code_hash_to_arg",
    "clear_fallback_cache",
    "code_hash",
    "compute_flop",
    "create",
    "deserialize_args",
    "dispatcher",
    "extract_from_multiple_program",
    "extract_from_program",
    "get_config",
    "get_workload",
    "register_topi_compute",
    "register_topi_schedule",
    "relay_integration",
    "serialize_args",
    "space",
    "task",
    "template",
    "topi_integration",
]

#: Names of the tuning layer (``relay_integration`` imports the graph compiler), loaded on use.
_TUNING_NAMES = {
    "TaskExtractEnv",
    "extract_from_program",
    "extract_from_multiple_program",
    "relay_integration",
}


def __getattr__(name: str) -> Any:
    if name in _TUNING_NAMES:
        module = importlib.import_module("pytvm.autotvm.task.relay_integration")
        return module if name == "relay_integration" else getattr(module, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
