"""The graph executor: runs a built graph (TVM's graph JSON, parameters, kernel library).

- :mod:`.params`: TVM's parameter-dict bytes (``save_param_dict`` / ``load_param_dict``);
- :mod:`.graph_json`: the graph JSON, parsed and checked;
- :mod:`.storage`, :mod:`.op_plan`: memory per storage id, operator calls prepared once;
- :mod:`.executor`: ``GraphExecutor``, a module of packed functions (``tvm.graph_executor.create``);
- :mod:`.debug_executor`: per-node times, a table and a Chrome trace;
- :mod:`.factory`, :mod:`.artifact`: the built graph that makes executors, and the one-file
  shared object carrying kernels, graph and parameters;
- :mod:`.graph_module`: TVM's ``GraphModule`` wrapper and ``create``, local or through RPC.
"""

from __future__ import annotations

from .artifact import EmbeddedGraph, embedded_graph_c_source, read_embedded_graph
from .debug_executor import DebugReport, GraphExecutorDebug, GraphModuleDebug, NodeTime
from .executor import GraphExecutor
from .factory import GraphExecutorFactory, GraphExecutorFactoryModule
from .graph_json import Graph, GraphNode, NodeEntry, parse_graph_json
from .graph_module import GraphModule, create
from .params import (
    load_param_dict,
    load_param_dict_from_file,
    save_param_dict,
    save_param_dict_to_file,
)

__all__ = [
    "DebugReport",
    "EmbeddedGraph",
    "Graph",
    "GraphExecutor",
    "GraphExecutorDebug",
    "GraphExecutorFactory",
    "GraphExecutorFactoryModule",
    "GraphModule",
    "GraphModuleDebug",
    "GraphNode",
    "NodeEntry",
    "NodeTime",
    "create",
    "embedded_graph_c_source",
    "load_param_dict",
    "load_param_dict_from_file",
    "parse_graph_json",
    "read_embedded_graph",
    "save_param_dict",
    "save_param_dict_to_file",
]
