"""Task extraction from a model (``autotvm.task.extract_from_program``) and tuning records
applied at build (``apply_history_best`` around ``graph.build`` / ``relay.build``), with the
compile engine's cache keyed on the dispatch context.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

import pytvm
from pytvm import autotvm, graph, relay
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.record import encode
from pytvm.autotvm.task.relay_integration import TaskExtractEnv
from pytvm.contrib import graph_executor
from pytvm.ffi.errors import TVMTypeError, TVMValueError
from pytvm.frontend import from_onnx
from pytvm.graph.build_module import lower_graph, main_function
from pytvm.graph.compile_engine import CompileEngine
from pytvm.graph.expr import Call
from pytvm.graph.functor import post_order
from pytvm.graph.op import get_op
from pytvm.ir.transform import PassContext
from pytvm.target import Target

pytestmark = pytest.mark.needs_cc

SHAPE = (1, 8, 16, 16)


def _conv(name: str, x: str, w: str, y: str) -> onnx.NodeProto:
    return helper.make_node("Conv", [x, w], [y], pads=[1, 1, 1, 1], name=name)


def _model() -> onnx.ModelProto:
    """conv(8->16) -> relu -> conv(16->16) -> relu -> conv(16->16) (the last two one workload)
    -> flatten -> gemm(10).
    """
    rng = np.random.default_rng(0)
    inits = [
        numpy_helper.from_array(rng.standard_normal(s).astype("float32") * 0.2, n)
        for n, s in (
            ("w1", (16, 8, 3, 3)),
            ("w2", (16, 16, 3, 3)),
            ("w3", (16, 16, 3, 3)),
            ("fc", (10, 16 * 16 * 16)),
        )
    ]
    nodes = [
        _conv("conv1", "x", "w1", "a"),
        helper.make_node("Relu", ["a"], ["b"]),
        _conv("conv2", "b", "w2", "c"),
        helper.make_node("Relu", ["c"], ["d"]),
        _conv("conv3", "d", "w3", "e"),
        helper.make_node("Flatten", ["e"], ["f"]),
        helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1),
    ]
    g = helper.make_graph(
        nodes,
        "convs",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(SHAPE))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])],
        inits,
    )
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])


@pytest.fixture(scope="module")
def model() -> tuple[onnx.ModelProto, Any, dict[str, Any]]:
    onnx_model = _model()
    mod, params = from_onnx(onnx_model)
    return onnx_model, mod, params


@pytest.fixture(scope="module")
def tasks(model: tuple[onnx.ModelProto, Any, dict[str, Any]]) -> list[autotvm.task.Task]:
    _, mod, params = model
    found: list[autotvm.task.Task] = autotvm.task.extract_from_program(mod, params, "llvm")
    return found


def _conv_tasks(tasks: list[autotvm.task.Task]) -> list[autotvm.task.Task]:
    return [t for t in tasks if t.args[2] == "nn.conv2d"]


def test_extract_gives_one_task_per_distinct_tunable_workload(
    tasks: list[autotvm.task.Task],
) -> None:
    assert tasks, "the model's convolutions have tunable schedules"
    assert all(t.name.endswith(".x86") and len(t.config_space) > 1 for t in tasks)
    assert len({t.workload for t in tasks}) == len(tasks)
    convs = _conv_tasks(tasks)
    # conv2 and conv3 are one workload; conv1 (8 input channels) comes first
    assert [t.args[0][1] for t in convs] == [(1, 8, 16, 16), (1, 16, 16, 16)]
    for t in tasks:
        assert t.target == Target("llvm") and t.flop and t.flop > 0
        assert t.workload == (t.name, *t.args)


def test_extract_accepts_the_main_function_and_filters_by_operator(
    model: tuple[onnx.ModelProto, Any, dict[str, Any]], tasks: list[autotvm.task.Task]
) -> None:
    _, mod, params = model
    by_name = autotvm.task.extract_from_program(mod["main"], params, "llvm", ops=["nn.conv2d"])
    by_object = autotvm.task.extract_from_program(
        mod, params, Target("llvm"), ops=[get_op("nn.conv2d")]
    )
    expected = [t.workload for t in _conv_tasks(tasks)]
    assert [t.workload for t in by_name] == expected
    assert [t.workload for t in by_object] == expected
    assert autotvm.task.extract_from_program(mod, params, "llvm", ops=["nn.max_pool2d"]) == []


def test_extract_from_multiple_programs_keeps_each_workload_once(
    model: tuple[onnx.ModelProto, Any, dict[str, Any]], tasks: list[autotvm.task.Task]
) -> None:
    _, mod, params = model
    x = relay.var("x", shape=(1, 16, 16, 16))
    w = relay.var("w", shape=(32, 16, 3, 3))
    other = relay.Function([x, w], relay.nn.conv2d(x, w, padding=(1, 1)))
    weights = {"w": np.ones((32, 16, 3, 3), "float32")}
    both = autotvm.task.extract_from_multiple_program(
        [mod, other], [params, weights], "llvm", ops=["nn.conv2d"]
    )
    first = [t.workload for t in _conv_tasks(tasks)]
    assert [t.workload for t in both][: len(first)] == first
    assert [t.args[1][1] for t in both[len(first) :]] == [(32, 16, 3, 3)]


def test_extract_refuses_what_is_not_a_model() -> None:
    with pytest.raises(TVMTypeError, match="graph IRModule"):
        autotvm.task.extract_from_program("model.onnx", {}, "llvm")
    with pytest.raises(TVMValueError, match="one dict"):
        autotvm.task.extract_from_multiple_program([], [{}], "llvm")
    with pytest.raises(TVMTypeError, match="not an operator"):
        TaskExtractEnv(ops=[3])


def test_extract_env_answers_fallbacks_and_records_templates_only() -> None:
    wl = ("conv2d_nchw.x86", ("TENSOR", (1, 1), "float32"), None, "nn.conv2d", (), False)
    with Target("llvm"), TaskExtractEnv() as env:
        cfg = autotvm.DispatchContext.current.query(Target.current(), wl)
        assert cfg.is_fallback
        assert autotvm.DispatchContext.current.query(Target.current(), wl) is cfg
        autotvm.DispatchContext.current.query(Target.current(), ("dense_nopack.x86_64", 1))
        autotvm.DispatchContext.current.query(Target.current(), None)
    assert env.get_tasks() == [("conv2d_nchw.x86", wl[1:])]


def _record(task: autotvm.task.Task, index: int) -> tuple[MeasureInput, MeasureResult]:
    inp = MeasureInput(Target("llvm"), task, task.config_space.get(index))
    return inp, MeasureResult((1e-3,), 0, 0.1, time.time())


def _records(path: Path, task: autotvm.task.Task, index: int) -> Path:
    path.write_text(encode(*_record(task, index)) + "\n")
    return path


def _run(lib: Any, x: np.ndarray) -> np.ndarray:
    m = graph_executor.GraphModule(lib["default"](pytvm.cpu()))
    m.set_input("x", x)
    m.run()
    return m.get_output(0).numpy()


def _distinct_configs(task: autotvm.task.Task) -> tuple[int, int]:
    """Two configurations of ``task`` whose schedules build (a point may be refused)."""
    entry = autotvm.task.task.TASK_TABLE[task.name]
    good = []
    for index in range(len(task.config_space)):
        with Target("llvm"), autotvm.ApplyConfig(task.config_space.get(index)):
            out = entry["compute"](*autotvm.task.deserialize_args(task.args))
            try:
                entry["schedule"]([out])
            except TVMValueError:
                continue
        good.append(index)
        if len(good) == 2:
            return good[0], good[1]
    raise AssertionError(f"{task.name}: fewer than two configurations build")


def test_history_best_applies_at_build_and_never_reuses_a_kernel(
    model: tuple[onnx.ModelProto, Any, dict[str, Any]],
    tasks: list[autotvm.task.Task],
    tmp_path: Path,
) -> None:
    onnx_model, mod, params = model
    task = _conv_tasks(tasks)[1]  # conv2 and conv3
    a, b = _distinct_configs(task)
    x = np.random.default_rng(1).standard_normal(SHAPE).astype("float32")
    (want,) = ort.InferenceSession(onnx_model.SerializeToString()).run(None, {"x": x})
    sources = []
    for i, index in enumerate((a, b)):
        log = _records(tmp_path / f"records{i}.json", task, index)
        with autotvm.apply_history_best(str(log)):
            lib = (
                relay.build(mod, target="llvm", params=params)
                if i
                else graph.build(mod, target="llvm", params=params)
            )
        sources.append(lib.get_lib().get_source())  # type: ignore[attr-defined]
        np.testing.assert_allclose(_run(lib, x), want, rtol=1e-4, atol=1e-4)
    untuned = graph.build(mod, target="llvm", params=params)
    np.testing.assert_allclose(_run(untuned, x), want, rtol=1e-4, atol=1e-4)
    assert sources[0] != sources[1]


def test_compile_engine_cache_keys_on_the_dispatch_context(
    model: tuple[onnx.ModelProto, Any, dict[str, Any]], tasks: list[autotvm.task.Task]
) -> None:
    _, mod, params = model
    task = _conv_tasks(tasks)[1]
    a, b = _distinct_configs(task)
    target = Target("llvm")
    fused = lower_graph(main_function(mod, params), target, PassContext.current()).fused
    calls = [n for n in post_order(fused["main"].body) if isinstance(n, Call)]
    engine = CompileEngine(target)
    lowered = []
    with target:
        for index in (a, b, a):
            with autotvm.apply_history_best([_record(task, index)]):
                lowered.append([engine.lower(c) for c in calls])
                again = [engine.lower(c) for c in calls]
                assert all(x is y for x, y in zip(lowered[-1], again, strict=True))
        untuned = [engine.lower(c) for c in calls]
    # each context lowers its own kernels, even a context equal to an earlier one
    for other in (lowered[1], lowered[2], untuned):
        assert all(x is not y for x, y in zip(lowered[0], other, strict=True))
    assert engine.hits == 3 * len(calls)


def test_untuned_build_logs_no_fallback_warning(
    model: tuple[onnx.ModelProto, Any, dict[str, Any]], caplog: pytest.LogCaptureFixture
) -> None:
    """A strategy row's fallback is its hand-chosen schedule: an untuned build says nothing,
    while a build under records reports each workload they lack.
    """
    _, mod, params = model
    autotvm.DispatchContext.warning_messages.clear()
    with caplog.at_level(logging.WARNING, logger="autotvm"):
        pytvm.graph.build(mod, target="llvm", params=params)
    assert "Cannot find config" not in caplog.text
    autotvm.DispatchContext.warning_messages.clear()
    root = autotvm.DispatchContext.current
    assert isinstance(root, autotvm.FallbackContext)
    with caplog.at_level(logging.WARNING, logger="autotvm"), autotvm.apply_history_best([]):
        root.memory.clear()  # forget the untuned build's fallbacks, as a fresh process would
        pytvm.graph.build(mod, target="llvm", params=params)
    assert "Cannot find config" in caplog.text


def test_extract_refuses_a_target_the_templates_do_not_compile_for(
    model: tuple[onnx.ModelProto, Any, dict[str, Any]],
) -> None:
    _, mod, params = model
    with pytest.raises(TVMValueError, match=r"of kind 'cuda'.*CPU schedules"):
        autotvm.task.extract_from_program(mod, params, "cuda")
