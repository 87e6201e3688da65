"""TVM v0.18's ``autotvm`` package names resolve in pytvm (``autotvm``, ``autotvm.task``,
``autotvm.measure``, ``autotvm.tuner``), the tuning-layer ones on first use, and the builders,
runners and executors derive from TVM's interfaces.
"""

from __future__ import annotations

from pytvm import autotvm


def test_package_roots_have_tvms_names() -> None:
    from pytvm.autotvm.task.dispatcher import ApplyGraphBest, ApplyHistoryBest

    assert autotvm.apply_graph_best is ApplyGraphBest
    assert autotvm.apply_history_best is ApplyHistoryBest
    assert autotvm.create is autotvm.task.create
    assert autotvm.database.DummyDatabase.__name__ == "DummyDatabase"
    assert autotvm.feature.get_itervar_feature.__name__ == "get_itervar_feature"
    assert autotvm.task.ApplyGraphBest is ApplyGraphBest
    assert autotvm.task.TaskExtractEnv.__name__ == "TaskExtractEnv"
    assert callable(autotvm.task.attach_code_hash)
    assert callable(autotvm.task.attach_code_hash_to_arg)
    assert autotvm.tuner.DropletTuner.__name__ == "DropletTuner"


def test_builders_runners_and_executors_derive_from_tvms_interfaces() -> None:
    measure = autotvm.measure
    assert issubclass(measure.LocalBuilder, measure.Builder)
    assert issubclass(measure.RPCRunner, measure.Runner)
    assert issubclass(measure.LocalRunner, measure.Runner)
    assert issubclass(measure.executor.PopenPoolExecutor, measure.Executor)
