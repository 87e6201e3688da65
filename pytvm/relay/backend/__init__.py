"""TVM's ``relay.backend``: executor and runtime configurations, and the executor factories."""

from __future__ import annotations

from . import executor_factory
from .executor import Executor
from .runtime import Runtime

__all__ = ["Executor", "Runtime", "executor_factory"]
