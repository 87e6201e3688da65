"""autotvm.measure: the worker pool, LocalBuilder's verdicts (built, instantiation error,
compile error, timeout) and tuning a user template with LocalRunner, TVM's tutorial flow.
"""

from __future__ import annotations

import gc
import os
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import autotvm, te
from pytvm.autotvm.measure import MeasureErrorNo, MeasureInput
from pytvm.autotvm.measure.executor import PopenPoolExecutor, StatusKind
from pytvm.autotvm.task.knobs import InstantiationError
from pytvm.testing.autotvm import tutorial_matmul

# TVM's tune_simple_template matmul (two split knobs)
matmul = autotvm.template("test_measure.matmul", tutorial_matmul)


@autotvm.template("test_measure.modes")
def modes(n: int) -> Any:
    """A template whose knob picks how instantiation goes."""
    cfg = autotvm.get_config()
    cfg.define_knob("mode", ["ok", "reject", "hang"])
    mode = cfg["mode"].val
    if mode == "reject":
        raise InstantiationError("mode 'reject' is not a valid schedule")
    if mode == "hang":
        threading.Event().wait()  # never returns: the builder's timeout must end it
    a = te.placeholder((n,), name="A")
    b = te.compute((n,), lambda i: a[i] * 2.0, name="B")
    return te.create_schedule(b.op), [a, b]


def _failing_compiler(output: str, objects: list[str], options: Any = None) -> None:
    raise RuntimeError(f"cannot link {output}")


def _wait_forever(_: object) -> None:
    threading.Event().wait()


def test_pool_times_out_and_replaces_workers() -> None:
    with PopenPoolExecutor(max_workers=1, timeout=30) as pool:
        pid = pool.submit(os.getpid).result()
        assert pid != os.getpid()
        res = pool.map_with_error_catching(int, ["7", "x"])
        assert res[0] == (StatusKind.COMPLETE, 7)
        assert res[1].status == StatusKind.EXCEPTION and "invalid literal" in res[1].value
        assert pool.submit(os.getpid).result() == pid  # an exception keeps the worker
    with PopenPoolExecutor(max_workers=1, timeout=0.5) as pool:
        (hung,) = pool.map_with_error_catching(_wait_forever, [None])
        assert hung.status == StatusKind.TIMEOUT and "killed" in hung.value


def test_local_builder_verdicts() -> None:
    task = autotvm.task.create("test_measure.modes", (64,), "llvm")
    builder = autotvm.LocalBuilder(timeout=2, n_parallel=3)
    try:
        builder.set_task(task)
        inputs = [MeasureInput(task.target, task, task.config_space.get(i)) for i in range(3)]
        built, rejected, hung = builder.build(inputs)
        assert built.error is None and Path(built.filename).is_file()
        assert built.arg_info == (((64,), "float32"), ((64,), "float32"))
        assert rejected.error_no == MeasureErrorNo.INSTANTIATION_ERROR
        assert "not a valid schedule" in str(rejected.costs[0])
        assert hung.error_no == MeasureErrorNo.BUILD_TIMEOUT
        again = builder.build(inputs[:1])[0]  # the killed worker was replaced
        assert again.error is None
    finally:
        builder.close()
    failing = autotvm.LocalBuilder(n_parallel=1, build_func=_failing_compiler)
    try:
        failing.set_task(task)
        (res,) = failing.build(inputs[:1])
        assert res.error_no == MeasureErrorNo.COMPILE_HOST and "cannot link" in str(res.costs[0])
    finally:
        failing.close()


def test_tutorial_tuning_with_local_runner(tmp_path: Path) -> None:
    task = autotvm.task.create("test_measure.matmul", (32, 32, 32, "float32"), "llvm")
    runner = autotvm.LocalRunner(
        number=2, repeat=2, cooldown_interval=0, enable_cpu_cache_flush=True
    )
    option = autotvm.measure_option(builder=autotvm.LocalBuilder(n_parallel=2), runner=runner)
    log = tmp_path / "matmul.json"
    try:
        tuner = autotvm.tuner.RandomTuner(task)
        tuner.tune(n_trial=4, measure_option=option, callbacks=[autotvm.callback.log_to_file(log)])
    finally:
        runner.close()
        option["builder"].close()
    records = autotvm.record.load_from_file(log)
    assert len(records) == 4
    assert all(res.error_no == 0 and min(res.costs) > 0 for _, res in records)
    best = min(records, key=lambda r: float(np.mean(r[1].costs)))[0].config
    with autotvm.apply_history_best(log), tvm.target.Target("llvm"):
        sch, tensors = matmul(32, 32, 32, "float32")
        assert (
            autotvm.task.DispatchContext.current.query(
                tvm.target.Target("llvm"), task.workload
            ).index
            == best.index
        )
    func = tvm.build(sch, tensors, target="llvm")
    a, b = np.ones((32, 32), "float32"), np.full((32, 32), 2.0, "float32")
    out = tvm.nd.array(np.zeros((32, 32), "float32"))
    func(tvm.nd.array(a), tvm.nd.array(b), out)
    np.testing.assert_allclose(out.numpy(), a @ b)
    assert runner.server is None and runner.tracker is None


def test_bad_options_are_rejected() -> None:
    with pytest.raises(ValueError, match="timeout=0"):
        autotvm.RPCRunner("k", "127.0.0.1", 9190, timeout=0)
    with pytest.raises(ValueError, match="builder 'remote'"):
        autotvm.measure_option(builder="remote", runner="local")
    with pytest.raises(ValueError, match="timeout=-1"):
        autotvm.LocalBuilder(timeout=-1)
    with pytest.raises(ValueError, match="build_func"):
        autotvm.LocalBuilder(build_func="ndk")
    with pytest.raises(ValueError, match="no 'runner'"):
        autotvm.measure.create_measure_batch(None, {"builder": autotvm.LocalBuilder()})


def test_local_runner_and_builder_stop_when_dropped() -> None:
    task = autotvm.task.create("test_measure.modes", (8,), "llvm")
    runner = autotvm.LocalRunner(check_correctness=False)
    runner.set_task(task)
    builder = autotvm.LocalBuilder(n_parallel=1)
    builder.set_task(task)
    folder = Path(builder._dir or "")
    port = runner.port
    with socket.create_connection(("127.0.0.1", port), timeout=10):
        pass  # the tracker is up
    del runner, builder
    gc.collect()
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", port), timeout=10)
    assert not folder.exists()


def test_importing_topi_loads_no_tuning_module() -> None:
    """The autotvm package roots load the tuning layer on first use only (PEP 562)."""
    code = (
        "import sys, pytvm.topi\n"
        "from pytvm import autotvm\n"
        "late = ('pytvm.autotvm.tuner', 'pytvm.autotvm.measure.measure_methods', 'pytvm.graph')\n"
        "print(sorted(m for m in sys.modules if m.startswith(late)))\n"
        "autotvm.LocalBuilder\n"
        "print('pytvm.autotvm.measure.measure_methods' in sys.modules)\n"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.split("\n")[:2] == ["[]", "True"]
