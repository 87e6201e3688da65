"""The debug executor: times every node, as TVM's ``tvm.contrib.debugger.debug_executor``.

``GraphExecutorDebug`` is a ``GraphExecutor`` with TVM's ``run_individual(number, repeat,
min_repeat_ms)`` (per-node seconds, comma separated, one item per graph node, 0 for inputs),
``debug_get_node_output(node, index)`` (runs up to that node, returns a CPU copy of its output)
and ``run_trace()`` (one run as Chrome trace JSON, open it in ``chrome://tracing`` or Perfetto).
``GraphModuleDebug`` turns these into a table sorted by time and a trace file; both work through
RPC (the global ``tvm.graph_executor_debug.create`` builds the executor on the server).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from ...ffi import Device, PackedFunc, cpu
from ...ffi.errors import TVMTypeError, TVMValueError
from ...ffi.registry import register_func
from ..module import Module
from ..ndarray import NDArray
from .executor import GraphExecutor, devices_from_args
from .graph_json import Graph, parse_graph_json
from .graph_module import GraphModule, executor_create_args

__all__ = ["DebugReport", "GraphExecutorDebug", "GraphModuleDebug", "NodeTime", "create"]


class GraphExecutorDebug(GraphExecutor):
    """A graph executor that also times each node (TVM's ``GraphExecutorDebug``)."""

    kind: ClassVar[str] = "GraphExecutorDebug"

    def node_seconds(self, number: int, repeat: int, min_repeat_ms: int) -> list[float]:
        """Mean seconds of each graph node over ``repeat`` repeats of ``number`` in-order runs
        (``number`` grows until a repeat lasts ``min_repeat_ms``); 0 for input nodes.
        """
        if number <= 0 or repeat <= 0 or min_repeat_ms < 0:
            raise TVMValueError(
                f"run_individual: needs number > 0, repeat > 0, min_repeat_ms >= 0; got "
                f"{number}, {repeat}, {min_repeat_ms}"
            )
        self.plan.run()  # warm up
        steps = self.plan.steps
        totals = [0.0] * len(steps)
        for _ in range(repeat):
            count = number
            while True:
                sums = [0.0] * len(steps)
                start = time.perf_counter()
                for _ in range(count):
                    for i, (_, seconds) in enumerate(self.plan.run_timed()):
                        sums[i] += seconds
                elapsed_ms = (time.perf_counter() - start) * 1e3
                if elapsed_ms >= min_repeat_ms:
                    break
                per_run = elapsed_ms / count
                grown = int(min_repeat_ms / per_run) + 1 if per_run > 0 else 2 * count
                count = max(grown, int(count * 1.618))
            for i in range(len(steps)):
                totals[i] += sums[i] / count / repeat
        per_node = [0.0] * len(self.graph.nodes)
        for step, seconds in zip(steps, totals):
            per_node[step.node_id] = seconds
        return per_node

    def _fn_run_individual(self, number: int = 10, repeat: int = 1, min_repeat_ms: int = 0) -> str:
        return ",".join(repr(s) for s in self.node_seconds(number, repeat, min_repeat_ms)) + ","

    def _fn_run_trace(self) -> str:
        events = []
        timed = self.plan.run_timed()
        origin = timed[0][0] if timed else 0.0
        for step, (start, seconds) in zip(self.plan.steps, timed):
            out = step.args[-1]
            events.append(
                {
                    "name": step.name,
                    "cat": step.func_name,
                    "ph": "X",
                    "ts": (start - origin) * 1e6,
                    "dur": seconds * 1e6,
                    "pid": 0,
                    "tid": 0,
                    "args": {
                        "func": step.func_name,
                        "shape": list(out.shape),
                        "device": str(out.device),
                    },
                }
            )
        return json.dumps({"traceEvents": events, "displayTimeUnit": "ns"})

    def _fn_debug_get_node_output(self, node: Any, index: int = 0) -> NDArray:
        nid = _node_index(self.graph, node)
        count = self.graph.nodes[nid].num_outputs
        if not 0 <= index < count:
            raise TVMValueError(f"debug_get_node_output: node {node!r} has {count} output(s)")
        end = sum(1 for step in self.plan.steps if step.node_id <= nid)
        self.plan.run_steps(0, end)
        return self.entries[self.graph.entry_id(nid, index)].copyto(cpu(0))


def _node_index(graph: Graph, node: Any) -> int:
    if isinstance(node, str):
        for nid, item in enumerate(graph.nodes):
            if item.name == node:
                return nid
        raise TVMValueError(f"the graph has no node named {node!r}")
    if isinstance(node, bool) or not isinstance(node, int):
        raise TVMTypeError(f"a node is named by str or int, got {node!r}")
    if not 0 <= node < len(graph.nodes):
        raise TVMValueError(f"node {node} is not in 0..{len(graph.nodes) - 1}")
    return node


def _debug_create(graph_json: str, lib: Module, *devices: Any) -> GraphExecutorDebug:
    if devices and isinstance(devices[0], PackedFunc):
        devices = devices[1:]
    return GraphExecutorDebug(
        graph_json, lib, devices_from_args(devices, "tvm.graph_executor_debug.create")
    )


register_func("tvm.graph_executor_debug.create", _debug_create, override=True)


@dataclass(frozen=True)
class NodeTime:
    """One operator node's mean time."""

    name: str
    func_name: str
    seconds: float
    shape: tuple[int, ...]
    dtype: str


@dataclass(frozen=True)
class DebugReport:
    """Per-node times of a graph, slowest first (``str()`` is the table)."""

    nodes: tuple[NodeTime, ...]

    @property
    def total_seconds(self) -> float:
        """Sum over the nodes."""
        return sum(n.seconds for n in self.nodes)

    def table(self, top: int | None = None) -> str:
        """A table: node name, function, time (us), share of the total (%), output shape."""
        rows = self.nodes[:top] if top is not None else self.nodes
        total = self.total_seconds or 1.0
        name_w = max([len("Node Name"), *(len(n.name) for n in rows)])
        func_w = max([len("Ops"), *(len(n.func_name) for n in rows)])
        lines = [
            f"{'Node Name':<{name_w}}  {'Ops':<{func_w}}  {'Time(us)':>10}  {'Time(%)':>7}  Shape",
            "-" * (name_w + func_w + 40),
        ]
        for n in rows:
            lines.append(
                f"{n.name:<{name_w}}  {n.func_name:<{func_w}}  {n.seconds * 1e6:10.3f}  "
                f"{100 * n.seconds / total:7.2f}  {n.shape} {n.dtype}"
            )
        lines.append(f"{'Total':<{name_w}}  {'':<{func_w}}  {self.total_seconds * 1e6:10.3f}")
        return "\n".join(lines)

    def __str__(self) -> str:
        return self.table()


class GraphModuleDebug(GraphModule):
    """A ``GraphModule`` over a debug executor: per-node times as a table and a Chrome trace.

    ``dump_root``, when given, receives ``profile.txt`` and ``trace.json`` after each
    :meth:`run`.
    """

    def __init__(
        self,
        module: Module,
        device: Device | Sequence[Device] | None = None,
        graph_json_str: str | None = None,
        dump_root: str | os.PathLike[str] | None = None,
    ) -> None:
        super().__init__(module)
        self.graph = parse_graph_json(graph_json_str or module["get_graph_json"]())
        self.dump_root = Path(dump_root) if dump_root is not None else None
        self.last_report: DebugReport | None = None
        del device  # TVM's argument; the executor already holds its devices

    def run_individual(
        self, number: int = 10, repeat: int = 1, min_repeat_ms: int = 0
    ) -> list[float]:
        """Mean seconds of every graph node (0 for inputs), in node order."""
        text = self.module["run_individual"](number, repeat, min_repeat_ms)
        return [float(v) for v in str(text).split(",") if v]

    def profile(self, number: int = 10, repeat: int = 1, min_repeat_ms: int = 0) -> DebugReport:
        """Time every operator node; the report sorted slowest first."""
        seconds = self.run_individual(number, repeat, min_repeat_ms)
        g = self.graph
        rows = [
            NodeTime(
                node.name,
                node.func_name,
                seconds[nid],
                g.shape[g.entry_id(nid)],
                g.dltype[g.entry_id(nid)],
            )
            for nid, node in enumerate(g.nodes)
            if node.op == "tvm_op" and node.func_name != "__nop"
        ]
        self.last_report = DebugReport(tuple(sorted(rows, key=lambda n: -n.seconds)))
        return self.last_report

    def chrome_trace(self, path: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        """One run as a Chrome trace (written to ``path`` when given)."""
        text = str(self.module["run_trace"]())
        if path is not None:
            Path(path).write_text(text)
        trace: dict[str, Any] = json.loads(text)
        return trace

    def run(self, **input_dict: Any) -> None:
        """Run the graph; with ``dump_root``, also time every node and write the table and the
        trace there.
        """
        super().run(**input_dict)
        if self.dump_root is not None:
            self.dump_root.mkdir(parents=True, exist_ok=True)
            report = self.profile(number=1)
            (self.dump_root / "profile.txt").write_text(report.table() + "\n")
            self.chrome_trace(self.dump_root / "trace.json")

    def debug_get_output(self, node: int | str, out: NDArray | None = None) -> NDArray:
        """Run the graph up to ``node`` (index or name) and return its first output."""
        arr: NDArray = self.module["debug_get_node_output"](node, 0)
        if out is not None:
            arr.copyto(out)
            return out
        return arr


def create(
    graph_json_str: str,
    libmod: Module,
    device: Device | Sequence[Device],
    dump_root: str | os.PathLike[str] | None = None,
) -> GraphModuleDebug:
    """A debug executor of ``graph_json_str`` (on the server for a remote ``libmod``)."""
    args = executor_create_args(libmod, device, "debug_executor.create")
    fcreate = libmod.global_function("tvm.graph_executor_debug.create")
    return GraphModuleDebug(
        fcreate(graph_json_str, libmod, *args), device, graph_json_str, dump_root
    )
