"""AutoTVM's tuning log (TVM's ``autotvm.record``): one JSON object per line.

A row: ``{"input": [target, task_name, task_args, task_kwargs], "config": {"index", "code_hash",
"entity"}, "result": [costs, error_no, all_cost, timestamp], "version": 0.2, ...}``.

Only the JSON protocol is read and written (TVM's pickle rows would run code from the log).
A row whose target pytvm cannot parse (a kind or option it does not know) is skipped, with one
warning per file: no target pytvm builds for can ask for it.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..ffi.errors import TVMValueError
from ..target import Target
from .measure.measure import MeasureInput, MeasureResult
from .task.dispatcher import RECORD_READERS
from .task.space import ConfigEntity
from .task.task import Task

__all__ = [
    "AUTOTVM_LOG_VERSION",
    "decode",
    "encode",
    "load_from_buffer",
    "load_from_file",
    "pick_best",
]

AUTOTVM_LOG_VERSION = 0.2
logger = logging.getLogger("autotvm")


class _UnsupportedTarget(TVMValueError):
    """A record's target is one pytvm cannot parse (a GPU, an unknown option)."""


def _hashable(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_hashable(a) for a in x)
    return x


def encode(inp: MeasureInput, result: MeasureResult, protocol: str = "json") -> str:
    """One log row for a measurement."""
    if protocol != "json":
        raise TVMValueError(f"autotvm record protocol {protocol!r}; pytvm writes 'json' only")
    row = {
        "input": [str(inp.target), inp.task.name, inp.task.args, inp.task.kwargs],
        "config": inp.config.to_json_dict(),
        "result": [
            list(result.costs) if result.error_no == 0 else [1e9],
            int(result.error_no),
            result.all_cost,
            result.timestamp,
        ],
        "version": AUTOTVM_LOG_VERSION,
    }
    return json.dumps(row)


def decode(row: str, protocol: str = "json") -> tuple[MeasureInput, MeasureResult] | None:
    """The measurement of a log row (None for a row of the retired 0.1 format).

    Raises TVMValueError for a row that is not a record, or whose target pytvm cannot parse.
    """
    if protocol != "json":
        raise TVMValueError(f"autotvm record protocol {protocol!r}; pytvm reads 'json' only")
    try:
        obj = json.loads(row)
        if obj.get("v") == 0.1:  # noqa: PLR2004
            return None
        target, name, args, _kwargs = obj["input"]
        costs, error_no, all_cost, timestamp = obj["result"]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise TVMValueError(f"not an autotvm JSON record: {row[:120]!r} ({err})") from None
    try:
        tgt = Target(str(target).replace("-target", "-mtriple"))
    except TVMValueError as err:
        raise _UnsupportedTarget(f"autotvm record for target {target!r}: {err}") from None
    config = ConfigEntity.from_json_dict(obj["config"])
    result = MeasureResult(tuple(costs), int(error_no), float(all_cost), float(timestamp))
    config.cost = float(np.mean(result.costs))
    return MeasureInput(tgt, Task(str(name), _hashable(args)), config), result


def _decode_rows(rows: Iterable[str], where: str) -> Iterator[tuple[MeasureInput, MeasureResult]]:
    skipped = 0
    for line in rows:
        if not line.strip():
            continue
        try:
            rec = decode(line)
        except _UnsupportedTarget:
            skipped += 1
            continue
        if rec is not None:
            yield rec
    if skipped:
        logger.warning(
            "%s: skipped %d records for targets pytvm cannot compile for", where, skipped
        )


def load_from_buffer(file: TextIO) -> list[tuple[MeasureInput, MeasureResult]]:
    """The measurements of an open log."""
    return list(_decode_rows(file, getattr(file, "name", "<buffer>")))


def load_from_file(
    filename: str | bytes | os.PathLike[str],
) -> list[tuple[MeasureInput, MeasureResult]]:
    """The measurements of a log file."""
    path = Path(os.fsdecode(filename))
    with path.open(encoding="utf-8") as f:
        return list(_decode_rows(f, str(path)))


RECORD_READERS.update(file=load_from_file, buffer=load_from_buffer)


def pick_best(in_file: str | os.PathLike[str], out_file: str | os.PathLike[str] | TextIO) -> None:
    """Write to ``out_file`` the fastest successful record of each workload of each target in
    ``in_file`` (TVM's ``pick_best``: what ``apply_history_best`` would pick, for any of the
    targets). When ``out_file`` is a path that exists, its records compete too and are replaced.
    """
    records = load_from_file(in_file)
    if isinstance(out_file, (str, os.PathLike)) and Path(out_file).is_file():
        records += load_from_file(out_file)
    best: dict[str, tuple[float, str]] = {}
    for inp, res in records:
        if res.error_no != 0:
            continue
        key = json.dumps([str(inp.target), inp.task.name, inp.task.args], default=str)
        cost = float(np.mean(res.costs))
        if key not in best or cost < best[key][0]:
            best[key] = (cost, encode(inp, res))
    logger.info("picked %d best records of %d from %s", len(best), len(records), in_file)
    text = "".join(row + "\n" for _, row in best.values())
    if isinstance(out_file, (str, os.PathLike)):
        Path(out_file).write_text(text, encoding="utf-8")
    else:
        out_file.write(text)
