"""Dispatch contexts: the fallback root, nesting, ``ApplyConfig``, subclasses overriding
``_query_inside`` (TVM's ``Int8Fallback`` in its topi tests), and templates registered with
``register_topi_compute``/``register_topi_schedule``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import pytvm
from pytvm import autotvm, te
from pytvm.autotvm.task.space import FallbackConfigEntity, OtherOptionEntity
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target


class _NotFallback(autotvm.FallbackContext):
    """TVM's ``Int8Fallback`` of tests/python/topi/common.py."""

    def _query_inside(self, target: Any, workload: Any) -> Any:
        key = (target, workload)
        if key in self.memory:
            return self.memory[key]
        cfg = FallbackConfigEntity()
        self.memory[key] = cfg
        cfg.is_fallback = False
        return cfg


def test_root_gives_a_cached_fallback_per_workload() -> None:
    with Target("llvm"):
        a = autotvm.DispatchContext.current.query(Target.current(), ("w", 1))
        b = autotvm.DispatchContext.current.query(Target.current(), ("w", 1))
        c = autotvm.DispatchContext.current.query(Target.current(), ("w", 2))
    assert a is b and a is not c and a.is_fallback


def test_subclass_overriding_query_inside_is_used_and_restored() -> None:
    root = autotvm.DispatchContext.current
    with _NotFallback() as ctx:
        assert autotvm.DispatchContext.current is ctx
        assert not autotvm.get_config().is_fallback
        assert len(ctx.memory) == 1
    assert autotvm.DispatchContext.current is root
    assert autotvm.get_config().is_fallback


def test_apply_config_answers_every_query() -> None:
    cfg = FallbackConfigEntity()
    with autotvm.ApplyConfig(cfg) as ctx:
        assert autotvm.DispatchContext.current.query(None, ("x",)) is cfg
    assert ctx.workload == ("x",)


def test_history_best_needs_a_target() -> None:
    with autotvm.ApplyHistoryBest([]), pytest.raises(TVMValueError, match="target"):
        autotvm.DispatchContext.current.query(None, ("x",))


def test_history_best_falls_back_to_the_outer_context() -> None:
    with autotvm.ApplyHistoryBest([]), Target("llvm"):
        assert autotvm.get_config().is_fallback


@autotvm.register_topi_compute("scale.test")
def _scale(cfg: Any, data: Any, factor: float) -> Any:
    cfg.define_knob("twice", [False, True])
    k = factor * (2 if cfg["twice"].val else 1)
    return te.compute(data.shape, lambda *i: data(*i) * k, name="scaled", tag="elemwise")


@autotvm.register_topi_schedule("scale.test")
def _schedule_scale(cfg: Any, outs: Any) -> Any:
    outs = [outs] if isinstance(outs, te.Tensor) else outs
    s = te.create_schedule([t.op for t in outs])
    if cfg["twice"].val:
        s[outs[0]].vectorize(outs[0].op.axis[-1])
    return s


def _run(out: Any, data: Any, sch: Any) -> np.ndarray:
    f = pytvm.build(sch, [data, out], "llvm")
    x = np.arange(8, dtype="float32")
    y = pytvm.nd.array(np.zeros(8, "float32"))
    f(pytvm.nd.array(x), y)
    return y.numpy()


def test_template_records_its_workload_and_reads_the_context_config() -> None:
    A = te.placeholder((8,), name="A")
    with Target("llvm"):
        B = _scale(A, 3.0)
        assert autotvm.task.get_workload(B) == ("scale.test", ("TENSOR", (8,), "float32"), 3.0)
        np.testing.assert_allclose(_run(B, A, _schedule_scale(B)), np.arange(8) * 3.0)
        cfg = FallbackConfigEntity()
        cfg["twice"] = OtherOptionEntity(True)
        with autotvm.ApplyConfig(cfg):
            C = _scale(A, 3.0)
            np.testing.assert_allclose(_run(C, A, _schedule_scale(C)), np.arange(8) * 6.0)


def test_template_rejects_keywords_and_schedule_needs_a_workload() -> None:
    A = te.placeholder((8,), name="A")
    with pytest.raises(TVMValueError, match="positionally"):
        _scale(A, factor=2.0)
    plain = te.compute((8,), lambda i: A[i], name="plain")
    with pytest.raises(TVMValueError, match="workload"):
        _schedule_scale(plain)
