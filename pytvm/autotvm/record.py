"""AutoTVM's tuning log (TVM's ``autotvm.record``): one JSON object per line.

A row: ``{"input": [target, task_name, task_args, task_kwargs], "config": {"index", "code_hash",
"entity"}, "result": [costs, error_no, all_cost, timestamp], "version": 0.2, ...}``.

The ``pickle`` protocol writes TVM's tab-separated row (target, base64 pickles of the task
``[name, args, kwargs]``, of the configuration and of the result, version); the configuration is
pickled as its JSON dictionary, and rows are read back with an unpickler that loads no class at
all, so a log cannot run code (a row TVM wrote, which pickles TVM's classes, is refused with an
error saying so).
A row whose target pytvm cannot parse (a kind or option it does not know) is skipped, with one
warning per file: no target pytvm builds for can ask for it.
"""

from __future__ import annotations

import base64
import io
import json
import logging
import os
import pickle
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

import numpy as np

from ..ffi.errors import TVMValueError
from ..target import Target
from .measure.measure import MeasureInput, MeasureResult
from .task.dispatcher import RECORD_READERS, ApplyHistoryBest
from .task.space import ConfigEntity
from .task.task import Task

__all__ = [
    "AUTOTVM_LOG_VERSION",
    "ApplyHistoryBest",
    "decode",
    "encode",
    "load_from_buffer",
    "load_from_file",
    "measure_str_key",
    "pick_best",
    "split_workload",
]

AUTOTVM_LOG_VERSION = 0.2
logger = logging.getLogger("autotvm")


class _UnsupportedTarget(TVMValueError):
    """A record's target is one pytvm cannot parse (a GPU, an unknown option)."""


def _hashable(x: Any) -> Any:
    if isinstance(x, list):
        return tuple(_hashable(a) for a in x)
    return x


def measure_str_key(inp: MeasureInput, include_config: bool = True) -> str:
    """A string naming a measurement: target, task name, args, kwargs and (by default) the
    configuration (TVM's key for telling measurements apart).
    """
    config = str(inp.config) if include_config else ""
    return f"{inp.target}{inp.task.name}{inp.task.args}{inp.task.kwargs}{config}"


def _result_fields(result: MeasureResult) -> list[Any]:
    costs = [float(c) for c in result.costs] if result.error_no == 0 else [1e9]
    return [costs, int(result.error_no), float(result.all_cost), float(result.timestamp)]


def _b64_pickle(obj: Any) -> str:
    return base64.b64encode(pickle.dumps(obj)).decode()


class _PlainUnpickler(pickle.Unpickler):
    """Loads plain data only (numbers, strings, lists, tuples, dicts): no class, no call."""

    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(
            f"autotvm pickle record refers to {module}.{name}; pytvm's pickle rows hold plain "
            "data only (a row TVM wrote pickles TVM's classes: convert the log to JSON with TVM)"
        )


def _b64_unpickle(text: str) -> Any:
    return _PlainUnpickler(io.BytesIO(base64.b64decode(text, validate=True))).load()


def encode(inp: MeasureInput, result: MeasureResult, protocol: str = "json") -> str:
    """One log row for a measurement (``protocol``: ``"json"`` or ``"pickle"``, see the
    module).
    """
    if protocol == "json":
        row = {
            "input": [str(inp.target), inp.task.name, inp.task.args, inp.task.kwargs],
            "config": inp.config.to_json_dict(),
            "result": _result_fields(result),
            "version": AUTOTVM_LOG_VERSION,
        }
        return json.dumps(row)
    if protocol == "pickle":
        return "\t".join([
            str(inp.target),
            _b64_pickle([inp.task.name, inp.task.args, inp.task.kwargs]),
            _b64_pickle(inp.config.to_json_dict()),
            _b64_pickle(tuple(_result_fields(result))),
            str(AUTOTVM_LOG_VERSION),
        ])  # fmt: skip
    raise TVMValueError(f"autotvm record protocol {protocol!r}; expected 'json' or 'pickle'")


def _parse_target(target: Any) -> Target:
    try:
        return Target(str(target).replace("-target", "-mtriple"))
    except TVMValueError as err:
        raise _UnsupportedTarget(f"autotvm record for target {target!r}: {err}") from None


def _measurement(
    target: Any, name: Any, args: Any, config_dict: Any, result: Any
) -> tuple[MeasureInput, MeasureResult]:
    tgt = _parse_target(target)
    config = ConfigEntity.from_json_dict(config_dict)
    costs, error_no, all_cost, timestamp = result
    res = MeasureResult(tuple(costs), int(error_no), float(all_cost), float(timestamp))
    config.cost = float(np.mean(res.costs))
    return MeasureInput(tgt, Task(str(name), _hashable(args)), config), res


def _decode_pickle(row: str) -> tuple[MeasureInput, MeasureResult] | None:
    items = row.rstrip("\n").split("\t")
    if len(items) == 4:  # noqa: PLR2004 (the retired 0.1 row has no version field)
        return None
    try:
        target, task_b64, config_b64, result_b64, _version = items
        name, args, _kwargs = _b64_unpickle(task_b64)
        config_dict = _b64_unpickle(config_b64)
        result = _b64_unpickle(result_b64)
    except (ValueError, TypeError, pickle.UnpicklingError, EOFError) as err:
        raise TVMValueError(f"not an autotvm pickle record: {row[:120]!r} ({err})") from None
    return _measurement(target, name, args, config_dict, result)


def decode(row: str, protocol: str = "json") -> tuple[MeasureInput, MeasureResult] | None:
    """The measurement of a log row (None for a row of the retired 0.1 format).

    Raises TVMValueError for a row that is not a record, or whose target pytvm cannot parse.
    """
    if protocol == "pickle":
        return _decode_pickle(row)
    if protocol != "json":
        raise TVMValueError(f"autotvm record protocol {protocol!r}; expected 'json' or 'pickle'")
    try:
        obj = json.loads(row)
        if obj.get("v") == 0.1:  # noqa: PLR2004
            return None
        target, name, args, _kwargs = obj["input"]
        result = obj["result"]
        config_dict = obj["config"]
    except (ValueError, KeyError, TypeError, AttributeError) as err:
        raise TVMValueError(f"not an autotvm JSON record: {row[:120]!r} ({err})") from None
    return _measurement(target, name, args, config_dict, result)


def split_workload(in_file: str | os.PathLike[str], clean: bool = True) -> None:
    """Split a log into one file per workload and target, ``<in_file>.000.wkl``,
    ``<in_file>.001.wkl``, ... in first-seen order (TVM's); with ``clean``, a measurement
    repeated in the log (same ``measure_str_key``) is written once.
    """
    by_workload: dict[str, list[tuple[MeasureInput, MeasureResult]]] = {}
    for inp, res in load_from_file(in_file):
        by_workload.setdefault(measure_str_key(inp, False), []).append((inp, res))
    for i, (key, rows) in enumerate(by_workload.items()):
        kept = rows
        if clean:
            unique = {measure_str_key(r[0]): r for r in reversed(rows)}
            kept = [r for r in rows if unique.get(measure_str_key(r[0])) is r]
        logger.info("Key: %s\tValid: %d\tDup: %d", key, len(kept), len(rows) - len(kept))
        text = "".join(encode(inp, res) + "\n" for inp, res in kept)
        Path(f"{os.fspath(in_file)}.{i:03d}.wkl").write_text(text, encoding="utf-8")


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
