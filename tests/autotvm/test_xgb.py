"""XGBTuner and XGBoostCostModel over a real template (TVM's tutorial matmul with three split
knobs, made by autotvm.task.create), its configurations instantiated and lowered by pytvm for
their loop features.

- the cost model, fitted on (features, a known function of the knob values), ranks unseen
  configurations with a Spearman correlation above 0.8 (every feature type and loss);
- the tuner proposes each configuration once, plans ``plan_size`` trials per fit and its model
  picks better configurations than its random first plan;
- transfer learning: records of another shape of the template train a base model that picks
  the first trials;
- end to end: tuned with real builds (pytvm.build, llvm) timed in this process.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import autotvm, te
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.task import Task
from pytvm.autotvm.tuner import XGBoostCostModel, XGBTuner
from pytvm.autotvm.tuner.metric import get_rank
from pytvm.ffi.errors import TVMValueError

pytest.importorskip("xgboost", reason="the xgboost package is not installed")

_NAME = "test_xgb_matmul"
_BEST_INNER = {"tile_y": 4, "tile_x": 16, "tile_k": 8}


@autotvm.template(_NAME)
def _matmul(n: int, m: int, k: int) -> tuple[Any, list[Any]]:
    """TVM's tutorial template: C = A @ B with tile_y, tile_x, tile_k split knobs."""
    a = te.placeholder((n, k), name="A")
    b = te.placeholder((k, m), name="B")
    r = te.reduce_axis((0, k), name="r")
    c = te.compute((n, m), lambda i, j: te.sum(a[i, r] * b[r, j], axis=r), name="C")
    s = te.create_schedule(c.op)
    cfg = autotvm.get_config()
    i, j = s[c].op.axis
    cfg.define_split("tile_y", i, num_outputs=2)
    cfg.define_split("tile_x", j, num_outputs=2)
    cfg.define_split("tile_k", r, num_outputs=2)
    yo, yi = cfg["tile_y"].apply(s, c, i)
    xo, xi = cfg["tile_x"].apply(s, c, j)
    ko, ki = cfg["tile_k"].apply(s, c, r)
    s[c].reorder(yo, xo, ko, yi, ki, xi)
    return s, [a, b, c]


def _task(n: int, m: int, k: int) -> Task:
    task = autotvm.task.create(_NAME, (n, m, k), "llvm")
    assert task.flop == 2 * n * m * k
    return task


def _cost(config: Any) -> float:
    """Synthetic seconds, a known function of the inner tile sizes (best at ``_BEST_INNER``)."""
    return 1e-3 * (
        1 + sum((math.log2(config[k].size[-1]) - math.log2(v)) ** 2 for k, v in _BEST_INNER.items())
    )


def _result(config: Any) -> MeasureResult:
    return MeasureResult((_cost(config),), 0, 0.0, time.time())


@pytest.fixture(scope="module")
def task() -> Task:
    return _task(64, 64, 64)  # 7 x 7 x 7 = 343 configurations


def _spearman(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.corrcoef(get_rank(a), get_rank(b))[0, 1])


@pytest.mark.parametrize(
    ("feature_type", "loss_type"),
    [("itervar", "reg"), ("itervar", "rank"), ("knob", "reg"), ("curve", "reg")],
)
def test_cost_model_ranks_unseen_configs(task: Task, feature_type: str, loss_type: str) -> None:
    rng = np.random.default_rng(0)
    order = rng.permutation(len(task.config_space))
    train, test = order[:150], order[150:]
    model = XGBoostCostModel(task, feature_type, loss_type, seed=0)
    flops = [2 * 64**3 / _cost(task.config_space.get(int(i))) for i in train]
    model.fit(train.tolist(), flops, plan_size=32)
    preds = model.predict(test)
    truth = np.array([1.0 / _cost(task.config_space.get(int(i))) for i in test])
    assert _spearman(preds, truth) > 0.8


def test_cost_model_rejects_unknown_types(task: Task) -> None:
    with pytest.raises(TVMValueError, match="feature_type 'loops'"):
        XGBoostCostModel(task, "loops")
    with pytest.raises(TVMValueError, match="loss_type 'l1'"):
        XGBoostCostModel(task, "knob", loss_type="l1")
    with pytest.raises(TVMValueError, match="not fitted"):
        XGBoostCostModel(task, "knob").predict([0])


def _drive(tuner: XGBTuner, n: int, batch: int = 8) -> list[int]:
    """Measure ``n`` proposals synthetically, as Tuner.tune would; the indices in order."""
    seen: list[int] = []
    while len(seen) < n and tuner.has_next():
        configs = tuner.next_batch(min(batch, n - len(seen)))
        seen += [c.index for c in configs]
        inputs = [MeasureInput(tuner.task.target, tuner.task, c) for c in configs]
        tuner.update(inputs, [_result(c) for c in configs])
    return seen


