"""TopHub reference logs (TVM's ``tophub.load_reference_log``) and
``FallbackConfigEntity.fallback_with_reference_log``: an untuned workload mimics the split sizes
and other knobs of the closest recorded one.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytvm.autotvm import tophub
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.record import encode
from pytvm.autotvm.task import ConfigSpace, FallbackConfigEntity, Task
from pytvm.target import Target


def _space(cfg: ConfigSpace, n: int) -> None:
    cfg.define_split("tile_y", n, num_outputs=2)
    cfg.define_split("tile_x", n, num_outputs=3)
    cfg.define_knob("unroll", [False, True])


def _package(root: Path) -> None:
    space = ConfigSpace()
    _space(space, 64)
    rows = []
    for model, index, name in (("skylake", 5, "mm.x86"), ("skylake", 7, "mm.x86"),
                               ("other", 9, "mm.x86"), ("skylake", 3, "conv.x86")):  # fmt: skip
        config = space.get(index)
        inp = MeasureInput(Target(f"llvm -model={model}"), Task(name, (64,)), config)
        rows.append(encode(inp, MeasureResult((1e-3,), 0, 1.0, 0.0)))
    (root / "llvm_v0.04.log").write_text("\n".join(rows) + "\n")


@pytest.fixture
def tophub_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``tmp_path`` as the TopHub package folder (no ``TOPHUB_LOCATION``, an empty cache)."""
    monkeypatch.setattr(tophub, "AUTOTVM_TOPHUB_ROOT_PATH", tmp_path)
    monkeypatch.delenv("TOPHUB_LOCATION", raising=False)
    monkeypatch.setattr(tophub, "REFERENCE_LOG_CACHE", {})
    return tmp_path


def test_reference_log_filters_by_model_and_template(
    tophub_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert tophub.load_reference_log("llvm", "skylake", "mm.x86") == []  # not on disk
    monkeypatch.setattr(tophub, "REFERENCE_LOG_CACHE", {})
    _package(tophub_root)
    found = tophub.load_reference_log("llvm", "skylake", "mm.x86")
    assert [i.config.index for i, _ in found] == [5, 7]
    # an unknown model falls back to the model with the most records
    assert len(tophub.load_reference_log("llvm", "zen4", "mm.x86")) == 2
    assert [i.task.name for i, _ in tophub.load_reference_log("llvm", "other", "mm.x86")] == [
        "mm.x86"
    ]


def test_fallback_mimics_the_closest_reference(tophub_root: Path) -> None:
    _package(tophub_root)
    ref = tophub.load_reference_log("llvm", "skylake", "mm.x86")
    cfg = FallbackConfigEntity()
    _space(cfg, 128)
    cfg.fallback_with_reference_log(ref)
    # record 5 (tile_y inner 32: 6 of 128's 8 factors) beats record 7 (tile_y inner 1)
    best = next(i.config for i, _ in ref if i.config.index == 5)
    assert cfg["tile_y"].size[1:] == best["tile_y"].size[1:]
    assert cfg["tile_x"].size[1:] == best["tile_x"].size[1:]
    assert cfg["tile_x"].size[0] * cfg["tile_x"].size[1] * cfg["tile_x"].size[2] == 128
    assert cfg["unroll"].val == best["unroll"].val
    untouched = FallbackConfigEntity()
    _space(untouched, 128)
    before = str(untouched)
    untouched.fallback_with_reference_log([])
    assert str(untouched) == before
