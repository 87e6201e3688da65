"""``scripts/run_tvm_compiler_tests.py`` on TVM-shaped AutoTVM files: ``tests/python/autotvm``
is collected, ``tvm.testing.autotvm`` resolves to pytvm's helper, TVM's tuners run over a
multi-filtered space, and TVM's TopHub test (which downloads a package) is skipped with its
reason.
"""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest

from pytvm.testing.scripts import load_script

SCRIPTS = Path(__file__).resolve().parents[2] / "scripts"


@pytest.fixture(scope="module")
def runner() -> ModuleType:
    return load_script("run_tvm_compiler_tests_autotvm", SCRIPTS / "run_tvm_compiler_tests.py")


_AUTOTVM_TEST = """from tvm.testing.autotvm import DummyRunner, get_sample_task, get_sample_records
from tvm import autotvm
from tvm.autotvm.measure.measure import Builder
from tvm.autotvm.record import ApplyHistoryBest


class NullBuilder(Builder):
    def build(self, measure_inputs):
        return [None] * len(measure_inputs)


def test_tuners_over_a_filtered_space():
    for make in (autotvm.tuner.GridSearchTuner, autotvm.tuner.RandomTuner,
                 autotvm.tuner.GATuner, autotvm.tuner.DropletTuner):
        task, _ = get_sample_task()
        task.config_space.multi_filter(
            filter=lambda e: 32 <= e["tile_x"].size[1] * e["tile_y"].size[1] < 1024
        )
        tuner = make(task)
        option = autotvm.measure_option(builder=NullBuilder(), runner=DummyRunner())
        tuner.tune(n_trial=8, measure_option=option)
        assert all(task.config_space.is_index_valid(i) for i in tuner.visited)
        assert tuner.best_flops > 1


def test_history_best_of_sample_records():
    records = get_sample_records(4)
    task, target = get_sample_task()
    best = ApplyHistoryBest(records).query(target, task.workload)
    assert best.index == 0
"""

_TOPHUB_TEST = """from tvm import autotvm


def test_tophub_kinds_match():
    assert len(autotvm.tophub.context("llvm -device=arm_cpu").best_by_targetkey)
"""


def test_autotvm_files_run_and_tophub_download_skips(
    runner: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    autotvm = tmp_path / "tests" / "python" / "autotvm"
    autotvm.mkdir(parents=True)
    (autotvm / "test_autotvm_small.py").write_text(_AUTOTVM_TEST)
    (autotvm / "test_autotvm_dispatch_context.py").write_text(_TOPHUB_TEST)
    assert runner.main([str(tmp_path), "--jobs", "2", "-v"]) == 0
    out = capsys.readouterr().out
    assert "test_tuners_over_a_filtered_space  passed" in out
    assert "test_history_best_of_sample_records  passed" in out
    assert "test_tophub_kinds_match  skipped (downloads from the internet)" in out
