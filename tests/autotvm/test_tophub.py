"""TopHub without a network: a context with no records (templates fall back), a package on
disk is loaded, and ``TOPHUB_LOCATION=NONE`` turns it off.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pytvm import autotvm
from pytvm.autotvm import tophub
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.record import encode
from pytvm.autotvm.task import ConfigSpace, Task
from pytvm.target import Target


def test_missing_package_gives_an_empty_context_and_one_log_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(tophub, "AUTOTVM_TOPHUB_ROOT_PATH", tmp_path)
    monkeypatch.delenv("TOPHUB_LOCATION", raising=False)
    with caplog.at_level(logging.WARNING, logger="autotvm"):
        for _ in range(2):
            with tophub.context("llvm"), Target("llvm"):
                assert autotvm.get_config().is_fallback
    assert sum("llvm_v0.04.log" in r.getMessage() for r in caplog.records) == 1


def test_package_on_disk_is_loaded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tophub, "AUTOTVM_TOPHUB_ROOT_PATH", tmp_path)
    monkeypatch.delenv("TOPHUB_LOCATION", raising=False)
    cfg = ConfigSpace()
    cfg.define_knob("unroll_kw", [True, False])
    task = Task("conv.test", (1, 2))
    row = encode(MeasureInput(Target("llvm"), task, cfg.get(1)), MeasureResult((1e-3,), 0, 1, 0))
    (tmp_path / "llvm_v0.04.log").write_text(row + "\n")
    ctx = tophub.context(Target("llvm"))
    assert isinstance(ctx, autotvm.ApplyHistoryBest)
    with ctx, Target("llvm") as tgt:
        assert ctx.query(tgt, task.workload)["unroll_kw"].val is False


def test_none_location_turns_tophub_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOPHUB_LOCATION", "NONE")
    assert isinstance(tophub.context("llvm"), tophub.EmptyContext)
