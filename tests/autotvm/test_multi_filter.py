"""A space's ``multi_filter`` (TVM v0.18's sparse ``ConfigSpace``) and the tuners over it: the
index range stays the knobs' product while ``len`` counts the points kept; grid, random, GA and
droplet tuners propose only kept points, each once; the droplet tuner descends to the optimum,
resumes from a log, and its t-test agrees with scipy's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.task import ConfigSpace, Task
from pytvm.autotvm.tuner import DropletTuner, GATuner, GridSearchTuner, RandomTuner, Tuner
from pytvm.autotvm.tuner.droplet_tuner import ttest_pvalue
from pytvm.ffi.errors import TVMIndexError, TVMValueError
from pytvm.target import Target
from pytvm.testing.autotvm import (
    DummyRunner,
    ScoringRunner,
    get_sample_records,
    get_sample_task,
    scoring_cost,
    scoring_option,
)

_BEST = {"a": 5, "b": 2, "c": 6}


def _keep(e: Any) -> bool:
    """Drop the points where a + b is odd and c is 0 (about a quarter)."""
    return not ((e["a"].val + e["b"].val) % 2 and e["c"].val == 0)


def _task(filtered: bool = True) -> Task:
    space = ConfigSpace()
    space.define_knob("a", list(range(8)))
    space.define_knob("b", list(range(5)))
    space.define_knob("c", list(range(7)))
    if filtered:
        space.multi_filter(_keep)
    task = Task("toy_multi_filter.x86", (("TENSOR", (4,), "float32"),))
    task.config_space, task.target, task.flop = space, Target("llvm"), 1e9
    return task


def _option() -> tuple[dict[str, Any], ScoringRunner]:
    return scoring_option(_BEST)


def test_multi_filter_keeps_the_index_range_and_counts_kept_points() -> None:
    space = _task().config_space
    kept = [i for i in range(space.range_length) if _keep(space._entities_of(i))]
    assert space.range_length == 280 and space.dims == [8, 5, 7]
    assert len(space) == len(kept) == 260  # 20 of the 40 (a, b) have an odd sum; c == 0
    assert [i for i in range(280) if space.is_index_valid(i)] == kept
    assert space.subrange_length(0, 280) == len(kept) and space.subrange_length(7, 7) == 0
    dropped = next(i for i in range(280) if i not in kept)
    with pytest.raises(TVMIndexError, match="multi_filter"):
        space.get(dropped)
    assert space.get_next_index(dropped - 1) == next(i for i in kept if i > dropped - 1)
    assert space.get_next_index(kept[-1]) is None
    assert space.knob2point(space.point2knob(123)) == 123
    assert set(space.sample_ints(30)) <= set(kept) and len(set(space.sample_ints(30))) == 30
    assert space.random_walk(kept[0]) in kept
    assert space.get_rand_index(to_exclude=kept[:-1]) == kept[-1]
    with pytest.raises(TVMValueError, match="no valid index"):
        space.get_rand_index(to_exclude=kept)
    with pytest.raises(TVMIndexError):
        space.subrange_length(10, 5)


def test_redefining_a_knob_refilters() -> None:
    space = ConfigSpace()
    space.define_knob("a", [0, 1, 2, 3])
    space.define_knob("b", [0, 1])
    space.multi_filter(lambda e: e["a"].val >= e["b"].val * 3)
    assert len(space) == 5
    space.define_knob("b", [0, 1, 2])
    assert len(space) == 5 and space.range_length == 12


@pytest.mark.parametrize("make", [GridSearchTuner, RandomTuner, GATuner, DropletTuner])
def test_tuners_measure_only_kept_points_once(make: type[Tuner]) -> None:
    task = _task()
    option, runner = _option()
    tuner = make(task) if make is not GATuner else GATuner(task, pop_size=16, seed=0)
    tuner.tune(n_trial=400, measure_option=option)
    assert len(runner.measured) == len(set(runner.measured))
    assert all(task.config_space.is_index_valid(i) for i in runner.measured)
    if make is not DropletTuner:  # the droplet descent stops when the neighbourhood is spent
        assert len(runner.measured) == len(task.config_space)
    assert tuner.best_config.get_other_option() == _BEST


def test_grid_search_range_skips_filtered_points() -> None:
    task = _task()
    space = task.config_space
    tuner = GridSearchTuner(task, range_idx=(40, 79))
    assert (tuner.begin_idx, tuner.end_idx, tuner.range_length) == (40, 80, 40)
    assert tuner.visited_max == space.subrange_length(40, 80)
    assert tuner.index == next(i for i in range(40, 80) if space.is_index_valid(i))


def test_droplet_tuner_resumes_from_records() -> None:
    option, first = _option()
    tuner = DropletTuner(_task(filtered=False))
    tuner.tune(n_trial=24, measure_option=option)
    history = [
        (MeasureInput(tuner.task.target, tuner.task, tuner.task.config_space.get(i)),
         MeasureResult((scoring_cost(tuner.task.config_space.get(i), _BEST),), 0, 0.0, 0.0))
        for i in first.measured
    ]  # fmt: skip
    resumed = DropletTuner(_task(filtered=False))
    resumed.load_history(history)
    option2, second = _option()
    resumed.tune(n_trial=400, measure_option=option2)
    assert not set(first.measured) & set(second.measured)
    assert resumed.best_config.get_other_option() == _BEST


def test_droplet_rejects_a_start_outside_the_space() -> None:
    with pytest.raises(TVMValueError, match="start_position"):
        DropletTuner(_task(), start_position=[8, 0, 0])


def test_ttest_pvalue_matches_scipy() -> None:
    stats = pytest.importorskip("scipy.stats", reason="scipy (the reference) is not installed")
    rng = np.random.default_rng(1)
    for shift in (0.0, 0.2, 1.0, 5.0):
        a, b = rng.random(5), rng.random(7) + shift
        assert ttest_pvalue(list(a), list(b)) == pytest.approx(
            stats.ttest_ind(a, b).pvalue, rel=1e-9
        )


def test_sample_task_and_records_of_the_testing_helpers() -> None:
    task, target = get_sample_task()
    assert task.workload == ("testing/matmul", 128, 128, 128, "float32")
    assert len(task.config_space) == 64 and target.kind.name == "llvm"
    records = get_sample_records(3)
    assert [r.costs for _, r in records] == [(1.0,), (2.0,), (3.0,)]
    assert [i.config.index for i, _ in records] == [0, 1, 2]
    runner = DummyRunner()
    results = runner.run([records[0][0]], [None])
    assert results[0].error_no == 0 and 0.0 <= results[0].costs[0] < 1.0
    assert runner.get_build_kwargs() == {}


def test_droplet_starting_on_a_filtered_out_point_begins_with_its_neighbours() -> None:
    task = _task()
    space = task.config_space
    start = next(i for i in range(space.range_length) if not space.is_index_valid(i))
    knob = space.point2knob(start)
    tuner = DropletTuner(task, start_position=knob)
    assert start not in tuner.visited
    first = [p for p, _ in tuner.next]
    assert first and all(space.is_index_valid(p) for p in first)
    # distance-1 neighbours come first
    assert max(abs(a - b) for a, b in zip(space.point2knob(first[0]), knob, strict=True)) == 1


def test_xgb_tuner_measures_only_kept_points() -> None:
    pytest.importorskip("xgboost", reason="the xgboost package is not installed")
    from pytvm.autotvm.tuner import XGBTuner

    task = _task()
    option, runner = _option()
    tuner = XGBTuner(task, plan_size=16, feature_type="knob", seed=0)
    tuner.tune(n_trial=80, measure_option=option)
    assert len(runner.measured) == 80 == len(set(runner.measured))
    assert all(task.config_space.is_index_valid(i) for i in runner.measured)
