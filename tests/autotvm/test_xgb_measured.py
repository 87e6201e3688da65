"""XGBTuner in TVM's flow, measured for real: a task of topi's ``conv2d_NCHWc.x86`` template
(``autotvm.task.create``) tuned with ``LocalBuilder`` + ``LocalRunner`` into an AutoTVM log,
whose records (read back from the file) then seed a tuner of another shape of the template
(transfer learning: the base model plans its first trials).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from pytvm import autotvm
from pytvm.autotvm.tuner import XGBoostCostModel, XGBTuner
from pytvm.testing.autotvm import conv2d_nchwc_args

pytest.importorskip("xgboost", reason="the xgboost package is not installed")
pytestmark = pytest.mark.slow  # a LocalRunner and 8 real builds: about 20 s


def _conv_task(size: int) -> Any:
    import pytvm.topi.x86  # noqa: F401 - registers the template

    args = conv2d_nchwc_args(2, size, padding=(1, 1, 1, 1))
    return autotvm.task.create("conv2d_NCHWc.x86", args, "llvm")


@pytest.fixture(scope="module")
def tuned(tmp_path_factory: pytest.TempPathFactory) -> tuple[XGBTuner, Path]:
    task = _conv_task(8)
    log = tmp_path_factory.mktemp("xgb") / "conv.json"
    runner = autotvm.LocalRunner(number=2, repeat=2, cooldown_interval=0)
    builder = autotvm.LocalBuilder(n_parallel=2)
    try:
        tuner = XGBTuner(task, plan_size=4, seed=0)
        tuner.tune(
            n_trial=8,
            measure_option=autotvm.measure_option(builder=builder, runner=runner),
            callbacks=[autotvm.callback.log_to_file(str(log))],
        )
    finally:
        runner.close()
        builder.close()
    return tuner, log


def test_xgb_tuner_measures_with_local_runner(tuned: tuple[XGBTuner, Path]) -> None:
    tuner, log = tuned
    records = autotvm.record.load_from_file(str(log))
    assert len(records) == 8 and all(res.error_no == 0 for _, res in records)
    assert len({inp.config.index for inp, _ in records}) == 8
    assert tuner.train_ct == 2  # refitted after the 4th and the 8th result
    best = max(records, key=lambda r: tuner.task.flop / float(np.mean(r[1].costs)))
    assert tuner.best_config.index == best[0].config.index


def test_records_of_another_shape_seed_the_first_plan(tuned: tuple[XGBTuner, Path]) -> None:
    _, log = tuned
    new = _conv_task(10)
    tuner = XGBTuner(new, plan_size=4, seed=1)
    tuner.load_history(autotvm.record.load_from_file(str(log)), min_seed_records=8)
    assert isinstance(tuner.cost_model, XGBoostCostModel)
    assert tuner.cost_model.base_model is not None
    assert 0 < len(tuner.trials) <= 4 and not tuner.visited
    assert [c.index for c in tuner.next_batch(len(tuner.trials))] == list(tuner.trials)
