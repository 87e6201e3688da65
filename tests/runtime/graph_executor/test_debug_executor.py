"""The debug executor: every node timed, a table sorted by time, a Chrome trace of one run, and a
node's output read after a partial run.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

import pytvm
from pytvm.contrib.debugger import debug_executor
from pytvm.driver import CompiledModule
from pytvm.runtime.graph_executor import GraphExecutorFactory, GraphModuleDebug

pytestmark = pytest.mark.needs_cc

Reference = Callable[..., tuple[np.ndarray, np.ndarray]]
OPS = {"add0", "relu0", "split0", "add1", "dense0"}


@pytest.fixture
def debug_module(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray], tmp_path: Path
) -> GraphModuleDebug:
    m = debug_executor.create(graph_json, kernel_lib, pytvm.cpu(), dump_root=tmp_path / "dump")
    m.set_input(x=inputs["x"], y=inputs["y"], w=inputs["w"])
    return m


def test_profile_table_is_sorted_by_time(debug_module: GraphModuleDebug) -> None:
    report = debug_module.profile(number=20, repeat=2)
    assert {n.name for n in report.nodes} == OPS
    times = [n.seconds for n in report.nodes]
    assert times == sorted(times, reverse=True) and all(t > 0 for t in times)
    dense = next(n for n in report.nodes if n.name == "dense0")
    assert (dense.func_name, dense.shape, dense.dtype) == ("k_dense", (4, 6), "float32")
    lines = report.table().splitlines()
    assert lines[0].split() == ["Node", "Name", "Ops", "Time(us)", "Time(%)", "Shape"]
    assert [line.split()[0] for line in lines[2:-1]] == [n.name for n in report.nodes]
    shares = [float(line.split()[3]) for line in lines[2:-1]]
    assert abs(sum(shares) - 100) < 0.1 and lines[-1].startswith("Total")
    per_node = debug_module.run_individual(number=5)
    assert len(per_node) == 8 and per_node[:3] == [0.0, 0.0, 0.0]  # inputs take no time


def test_run_writes_table_and_chrome_trace(
    debug_module: GraphModuleDebug,
    inputs: dict[str, np.ndarray],
    numpy_reference: Reference,
    tmp_path: Path,
) -> None:
    debug_module.run()
    out = numpy_reference(inputs["x"], inputs["y"], inputs["w"])[0]
    np.testing.assert_allclose(debug_module.get_output(0).numpy(), out, rtol=1e-5, atol=1e-5)
    assert "dense0" in (tmp_path / "dump" / "profile.txt").read_text()
    trace = json.loads((tmp_path / "dump" / "trace.json").read_text())
    events = trace["traceEvents"]
    assert [e["name"] for e in events] == ["add0", "relu0", "split0", "add1", "dense0"]
    assert all(e["ph"] == "X" and e["dur"] >= 0 for e in events)
    ends = [e["ts"] + e["dur"] for e in events]
    assert all(ends[i] <= events[i + 1]["ts"] + 1e-3 for i in range(len(events) - 1))  # in order
    assert events[4]["args"] == {"func": "k_dense", "shape": [4, 6], "device": "cpu(0)"}


def test_debug_get_output_runs_up_to_the_node(
    debug_module: GraphModuleDebug, inputs: dict[str, np.ndarray]
) -> None:
    # relu0's buffer is later reused by dense0: the value must come from a run stopped there.
    debug_module.run()
    relu = debug_module.debug_get_output("relu0")
    np.testing.assert_allclose(relu.numpy(), np.maximum(inputs["x"] + inputs["y"], 0))
    assert debug_module.debug_get_output(3).shape == (4, 8)
    with pytest.raises(ValueError, match="the graph has no node named 'nope'"):
        debug_module.debug_get_output("nope")
    with pytest.raises(ValueError, match=r"needs number > 0, repeat > 0"):
        debug_module.run_individual(number=0)


def test_factory_debug_create_sets_params(
    kernel_lib: CompiledModule, graph_json: str, inputs: dict[str, np.ndarray]
) -> None:
    factory = GraphExecutorFactory(graph_json, {"w": inputs["w"]}, kernel_lib)
    ex = factory["debug_create"]("default", pytvm.cpu())
    assert ex.type_key == "GraphExecutorDebug"
    np.testing.assert_array_equal(ex["get_input"]("w").numpy(), inputs["w"])
