"""The graph tuner (TVM's ``DPTuner`` / ``PBQPTuner`` over a model's conv2d nodes, from the
kernel tuning's records) and ``ApplyGraphBest``: the nodes are the workloads the build tunes,
each gets its fastest recorded configuration (no layout transform lies between pytvm's
candidates), both solvers are exact on a chain for any transform costs, and a build under the
chosen records uses them and computes what the untuned build computes.
"""

from __future__ import annotations

import functools
import itertools
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import autotvm, relay
from pytvm.autotvm.graph_tuner import DPTuner, PBQPTuner
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.task.dispatcher import ApplyGraphBest, DispatchContext
from pytvm.contrib import graph_executor
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target

_SHAPE = (1, 3, 8, 8)


@pytest.fixture(scope="module")
def model() -> tuple[Any, dict[str, np.ndarray], list[Any]]:
    """TVM's graph-tuner test network: three convolutions and an add."""
    data = relay.var("data", shape=_SHAPE, dtype="float32")
    w0 = relay.var("w0_weight", shape=(16, 3, 3, 3))
    conv0 = relay.nn.conv2d(data, w0, channels=16, kernel_size=(3, 3), padding=(1, 1))
    w1 = relay.var("w1_weight", shape=(32, 16, 1, 1))
    conv1 = relay.nn.conv2d(conv0, w1, channels=32, kernel_size=(1, 1))
    w2 = relay.var("w2_weight", shape=(32, 32, 3, 3))
    conv2 = relay.nn.conv2d(conv1, w2, channels=32, kernel_size=(3, 3), padding=(1, 1))
    out = relay.add(conv1, conv2)
    mod, params = relay.testing.create_workload(relay.Function(relay.analysis.free_vars(out), out))
    tasks = autotvm.task.extract_from_program(
        mod["main"], target="llvm", params=params, ops=(relay.op.get("nn.conv2d"),)
    )
    assert len(tasks) == 3
    return mod, params, tasks


def _cost(task_no: int, index: int) -> float:
    """A made-up time, smallest at a different index per task."""
    return 1e-3 * (1 + abs(index - (task_no * 3) % 5))


def _records(tasks: list[Any], per_task: int = 6) -> list[tuple[MeasureInput, MeasureResult]]:
    target = Target("llvm")
    out = []
    for no, task in enumerate(tasks):
        for i in range(min(per_task, len(task.config_space))):
            inp = MeasureInput(target, task, task.config_space.get(i))
            out.append((inp, MeasureResult((_cost(no, i),), 0, 0.0, 0.0)))
    return out


def test_nodes_are_the_tuned_workloads_and_each_gets_its_fastest(
    model: tuple[Any, dict[str, np.ndarray], list[Any]], tmp_path: Path
) -> None:
    mod, _, tasks = model
    records = _records(tasks[:2])  # the last node has no records: it keeps the fallback
    for solver in (DPTuner, PBQPTuner):
        tuner = solver(
            mod["main"], {"data": _SHAPE}, records, [relay.op.get("nn.conv2d")], "llvm",
            log_file=str(tmp_path / "graph_tuner.log"),
        )  # fmt: skip
        assert [t.workload for t in tuner.nodes] == [t.workload for t in tasks]
        tuner.benchmark_layout_transform(min_exec_num=10)
        tuner.run()
        chosen = tuner.get_optimal_records()
        assert [inp.task.workload for inp, _ in chosen] == [t.workload for t in tasks[:2]]
        best = [min(range(6), key=functools.partial(_cost, no)) for no in range(2)]
        assert [inp.config.index for inp, _ in chosen] == best
        out = tmp_path / f"{solver.__name__}.log"
        tuner.write_opt_sch2record_file(str(out))
        assert len(autotvm.record.load_from_file(out)) == 2


def test_solvers_are_exact_for_any_transform_costs(
    model: tuple[Any, dict[str, np.ndarray], list[Any]], tmp_path: Path
) -> None:
    mod, _, tasks = model
    records = _records(tasks[:3], per_task=4)
    rng = np.random.default_rng(0)
    for solver in (DPTuner, PBQPTuner):
        tuner = solver(
            mod["main"], {"data": _SHAPE}, records, ["nn.conv2d"], "llvm",
            log_file=str(tmp_path / "g.log"),
        )  # fmt: skip
        costs = tuner.node_costs()
        tuner._layout_transform_costs = [rng.random((4, 4)) * 5e-3 for _ in range(2)]
        tuner.run()
        got = tuner._optimal
        assert got is not None

        def total(ch: tuple[int, ...], t: Any = tuner) -> float:
            m = t._layout_transform_costs
            return float(
                sum(costs[i][c] for i, c in enumerate(ch))
                + sum(m[i][ch[i], ch[i + 1]] for i in range(2))
            )

        brute = min(itertools.product(range(4), repeat=3), key=total)
        assert total(tuple(got)) == pytest.approx(total(brute))


def test_apply_graph_best_builds_with_the_chosen_configs(
    model: tuple[Any, dict[str, np.ndarray], list[Any]], tmp_path: Path
) -> None:
    mod, params, tasks = model
    records = _records(tasks[:2])
    tuner = DPTuner(
        mod["main"], {"data": _SHAPE}, records, ["nn.conv2d"], "llvm",
        log_file=str(tmp_path / "g.log"),
    )  # fmt: skip
    tuner.run()
    opt = tmp_path / "opt.log"
    tuner.write_opt_sch2record_file(str(opt))
    chosen = {inp.task.workload: inp.config.index for inp, _ in tuner.get_optimal_records()}
    data = np.random.default_rng(1).random(_SHAPE, dtype="float32")

    def run(lib: Any) -> np.ndarray:
        m = graph_executor.GraphModule(lib["default"](pytvm.cpu()))
        m.set_input("data", data)
        m.run()
        return m.get_output(0).numpy()

    with pytvm.transform.PassContext(opt_level=3):
        expected = run(relay.build(mod, target="llvm", params=params))
    with ApplyGraphBest(str(opt)) as ctx:
        llvm = Target("llvm")
        for task in tasks[:2]:
            assert ctx.query(llvm, task.workload).index == chosen[task.workload]
        assert ctx.query(llvm, tasks[2].workload).is_fallback
        with pytvm.transform.PassContext(opt_level=3):
            got = run(relay.build(mod, target="llvm", params=params))
    assert DispatchContext.current is not ctx
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)


def test_bad_inputs_are_refused(model: tuple[Any, dict[str, np.ndarray], list[Any]]) -> None:
    mod = model[0]
    with pytest.raises(TVMValueError, match="not parameters of the graph"):
        DPTuner(mod["main"], {"image": _SHAPE}, [], ["nn.conv2d"], "llvm", verbose=False)
    with pytest.raises(TVMValueError, match="shape"):
        DPTuner(mod["main"], {"data": (1, 3, 16, 16)}, [], ["nn.conv2d"], "llvm", verbose=False)
    tuner = DPTuner(mod["main"], {"data": _SHAPE}, [], ["nn.conv2d"], "llvm", verbose=False)
    with pytest.raises(TVMValueError, match="run"):
        tuner.get_optimal_records()
    tuner.run()
    assert tuner.get_optimal_records() == []
