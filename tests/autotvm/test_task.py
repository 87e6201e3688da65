"""autotvm.task: creating tasks from user and topi templates, their spaces, FLOP counts,
instantiation and pickling (the worker processes of the builder rebuild tasks from pickles).
"""

from __future__ import annotations

import pickle
from typing import Any

import numpy as np
import pytest

import pytvm as tvm
from pytvm import autotvm, te
from pytvm.autotvm.measure.executor import PopenWorker
from pytvm.autotvm.task.space import FallbackConfigEntity
from pytvm.ffi.errors import TVMValueError
from pytvm.testing.autotvm import DENSE_ARGS, conv2d_nchwc_args, tutorial_matmul
from pytvm.topi.x86 import strategy  # noqa: F401 - registers the strategy rows' templates

# TVM's tune_simple_template matmul, two split knobs
matmul = autotvm.template("test_task.matmul", tutorial_matmul)


NCHWC_ARGS = conv2d_nchwc_args(2, 8)


def _run(sch: Any, tensors: list[Any], values: list[np.ndarray]) -> np.ndarray:
    func = tvm.build(sch, tensors, target="llvm")
    args = [tvm.nd.array(v) for v in values]
    func(*args)
    return args[-1].numpy()


def test_create_user_template_space_flop_and_workload() -> None:
    task = autotvm.task.create("test_task.matmul", (16, 8, 32, "float32"), "llvm")
    assert task.workload == ("test_task.matmul", 16, 8, 32, "float32")
    assert [len(s) for s in task.config_space.space_map.values()] == [5, 6]
    assert len(task.config_space) == 30
    assert task.flop == 2 * 16 * 8 * 32
    assert str(task.target).startswith("llvm")


def test_instantiate_every_config_computes_the_product() -> None:
    task = autotvm.task.create("test_task.matmul", (8, 4, 8, "float32"), "llvm")
    rng = np.random.default_rng(1)
    a = rng.standard_normal((8, 4)).astype("float32")
    b = rng.standard_normal((4, 8)).astype("float32")
    for index in (0, 7, len(task.config_space) - 1):
        sch, tensors = task.instantiate(task.config_space.get(index))
        assert [t.op.name for t in tensors] == ["A", "B", "C"]
        out = _run(sch, tensors, [a, b, np.zeros((8, 8), "float32")])
        np.testing.assert_allclose(out, a @ b, rtol=1e-5)


def test_get_config_inside_a_template_reads_the_applied_config() -> None:
    task = autotvm.task.create("test_task.matmul", (8, 4, 8, "float32"), "llvm")
    cfg = task.config_space.get(3)
    with autotvm.ApplyConfig(cfg), tvm.target.Target("llvm"):
        sch, _ = matmul(8, 4, 8, "float32")
    assert sch is not None
    assert autotvm.get_config().is_fallback


def test_topi_template_space_flop_and_tensors() -> None:
    task = autotvm.task.create("conv2d_NCHWc.x86", NCHWC_ARGS, "llvm")
    assert len(task.config_space) > 1
    assert task.flop == 2 * (1 * 16 * 8 * 8) * (16 * 3 * 3)  # 2 x multiply-adds; padding is 0
    _, tensors = task.instantiate(FallbackConfigEntity())
    shapes = [tuple(int(str(d)) for d in t.shape) for t in tensors]
    assert shapes == [(1, 2, 8, 8, 8), (2, 2, 3, 3, 8, 8), (1, 2, 8, 8, 8)]


def test_topi_template_configs_agree_with_the_default() -> None:
    task = autotvm.task.create("conv2d_NCHWc.x86", NCHWC_ARGS, "llvm")
    rng = np.random.default_rng(2)
    values = [rng.uniform(-1, 1, (1, 2, 8, 8, 8)).astype("float32")]
    values.append(rng.uniform(-1, 1, (2, 2, 3, 3, 8, 8)).astype("float32"))
    values.append(np.zeros((1, 2, 8, 8, 8), "float32"))
    ref = _run(*task.instantiate(FallbackConfigEntity()), values)
    assert np.abs(ref).max() > 0
    other = _run(*task.instantiate(task.config_space.get(len(task.config_space) - 1)), values)
    np.testing.assert_allclose(other, ref, rtol=1e-4, atol=1e-4)


def test_strategy_row_task_from_a_recorded_workload() -> None:
    task = autotvm.task.create("dense.x86", DENSE_ARGS, "llvm")
    assert task.flop == 2 * 4 * 32 * 64
    sch, tensors = task.instantiate(FallbackConfigEntity())
    rng = np.random.default_rng(3)
    x = rng.standard_normal((4, 64)).astype("float32")
    w = rng.standard_normal((32, 64)).astype("float32")
    out = _run(sch, tensors, [x, w, np.zeros((4, 32), "float32")])
    np.testing.assert_allclose(out, x @ w.T, rtol=1e-4, atol=1e-4)


def test_flop_counts_elementwise_arithmetic_not_data_movement() -> None:
    a = te.placeholder((4, 6), name="A")
    padded = te.compute((4, 8), lambda i, j: a[i, te.min(j, 5)], name="P")
    out = te.compute((4, 8), lambda i, j: te.max(padded[i, j] * 2.0 + 1.0, 0.0), name="R")
    assert autotvm.task.compute_flop([out]) == 4 * 8 * 3


def test_task_pickles_with_its_template() -> None:
    task = autotvm.task.create("test_task.matmul", (8, 4, 8, "float32"), "llvm")
    copy = pickle.loads(pickle.dumps(task))
    assert copy.workload == task.workload
    assert len(copy.config_space) == len(task.config_space)
    assert copy.flop == task.flop and str(copy.target) == str(task.target)
    worker = PopenWorker()  # a fresh process: the template travels inside the pickle
    try:
        names = worker.call(_instantiate_names, (task, task.config_space.get(2)), timeout=120)
    finally:
        worker.kill()
    assert names == ["A", "B", "C"]


def _instantiate_names(task: Any, config: Any) -> list[str]:
    return [t.op.name for t in task.instantiate(config)[1]]


def test_bad_names_and_arguments_are_rejected() -> None:
    with pytest.raises(TVMValueError, match="no template named 'no_such'"):
        autotvm.task.create("no_such", (1,), "llvm")
    with pytest.raises(TVMValueError, match="keyword arguments"):
        matmul(8, 4, 8, dtype="float32")
