"""TVM's ``relay.backend.executor_factory`` path: what ``relay.build`` returns per executor."""

from __future__ import annotations

from ...graph.aot.factory import AOTExecutorFactoryModule
from ...runtime.graph_executor.factory import GraphExecutorFactoryModule

__all__ = ["AOTExecutorFactoryModule", "GraphExecutorFactoryModule"]
