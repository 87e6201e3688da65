"""bench/tune_tvm018.py and bench/tune.py run end to end with a tiny budget and print tables."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
CURVE = REPO / "bench" / "tune_tvm018.py"
TUNE = REPO / "bench" / "tune.py"
TVM018_PYTHON = os.environ.get("TVM018_PYTHON", "/work/venv-tvm018/bin/python")
TVM018_PYTHONPATH = os.environ.get("TVM018_PYTHONPATH", "/work/tvm018/python")
TVM018_PLUGIN = os.environ.get(
    "TVM018_LLVM_PLUGIN", "/work/tvm018/build-llvm-ext/libtvm_llvm_ext.so"
)

sys.path.insert(0, str(REPO / "bench"))


def _bench_module(name: str) -> Any:
    """The bench script ``bench/<name>.py`` as a module (bench/ is not a package)."""
    spec = importlib.util.spec_from_file_location(name, REPO / "bench" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


tune = _bench_module("tune")
tune_conv_worker = _bench_module("tune_conv_worker")
tune_tvm018 = _bench_module("tune_tvm018")

needs_taskset = pytest.mark.skipif(
    shutil.which("taskset") is None or not hasattr(os, "sched_setaffinity"),
    reason="needs taskset and Linux CPU affinity",
)


def _run(script: Path, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TVM018_")}
    return subprocess.run(
        [sys.executable, str(script), *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
        env=env,
    )


def test_best_by_trial_is_the_running_maximum() -> None:
    trials = [{"gflops": g, "error_no": 0} for g in (3.0, 1.0, 7.0, 0.0, 5.0)]
    assert tune_tvm018.best_by_trial(trials, (1, 2, 3, 5, 10)) == [3.0, 3.0, 7.0, 7.0, None]


def test_task_budgets_split_by_flops() -> None:
    assert tune.task_budgets([1e9, 3e9], 60.0) == [15.0, 45.0]
    assert tune.task_budgets([0.0, 0.0], 60.0) == [30.0, 30.0]
    assert tune.task_budgets([], 60.0) == []


def test_tvm_mcpu_falls_back_to_the_vector_isa() -> None:
    avx512 = frozenset({"avx2", "fma", "avx512f", "avx512bw", "avx512dq", "avx512vl"})
    assert tune_conv_worker.tvm_mcpu("znver3", avx512) == "znver3"
    assert tune_conv_worker.tvm_mcpu("generic", avx512) == "icelake-server"
    assert tune_conv_worker.tvm_mcpu("generic", frozenset({"avx2", "fma"})) == "haswell"
    assert tune_conv_worker.tvm_mcpu("generic", frozenset({"sse2"})) == "generic"


def test_geomean() -> None:
    assert tune.geomean([0.5, 2.0]) == pytest.approx(1.0)
    assert str(tune.geomean([])) == "nan"


def test_conv_onnx_matches_numpy(tmp_path: Path) -> None:
    import numpy as np
    import onnx
    import onnxruntime as ort

    path = tmp_path / "conv.onnx"
    tune_tvm018.write_conv_onnx(path)
    model = onnx.load(str(path))
    weight = onnx.numpy_helper.to_array(model.graph.initializer[0])
    assert weight.shape == (64, 64, 3, 3)
    x = np.random.default_rng(1).standard_normal((1, 64, 56, 56)).astype("float32")
    (out,) = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(
        None, {"data": x}
    )
    assert out.shape == (1, 64, 56, 56)
    padded = np.pad(x[0], ((0, 0), (1, 1), (1, 1)))
    ref = sum(
        np.einsum("oc,chw->ohw", weight[:, :, i, j], padded[:, i : i + 56, j : j + 56])
        for i in range(3)
        for j in range(3)
    )
    np.testing.assert_allclose(out[0], ref, rtol=1e-4, atol=1e-3)


def test_missing_tvm_interpreter_is_reported(tmp_path: Path) -> None:
    missing = tmp_path / "no-python"
    why = tune_tvm018.tvm018_unavailable(str(missing), "", None)
    assert why == f"--tvm-python {missing}: no such interpreter"
    assert tune_tvm018.tvm018_unavailable(None, "", None) == "no --tvm-python given"


def _tvm018_missing() -> str | None:
    why: str | None = tune_tvm018.tvm018_unavailable(
        TVM018_PYTHON, TVM018_PYTHONPATH, TVM018_PLUGIN
    )
    return why


@pytest.mark.slow
@needs_taskset
def test_tvm018_curve_with_two_trials(tmp_path: Path) -> None:
    why = _tvm018_missing()
    if why:
        pytest.skip(f"TVM v0.18 with AutoTVM, xgboost and tornado not available: {why}")
    out = tmp_path / "curve.json"
    done = _run(
        CURVE,
        *("--tvm-python", TVM018_PYTHON, "--tvm-pythonpath", TVM018_PYTHONPATH),
        *("--tvm-llvm-plugin", TVM018_PLUGIN, "--peer", "tvm018", "--tuner", "random"),
        *("--trials", "2", "--no-peak", "--retime-rounds", "1", "--retime-number", "2"),
        *("--json", str(out)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(ln for ln in done.stdout.splitlines() if ln.startswith("tvm018 conv2d_NCHWc.x86"))
    cells = row.split()[3:]
    assert len(cells) == 5, row  # @1, @2, trials, failed, wall s
    assert float(cells[1]) > 0 and cells[2] == "2", row
    doc = json.loads(out.read_text())
    (run,) = doc["runs"]
    assert run["task"] == "conv2d_NCHWc.x86" and run["version"].startswith("0.18")
    assert "-mcpu=generic" not in run["target"], run["target"]
    # TVM's FLOP count adds the padding and layout stages' arithmetic to the multiply-adds
    assert run["flop"] == pytest.approx(2 * 64 * 64 * 9 * 56 * 56, rel=0.01)
    assert doc["retimed"]["tvm018 conv2d_NCHWc.x86 random"]["retimed_gflops"] > 0


@needs_taskset
def test_pytvm_curve_with_two_trials(tmp_path: Path) -> None:
    out = tmp_path / "curve.json"
    done = _run(
        CURVE,
        *("--peer", "pytvm", "--tuner", "random", "--trials", "2", "--no-peak"),
        *("--retime-rounds", "1", "--retime-number", "2", "--json", str(out)),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    doc = json.loads(out.read_text())
    runs = {run["task"]: run for run in doc["runs"]}
    retimed = doc["retimed"]
    assert set(retimed) == {f"pytvm {task} random" for task in runs}, done.stdout
    assert all(cell["retimed_gflops"] > 0 for cell in retimed.values()), done.stdout
    assert set(runs) == {"conv2d_nchw_packed.x86", "conv2d_NCHWc.x86"}, done.stdout
    for run in runs.values():
        assert len(run["trials"]) == 2 and run["flop"] == pytest.approx(2 * 64 * 64 * 9 * 56 * 56)
        assert max(t["gflops"] for t in run["trials"]) > 0, done.stdout
    row = next(ln for ln in done.stdout.splitlines() if ln.startswith("pytvm conv2d_nchw_packed"))
    assert row.split()[5] == "2", row  # @1, @2, then the trials run


@needs_taskset
def test_tune_bench_tunes_and_measures(tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    subprocess.run(
        [sys.executable, str(REPO / "models" / "make_models.py"), str(models)],
        check=True,
        capture_output=True,
        timeout=300,
    )
    out = tmp_path / "tune.json"
    done = _run(
        TUNE,
        *("--only", "mlp", "--model-dir", str(models), "--threads", "1", "--no-peak"),
        *("--budget-minutes", "0.05", "--trials", "2", "--min-seconds", "0.05", "--rounds", "1"),
        *("--json", str(out), "--work", str(tmp_path / "work")),
    )
    assert done.returncode == 0, done.stdout + done.stderr
    row = next(ln for ln in done.stdout.splitlines() if ln.startswith("mlp "))
    result = json.loads(out.read_text())["models"]["mlp"]
    cells = result["latency"]["1"]
    assert cells["untuned"]["ms"] > 0 and cells["onnxruntime"]["ms"] > 0, row
    for kind in ("untuned", "tuned"):
        assert cells[kind]["ms"] > 0 and cells[kind]["rel"] < 1e-3, row
    tasks = result["tune"]["tasks"]
    assert tasks and all(t["trials"] >= 1 for t in tasks), row
    records = Path(result["tune"]["records"]).read_text().splitlines()
    assert len(records) == sum(t["trials"] for t in tasks)
    # the latency again from those records, no tuning
    again = _run(
        TUNE,
        *("--only", "mlp", "--model-dir", str(models), "--threads", "1", "--no-peak"),
        *("--from-records", str(tmp_path / "work"), "--min-seconds", "0.05", "--rounds", "1"),
        *("--json", str(out)),
    )
    assert again.returncode == 0, again.stdout + again.stderr
    result = json.loads(out.read_text())["models"]["mlp"]
    assert result["latency"]["1"]["tuned"]["rel"] < 1e-3, again.stdout
    assert sum(t["trials"] for t in result["tune"]["tasks"]) == len(records)
