"""AutoTVM's JSON-lines tuning log: encoding and decoding rows, and ``ApplyHistoryBest`` picking
the fastest successful record of a workload for the target's keys.
"""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from pytvm import autotvm
from pytvm.autotvm.measure import MeasureInput, MeasureResult
from pytvm.autotvm.record import decode, encode, load_from_file
from pytvm.autotvm.task import ConfigSpace, Task
from pytvm.ffi.errors import TVMValueError
from pytvm.target import Target

_ARGS = (("TENSOR", (4, 8), "float32"), ("TENSOR", (16, 8), "float32"), None, "float32")


def _row(tile: int, cost: float, error_no: int = 0, target: str = "llvm") -> str:
    cfg = ConfigSpace()
    cfg.define_split("tile_x", 16, num_outputs=2)
    point = cfg.get([1, 2, 4, 8, 16].index(tile))
    inp = MeasureInput(Target(target), Task("dense_nopack.x86", _ARGS), point)
    return encode(inp, MeasureResult((cost,), error_no, 1.0, 0.0))


def test_row_round_trips() -> None:
    inp, res = decode(_row(4, 0.5)) or (None, None)
    assert inp is not None and res is not None
    assert inp.task.workload == ("dense_nopack.x86", *_ARGS)
    assert inp.config["tile_x"].size == [-1, 4]
    assert res.costs == (0.5,) and inp.config.cost == 0.5


def test_history_best_keeps_the_fastest_successful_record(tmp_path: Path) -> None:
    log = tmp_path / "tuning.log"
    log.write_text("\n".join([_row(2, 0.3), _row(4, 0.1, error_no=1), _row(8, 0.2)]) + "\n")
    assert len(load_from_file(log)) == 3
    workload = ("dense_nopack.x86", *_ARGS)
    with autotvm.apply_history_best(str(log)), Target("llvm") as tgt:
        cfg = autotvm.DispatchContext.current.query(tgt, workload)
        assert cfg["tile_x"].size == [-1, 8]
        assert autotvm.DispatchContext.current.query(tgt, ("other",)).is_fallback


def test_history_best_reads_an_open_buffer_and_pairs() -> None:
    best = autotvm.ApplyHistoryBest(io.StringIO(_row(2, 0.3)))
    pairs = [decode(_row(16, 0.01))]
    best.load(pairs)
    with Target("llvm") as tgt:
        cfg = best.query(tgt, ("dense_nopack.x86", *_ARGS))
    assert cfg["tile_x"].size == [-1, 16]


def test_rows_for_targets_pytvm_cannot_parse_are_skipped(tmp_path: Path) -> None:
    row = json.loads(_row(2, 0.3))
    row["input"][0] = "sdaccel -keys=fpga"
    log = tmp_path / "gpu.log"
    log.write_text(json.dumps(row) + "\n" + _row(4, 0.2) + "\n")
    assert len(load_from_file(log)) == 1


def test_a_line_that_is_not_a_record_is_an_error() -> None:
    with pytest.raises(TVMValueError, match="not an autotvm JSON record"):
        decode('{"input": 1}')
    with pytest.raises(TVMValueError, match="not an autotvm pickle record"):
        decode("x", protocol="pickle")
