"""TVM v0.18's ``tvm.runtime.executor``: host wrappers of executor modules (the AOT executor)."""

from __future__ import annotations

from .aot_executor import AotExecutor, AotModule, TensorSpec

__all__ = ["AotExecutor", "AotModule", "TensorSpec"]
