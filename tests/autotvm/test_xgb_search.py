"""The search parts of the model-based tuners, on a real ConfigSpace with a cost model that is
a known function of the knob indices: simulated annealing finds the model's best unvisited
points in order, the space walk stays inside the space, the diversity filter keeps a plan of
``plan_size`` distinct unvisited points, and the ranking metrics order rankings as they should.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np
import pytest

from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.task import ConfigSpace, Task
from pytvm.autotvm.tuner import CostModel, ModelBasedTuner, SimulatedAnnealingOptimizer
from pytvm.autotvm.tuner.metric import average_recall, cover_curve, recall_curve
from pytvm.autotvm.tuner.model_based_tuner import (
    knob2point,
    point2knob,
    random_walk,
    sample_ints,
    submodular_pick,
)
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target

_DIMS = [6, 5, 4]


def _task() -> Task:
    space = ConfigSpace()
    for name, n in zip("abc", _DIMS, strict=True):
        space.define_knob(name, list(range(n)))
    task = Task("search_toy.x86", (("TENSOR", (4,), "float32"),))
    task.config_space, task.target, task.flop = space, Target("llvm"), 1.0
    return task


class _Peak(CostModel):
    """Scores a point by closeness of its knobs to (4, 1, 2): a unique best at that point
    (fixed: fitting changes nothing).
    """

    def fit(self, xs: Sequence[int], ys: Sequence[float], plan_size: int) -> None:
        del xs, ys, plan_size

    def predict(self, xs: Sequence[int] | np.ndarray, output_margin: bool = False) -> np.ndarray:
        del output_margin
        knobs = np.array([point2knob(int(x), _DIMS) for x in xs])
        return np.asarray(10.0 - np.abs(knobs - np.array([4, 1, 2])).sum(axis=1))


def test_point_and_knob_round_trip_and_walks_stay_in_the_space() -> None:
    rng = np.random.default_rng(0)
    for p in range(120):
        assert knob2point(point2knob(p, _DIMS), _DIMS) == p
        q = random_walk(p, _DIMS, rng)
        assert 0 <= q < 120 and q != p
        assert sum(a != b for a, b in zip(point2knob(p, _DIMS), point2knob(q, _DIMS))) == 1
    picks = sample_ints(50, 120, rng)
    assert len(set(picks.tolist())) == 50 and picks.max() < 120


def test_annealing_returns_the_best_unvisited_points_best_first() -> None:
    task = _task()
    best = knob2point([4, 1, 2], _DIMS)
    sa = SimulatedAnnealingOptimizer(task, n_iter=200, parallel_size=16, seed=0)
    found = sa.find_maximums(_Peak(), 5, exclusive={best})
    assert best not in found and len(found) == 5
    scores = _Peak().predict(found)
    assert scores.tolist() == sorted(scores.tolist(), reverse=True)
    assert scores[0] == 9.0  # a neighbour of the excluded peak


def test_diversity_filter_keeps_plan_size_distinct_unvisited_points() -> None:
    task = _task()
    sa = SimulatedAnnealingOptimizer(task, n_iter=100, parallel_size=16, seed=1)
    tuner = ModelBasedTuner(task, _Peak(), sa, plan_size=8, diversity_filter_ratio=3, seed=1)
    first = tuner.next_batch(8)  # random: no plan yet
    inputs = [MeasureInput(task.target, task, c) for c in first]
    tuner.update(inputs, [MeasureResult((1e-3,), 0, 0.0, time.time()) for _ in first])
    assert tuner.train_ct == 1
    plan = [int(i) for i in tuner.trials]
    assert len(plan) == len(set(plan)) == 8 and not set(plan) & {c.index for c in first}
    assert [c.index for c in tuner.next_batch(8)] == plan  # the plan, in its order
    with pytest.raises(TVMValueError, match="diversity_filter_ratio"):
        ModelBasedTuner(task, _Peak(), sa, plan_size=8, diversity_filter_ratio=0.5)


def test_submodular_pick_prefers_new_knob_values() -> None:
    knobs = [[0, 0], [0, 0], [1, 1], [0, 1]]
    assert submodular_pick(np.zeros(4), knobs, 2) == [0, 2]
    assert submodular_pick(np.array([0.0, 0.0, 0.0, 5.0]), knobs, 1) == [3]


def test_recall_rewards_a_correct_ranking() -> None:
    labels = np.arange(20.0)
    assert average_recall(labels, labels, 10) > average_recall(-labels, labels, 10)
    assert recall_curve([0, 1, 2, 3]).tolist() == [0.0, 0.5, 2 / 3, 0.75]
    assert cover_curve([1, 0, 3, 2]).tolist() == [0.0, 0.5, 0.5, 1.0]
