"""AutoTVM's tuners over a real ConfigSpace, measured through the builder/runner hook with a
runner that scores configurations deterministically (the seam TVM's tuner tests use with
DummyRunner): no configuration is measured twice, ``n_trial`` and ``early_stopping`` bound the
search, the unique optimum is found, and the log written while tuning is read back and resumed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from pytvm import autotvm
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.record import load_from_file
from pytvm.autotvm.task import ConfigSpace, Task
from pytvm.autotvm.tuner import GATuner, GridSearchTuner, RandomTuner, Tuner
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target
from pytvm.testing.autotvm import NullBuilder, ScoringRunner, scoring_option

_ARGS = (("TENSOR", (4, 8), "float32"), None, "float32")
_BEST = {"a": 2, "b": 3, "c": 1}


def _task() -> Task:
    space = ConfigSpace()
    space.define_knob("a", [0, 1, 2, 3])
    space.define_knob("b", [0, 1, 2, 3, 4])
    space.define_knob("c", [0, 1, 2])
    task = Task("toy_template.x86", _ARGS)
    task.config_space, task.target, task.flop = space, Target("llvm"), 1e9
    return task


def _option(n_parallel: int = 4) -> tuple[dict[str, Any], ScoringRunner]:
    """A builder of ``n_parallel`` and a runner whose cost is smallest (and unique) at _BEST."""
    return scoring_option(_BEST, n_parallel)


def _tuners(task: Task) -> list[Tuner]:
    return [GridSearchTuner(task), RandomTuner(task, seed=0), GATuner(task, pop_size=8, seed=0)]


@pytest.mark.parametrize("kind", ["grid", "random", "ga"])
def test_tuner_measures_each_config_once_and_finds_the_unique_best(kind: str) -> None:
    task = _task()
    tuner = dict(zip(["grid", "random", "ga"], _tuners(task), strict=True))[kind]
    option, runner = _option()
    tuner.tune(n_trial=len(task.config_space), measure_option=option)
    assert sorted(runner.measured) == list(range(60))
    assert not tuner.has_next()
    assert tuner.best_config.get_other_option() == _BEST
    assert tuner.best_flops == pytest.approx(1e9 / 1e-3)
    assert tuner.best_measure_pair is not None
    assert tuner.best_measure_pair[0].config is tuner.best_config


def test_grid_search_goes_in_index_order() -> None:
    option, runner = _option()
    GridSearchTuner(_task()).tune(n_trial=10, measure_option=option)
    assert runner.measured == list(range(10))


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_tuner_stops_at_n_trial(kind: int) -> None:
    option, runner = _option(n_parallel=4)
    _tuners(_task())[kind].tune(n_trial=7, measure_option=option)
    assert len(runner.measured) == 7 and len(set(runner.measured)) == 7


def test_tuner_stops_early_after_the_best() -> None:
    option, runner = _option(n_parallel=1)
    tuner = GridSearchTuner(_task(), range_idx=(20, 59))
    tuner.tune(n_trial=40, measure_option=option, early_stopping=5)
    # Index 34 is the optimum (a=2, b=3, c=1), found on trial 14; five more trials, then stop.
    assert tuner.best_config.index == 34 and tuner.best_iter == 14
    assert runner.measured == list(range(20, 39))


def test_log_to_file_writes_records_that_pick_the_best(tmp_path: Path) -> None:
    log = tmp_path / "tune.log"
    option, _ = _option()
    tuner = RandomTuner(_task(), seed=1)
    tuner.tune(n_trial=60, measure_option=option, callbacks=[autotvm.callback.log_to_file(log)])
    records = load_from_file(log)
    assert len(records) == 60
    assert {inp.config.index for inp, _ in records} == set(range(60))
    with autotvm.apply_history_best(str(log)), Target("llvm") as tgt:
        cfg = autotvm.DispatchContext.current.query(tgt, ("toy_template.x86", *_ARGS))
    assert cfg.get_other_option() == _BEST
    # pick_best distills the log to the one fastest record of the workload
    best = tmp_path / "best.log"
    autotvm.record.pick_best(log, best)
    (picked,) = load_from_file(best)
    assert picked[0].config.get_other_option() == _BEST
    # an existing output competes: a slower record there is replaced, not kept beside
    slower = next(r for r in records if r[0].config.get_other_option() != _BEST)
    best.write_text(autotvm.record.encode(*slower) + "\n")
    autotvm.record.pick_best(log, best)
    assert [r[0].config.index for r in load_from_file(best)] == [picked[0].config.index]


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_resuming_from_the_log_skips_measured_configs(kind: int, tmp_path: Path) -> None:
    log = tmp_path / "tune.log"
    first, runner1 = _option()
    _tuners(_task())[kind].tune(
        n_trial=20, measure_option=first, callbacks=[autotvm.callback.log_to_file(str(log))]
    )
    tuner = _tuners(_task())[kind]
    tuner.load_history(load_from_file(log))
    assert tuner.best_config is not None
    second, runner2 = _option()
    tuner.tune(n_trial=100, measure_option=second)
    assert not set(runner1.measured) & set(runner2.measured)
    assert sorted(runner1.measured + runner2.measured) == list(range(60))
    assert tuner.best_config.get_other_option() == _BEST


def test_progress_bar_prints_tvms_line(capsys: pytest.CaptureFixture[str]) -> None:
    option, _ = _option()
    bar = autotvm.callback.progress_bar(8, prefix="[Task 1/1]")
    GridSearchTuner(_task()).tune(n_trial=8, measure_option=option, callbacks=[bar])
    err = capsys.readouterr().err
    assert "[Task 1/1] Current/Best:" in err
    assert "GFLOPS | Progress: (8/8) |" in err
    assert err.endswith(" Done.\n")


def test_tune_without_a_builder_names_the_missing_step() -> None:
    with pytest.raises(TVMValueError, match=r"'builder'.*LocalBuilder"):
        GridSearchTuner(_task()).tune(n_trial=1, measure_option={"runner": ScoringRunner(_BEST)})


def test_ga_rejects_more_elites_than_its_population() -> None:
    with pytest.raises(TVMValueError, match="elite_num"):
        GATuner(_task(), pop_size=2, elite_num=3)


def test_callback_is_the_tuners_callback_module() -> None:
    assert autotvm.callback is autotvm.tuner.callback


def test_progress_bar_ends_its_line_when_tuning_stops_early(
    capsys: pytest.CaptureFixture[str],
) -> None:
    option, _ = _option(n_parallel=1)
    tuner = GridSearchTuner(_task())
    tuner.tune(
        n_trial=40,
        measure_option=option,
        early_stopping=3,
        callbacks=[autotvm.callback.progress_bar(40, prefix="[Task 1/1]")],
    )
    err = capsys.readouterr().err
    assert "Progress: (40/40)" not in err
    assert err.endswith(" Done.\n") and err.count(" Done.") == 1


class _FlatRunner(ScoringRunner):
    """Every configuration takes 1 ms (the templates' knobs are not the toy's)."""

    def run(self, inputs: Sequence[MeasureInput], builds: Sequence[None]) -> list[MeasureResult]:
        self.measured += [inp.config.index for inp in inputs]
        return [MeasureResult((1e-3,), 0, 0.0, time.time()) for _ in inputs]


def _flat_option() -> tuple[dict[str, Any], ScoringRunner]:
    runner = _FlatRunner(_BEST)
    return {"builder": NullBuilder(2), "runner": runner}, runner


def _dense_task() -> Any:
    from pytvm.testing.autotvm import DENSE_ARGS
    from pytvm.topi.x86 import strategy  # noqa: F401 - registers the strategy rows' templates

    return autotvm.task.create("dense.x86", DENSE_ARGS, "llvm")


@pytest.mark.parametrize("kind", [0, 1, 2])
def test_default_first_measures_the_untuned_configuration_first(kind: int) -> None:
    """With ``default_first`` the first trial is the configuration an untuned build compiles
    (its lowered loops equal the fallback's), then the tuner's own proposals, none twice.
    """
    import pytvm
    from pytvm.autotvm.task.space import FallbackConfigEntity
    from pytvm.autotvm.tuner.tuner import default_config

    task = _dense_task()
    default = default_config(task)
    assert default is not None and len(task.config_space) > 1

    def lowered(config: Any) -> str:
        sch, tensors = task.instantiate(config)
        return str(pytvm.lower(sch, tensors, simple_mode=True))

    assert lowered(default) == lowered(FallbackConfigEntity())
    option, runner = _flat_option()
    tuner = _tuners(task)[kind]
    tuner.tune(n_trial=5, measure_option=option, default_first=True)
    assert runner.measured[0] == default.index
    assert len(runner.measured) == len(set(runner.measured)) == 5


def test_default_first_skips_a_default_on_record() -> None:
    from pytvm.autotvm.tuner.tuner import default_config

    task = _dense_task()
    default = default_config(task)
    record = (
        MeasureInput(task.target, task, default),
        MeasureResult((1e-3,), 0, 0.0, time.time()),
    )
    option, runner = _flat_option()
    tuner = GridSearchTuner(task)
    tuner.load_history([record])
    tuner.tune(n_trial=3, measure_option=option, default_first=True)
    assert default.index not in runner.measured and len(runner.measured) == 3
