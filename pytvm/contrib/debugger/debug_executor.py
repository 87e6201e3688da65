"""TVM's ``tvm.contrib.debugger.debug_executor``: ``GraphModuleDebug`` and ``create``.

Examples
--------
>>> from pytvm.contrib.debugger import debug_executor
>>> debug_executor.GraphModuleDebug.__name__
'GraphModuleDebug'
"""

from __future__ import annotations

from ...runtime.graph_executor.debug_executor import GraphModuleDebug, create

__all__ = ["GraphModuleDebug", "create"]
