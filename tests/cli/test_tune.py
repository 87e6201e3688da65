"""``pytvm tune`` end to end on the reference ``cnn_small`` (tvmc's options): measured on this
machine (LocalRunner) and on a server of a tracker, the log valid AutoTVM JSON lines, a second
run resuming without measuring again, and ``pytvm compile --tuning-records`` equal to ONNX
Runtime; bad options named in one line.
"""

from __future__ import annotations

import argparse
import importlib.util
import io
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import onnxruntime as ort
import pytest

import pytvm
from pytvm import autotvm, relay
from pytvm.autotvm.record import decode
from pytvm.cli import tune
from pytvm.cli._tune_progress import TaskProgress, TaskSummary, format_table
from pytvm.cli.main import main
from pytvm.contrib import graph_executor
from pytvm.ffi.errors import TVMValueError
from pytvm.testing import rpc as rpc_testing
from pytvm.testing.cli import run_pytvm

pytestmark = pytest.mark.needs_cc


#: cnn_small has four tunable tasks (three convolutions, the dense): one trial each, the first
#: point of each space (grid search).
_TUNE = ("--target", "llvm", "--tuner", "gridsearch", "--number", "1", "--repeat", "1")


@pytest.fixture(scope="module")
def tuned(
    reference_models: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> tuple[Path, Path, subprocess.CompletedProcess[str]]:
    tmp = tmp_path_factory.mktemp("tune")
    model = reference_models["cnn_small"]
    run = run_pytvm(
        "tune", str(model), *_TUNE, "--trials", "4", "--parallel", "2", "-o", "rec.json", cwd=tmp
    )
    assert run.returncode == 0, run.stderr
    return model, tmp / "rec.json", run


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_tune_writes_autotvm_json_lines(
    tuned: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    _, log, run = tuned
    rows = _rows(log)
    tasks = {json.dumps(r["input"][1:3]) for r in rows}
    assert len(rows) == 4 and len(tasks) == 4
    for line in log.read_text().splitlines():
        decoded = decode(line)
        assert decoded is not None
        inp, _ = decoded
        assert inp.task.name.endswith(".x86") and str(inp.target).startswith("llvm")
    assert all(r["result"][1] == 0 for r in rows)  # each task's first point builds
    # progress per task and the final table (tvmc's "[Task  1/ 4]" prefix)
    assert "[Task  4/ 4]" in run.stderr and "GFLOPS" in run.stderr and "left" in run.stderr
    table = run.stdout.splitlines()
    assert table[0].split()[:3] == ["#", "task", "data"] and len(table) == 6


def test_tune_resumes_without_measuring_again(
    tuned: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    model, log, _ = tuned
    before = log.read_text()
    again = run_pytvm("tune", str(model), *_TUNE, "--trials", "4", "-o", str(log), cwd=log.parent)
    assert again.returncode == 0, again.stderr
    assert log.read_text() == before
    assert again.stderr.count("all trials on record") == 4


def test_compile_with_tuning_records_matches_onnxruntime(
    tuned: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    model, log, _ = tuned
    out = log.parent / "tuned.so"
    result = run_pytvm(
        "compile", str(model), "--tuning-records", str(log), "-o", str(out), cwd=log.parent
    )
    assert result.returncode == 0, result.stderr
    # every tunable kernel found its workload in the log (no fallback warning)
    assert "Cannot find config" not in result.stderr
    x = np.random.default_rng(0).standard_normal((1, 3, 32, 32)).astype("float32")
    (want,) = ort.InferenceSession(str(model)).run(None, {"input": x})
    m = graph_executor.GraphModule(pytvm.runtime.load_module(str(out))["default"](pytvm.cpu()))
    m.set_input("input", x)
    m.run()
    np.testing.assert_allclose(m.get_output(0).numpy(), want, rtol=1e-4, atol=1e-5)


@pytest.fixture
def tracker_with_server() -> Iterator[int]:
    with rpc_testing.tracker_with_server("cpu-board") as tracker_port:
        yield tracker_port


def test_tune_measures_on_a_tracker_server(
    tuned: tuple[Path, Path, subprocess.CompletedProcess[str]],
    tracker_with_server: int,
    tmp_path: Path,
) -> None:
    model, prior, _ = tuned
    tracker = f"127.0.0.1:{tracker_with_server}"
    args = ("--rpc-tracker", tracker, "--rpc-key", "cpu-board", "--tasks", "3")
    run = run_pytvm(
        "tune", str(model), *_TUNE, *args, "--trials", "2", "--parallel", "1",
        "--tuning-records", str(prior), "-o", "remote.json",
        cwd=tmp_path,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    rows = _rows(tmp_path / "remote.json")
    # the dense task: its configuration in the prior log is not measured again
    assert len(rows) == 1 and rows[0]["input"][1] == "dense_pack.x86"
    prior_dense = [r["config"] for r in _rows(prior) if r["input"][1] == "dense_pack.x86"]
    assert rows[0]["config"] not in prior_dense
    assert rows[0]["config"]["index"] == 1  # grid search goes on after the recorded point


def test_tune_names_bad_options_in_one_line(
    reference_models: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    model = str(reference_models["cnn_small"])
    cases = [
        (("--rpc-tracker", "127.0.0.1:9190"), "--rpc-tracker needs --rpc-key"),
        (("--rpc-tracker", "host:port", "--rpc-key", "k"), "expected host or host:port"),
        (("--tuning-records", "missing.json"), "--tuning-records missing.json: no such file"),
        (("--trials", "0"), "--trials 0: expected at least 1"),
        (("--tasks", "9"), "task 9 out of range; there are 4"),
    ]
    for extra, message in cases:
        assert main(["tune", model, "-o", "r.json", *extra]) == 1, extra
        last = capsys.readouterr().err.strip().splitlines()[-1]
        assert last.startswith("pytvm tune: error: ") and message in last, (extra, last)
    assert main(["compile", model, "--tuning-records", "missing.json"]) == 1
    assert "--tuning-records missing.json: no such file" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_tune_lists_tasks(
    reference_models: dict[str, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    model = str(reference_models["cnn_small"])
    assert main(["tune", model, "-o", "r.json", "--tasks", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 4 and lines[0].startswith("  0. conv2d_nchw")
    assert lines[3].startswith("  3. dense_pack.x86") and "(len=" in lines[3]


def test_filter_tasks_reads_tvmc_expressions() -> None:
    tasks = list("abcdef")
    assert tune.filter_tasks(tasks, "all") == (tasks, False)
    assert tune.filter_tasks(tasks, "list") == (tasks, True)
    assert tune.filter_tasks(tasks, "0,2-3,5") == (["a", "c", "d", "f"], False)
    assert tune.filter_tasks(tasks, "-1,4-") == (["a", "b", "e", "f"], False)
    for bad in ("x", "1-2-3", "6"):
        with pytest.raises(TVMValueError, match="--tasks"):
            tune.filter_tasks(tasks, bad)


def test_tuner_names_are_tvmcs() -> None:
    assert set(tune.TUNERS) >= {"ga", "gridsearch", "random", "xgb", "xgb_knob", "xgb_rank"}
    x = relay.var("x", shape=(1, 64))
    w = relay.var("w", shape=(16, 64))
    weights = {"w": np.ones((16, 64), "float32")}
    (task,) = autotvm.task.extract_from_program(
        relay.Function([x, w], relay.nn.dense(x, w)), weights, "llvm"
    )
    assert type(tune.make_tuner("gridsearch", task)).__name__ == "GridSearchTuner"
    assert type(tune.make_tuner("ga", task)).__name__ == "GATuner"
    assert type(tune.make_tuner("random", task)).__name__ == "RandomTuner"
    for name in (n for n in tune.TUNERS if n.startswith("xgb")):
        if importlib.util.find_spec("xgboost") is None:
            with pytest.raises(TVMValueError, match="xgboost"):
                tune.make_tuner(name, task)
            continue
        made = tune.make_tuner(name, task)
        assert type(made).__name__ == "XGBTuner", name
        assert made.cost_model.loss_type == (
            "rank-binary" if "binary" in name else "rank" if "rank" in name else "reg"
        )
    with pytest.raises(TVMValueError, match="expected one of"):
        tune.make_tuner("annealing", task)


def test_progress_line_and_table() -> None:
    stream = io.StringIO()
    progress = TaskProgress("[Task  1/ 2] conv2d_nchw.x86", 10, done_before=4, stream=stream)
    tuner = argparse.Namespace(best_flops=2.5e9, ttl=3)
    progress(tuner, [object(), object()], [object(), object()])
    line = stream.getvalue().splitlines()[-1]
    assert "6/10" in line and "best 2.50 GFLOPS" in line and "left" in line
    table = format_table(
        [TaskSummary(0, "dense_pack.x86", "1x64 x 1x64x16", 6, 10, 2.5, 3)]
    ).splitlines()
    assert table[2].split() == [
        "0",
        "dense_pack.x86",
        "1x64",
        "x",
        "1x64x16",
        "6",
        "10",
        "2.50",
        "3",
    ]


def test_resume_reads_the_records_of_the_same_target_only(
    tuned: tuple[Path, Path, subprocess.CompletedProcess[str]],
) -> None:
    _, log, _ = tuned
    records = autotvm.record.load_from_file(str(log))
    other = [
        (inp._replace(target=pytvm.target.Target("llvm -mcpu=core-avx2")), res)
        for inp, res in records
    ]
    assert tune.records_for(pytvm.target.Target("llvm"), records + other) == records
    assert tune.records_for("llvm -mcpu=core-avx2", records + other) == other
