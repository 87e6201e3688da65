"""TVM's ``tvm.contrib.graph_executor``: ``GraphModule`` and ``create`` (from the runtime).

Examples
--------
>>> from pytvm.contrib import graph_executor
>>> graph_executor.GraphModule.__name__, graph_executor.create.__name__
('GraphModule', 'create')
"""

from __future__ import annotations

from ..runtime.graph_executor.graph_module import GraphModule, create

__all__ = ["GraphModule", "create"]