def _mean_cost(task: Task, indices: Sequence[int]) -> float:
    return float(np.mean([_cost(task.config_space.get(i)) for i in indices]))


def test_tuner_plans_from_its_model_after_plan_size_results(task: Task) -> None:
    tuner = XGBTuner(task, plan_size=32, seed=1)
    first = _drive(tuner, 32)
    assert tuner.train_ct == 1 and 0 < len(tuner.trials) <= 32
    assert not set(tuner.trials) & set(first)  # the plan holds unvisited configurations only
    second = _drive(tuner, 16)
    assert second == [int(i) for i in tuner.trials[:16]]  # no random share before the last 5%
    assert _mean_cost(task, second) < 0.6 * _mean_cost(task, first)
    assert len(set(first + second)) == 48


def test_tuner_proposes_every_config_once_then_stops() -> None:
    small = _task(8, 8, 4)  # 4 x 4 x 3 = 48 configurations
    tuner = XGBTuner(small, plan_size=8, feature_type="knob", seed=2)
    seen = _drive(tuner, 1000)
    assert sorted(seen) == list(range(48))
    assert not tuner.has_next() and tuner.next_batch(4) == []
    assert tuner.train_ct == 6


def _records(task: Task, n: int, seed: int) -> list[tuple[MeasureInput, MeasureResult]]:
    picks = np.random.default_rng(seed).permutation(len(task.config_space))[:n]
    configs = [task.config_space.get(int(i)) for i in picks]
    return [(MeasureInput(task.target, task, c), _result(c)) for c in configs]


def test_load_history_of_another_shape_picks_the_first_trials(task: Task) -> None:
    new = _task(32, 64, 32)  # 6 x 7 x 6 configurations
    history = _records(task, 200, seed=3)
    cold = XGBTuner(new, plan_size=16, seed=4)
    warm = XGBTuner(new, plan_size=16, seed=4)
    warm.load_history(history, min_seed_records=100)
    assert isinstance(warm.cost_model, XGBoostCostModel)
    assert warm.cost_model.base_model is not None and len(warm.trials) == 16
    cold_first, warm_first = _drive(cold, 8), _drive(warm, 8)
    assert warm_first == [int(i) for i in warm.trials[:8]] != cold_first
    assert _mean_cost(new, warm_first) < 0.6 * _mean_cost(new, cold_first)
    _drive(warm, 8)  # the tuner's own model now fits on top of the base model's margins
    assert warm.train_ct == 1 and len(warm.trials) > 0


def test_load_history_below_min_seed_records_changes_nothing(task: Task) -> None:
    tuner = XGBTuner(_task(32, 64, 32), plan_size=16, seed=5)
    tuner.load_history(_records(task, 20, seed=6), min_seed_records=100)
    assert isinstance(tuner.cost_model, XGBoostCostModel)
    assert tuner.cost_model.base_model is None and not tuner.trials


class _InProcessBuilder:
    """Builds each configuration with pytvm.build for llvm (in this process)."""

    n_parallel = 4

    def build(self, inputs: Sequence[MeasureInput]) -> list[Any]:
        out = []
        for inp in inputs:
            with inp.target:
                s, args = inp.task.instantiate(inp.config)
            out.append(pytvm.build(s, args, target=inp.target, name="matmul"))
        return out


class _InProcessRunner:
    """Times each built kernel with time_evaluator and checks it against numpy."""

    def __init__(self, shape: tuple[int, int, int]) -> None:
        n, m, k = shape
        rng = np.random.default_rng(7)
        self.a = rng.random((n, k), dtype="float32")
        self.b = rng.random((k, m), dtype="float32")
        self.c = np.zeros((n, m), dtype="float32")

    def run(self, inputs: Sequence[MeasureInput], builds: Sequence[Any]) -> list[MeasureResult]:
        out = []
        for mod in builds:
            args = [pytvm.nd.array(x) for x in (self.a, self.b, self.c)]
            mod["matmul"](*args)
            np.testing.assert_allclose(args[2].numpy(), self.a @ self.b, rtol=1e-4)
            timer = mod.time_evaluator("matmul", pytvm.cpu(), number=20, repeat=2)
            costs = tuple(timer(*args).results)
            out.append(MeasureResult(costs, 0, sum(costs), time.time()))
        return out


def test_xgb_tuner_tunes_real_builds_end_to_end() -> None:
    small = _task(32, 32, 32)
    tuner = XGBTuner(small, plan_size=8, seed=8)
    option = {"builder": _InProcessBuilder(), "runner": _InProcessRunner((32, 32, 32))}
    tuner.tune(n_trial=16, measure_option=option)
    assert tuner.train_ct == 2 and len(tuner.visited) == 16
    assert tuner.best_config is not None and tuner.best_flops > 0
    assert tuner.best_flops == pytest.approx(max(tuner.ys))
