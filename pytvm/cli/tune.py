"""``pytvm tune``: auto-tune an ONNX model's kernels into an AutoTVM log (as ``tvmc tune``).

The measurements are appended to ``--output``, in TVM's JSON-lines format::

    pytvm tune model.onnx --target llvm --trials 200 --output records.json
    pytvm tune model.onnx --target llvm --rpc-tracker 10.0.0.1:9190 --rpc-key x86 \
        --trials 2000 --tuner xgb --early-stopping 100 --output records.json
    pytvm compile model.onnx --target llvm --tuning-records records.json -o net.so

The tasks are the model's tunable workloads (``autotvm.task.extract_from_program``).
``--trials`` is for the whole model, as tvmc's: each task gets ``trials / tasks`` (at least 1,
at most its space). Each candidate is built here (``LocalBuilder``, ``--parallel`` at once)
and timed on a server leased from ``--rpc-tracker`` under ``--rpc-key`` (``RPCRunner``), or,
without a tracker, on a server of this machine (``LocalRunner``).

Tuning resumes: the records already in ``--output`` and in ``--tuning-records`` measured for
the same target are loaded into each task's tuner (``load_history``), so their configurations
are not measured again and count towards the task's trials; a task with all its trials on
record is not tuned again.
"""

from __future__ import annotations

import argparse
import logging
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytvm.ffi.errors import TVMValueError

from ._tune_progress import TaskProgress, TaskSummary, format_table

__all__ = [
    "TUNERS",
    "add_parser",
    "filter_tasks",
    "make_tuner",
    "records_for",
    "run",
    "tune_tasks",
]

logger = logging.getLogger("autotvm")

#: tvmc's ``--tuner`` names: the XGBoost tuner's ``(loss_type, feature_type)`` per name, and
#: the search tuners that need no cost model.
_XGB: dict[str, tuple[str, str]] = {
    f"xgb{'_' + loss.replace('-', '_') if loss != 'reg' else ''}"
    f"{'_' + feature if feature else ''}": (loss, feature or "itervar")
    for loss in ("reg", "rank", "rank-binary")
    for feature in ("", "knob", "itervar", "curve")
}
TUNERS: tuple[str, ...] = ("ga", "gridsearch", "random", *_XGB)


def add_parser(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Register ``tune`` on ``subparsers`` and return its parser."""
    parser = subparsers.add_parser(
        "tune",
        help="auto-tune a model's kernels (AutoTVM)",
        description="Extract an ONNX model's tunable kernels, measure configurations of each "
        "on this machine or on servers of an RPC tracker, and append the measurements to an "
        "AutoTVM log that `pytvm compile --tuning-records` builds with.",
    )
    parser.add_argument("model", help="the ONNX file")
    parser.add_argument("--target", default="llvm", help="compilation target")
    parser.add_argument("--target-host", help="the host compilation target")
    parser.add_argument(
        "-o", "--output", required=True, help="the AutoTVM log to append the measurements to"
    )
    parser.add_argument(
        "--tuning-records",
        metavar="PATH",
        help="an earlier AutoTVM log: its configurations are not measured again",
    )
    parser.add_argument(
        "--rpc-tracker",
        help="host and port (default 9090) of an RPC tracker, e.g. 192.168.0.100:9190; "
        "without it the candidates run on this machine",
    )
    parser.add_argument("--rpc-key", help="the tracker key of the devices (with --rpc-tracker)")
    parser.add_argument(
        "--trials", type=int, default=1000, help="trials for the whole model, split over tasks"
    )
    parser.add_argument(
        "--early-stopping",
        type=int,
        help="stop a task this many trials after its best one (default: never)",
    )
    parser.add_argument("--tuner", choices=TUNERS, default="xgb", help="the search (tvmc's)")
    parser.add_argument(
        "--number", type=int, default=10, help="runs a measurement averages (per repeat)"
    )
    parser.add_argument("--repeat", type=int, default=1, help="measurements per candidate")
    parser.add_argument(
        "--min-repeat-ms",
        type=int,
        help="least time of one repeat in ms (default: 0 on CPU targets, else 1000)",
    )
    parser.add_argument("--timeout", type=int, default=10, help="seconds a build or a run may take")
    parser.add_argument(
        "--parallel", type=int, default=4, help="candidates built (and devices used) at once"
    )
    parser.add_argument(
        "--tasks",
        default="all",
        help="which tasks to tune: all, list (print them), or indices and ranges: 0,2,3-5",
    )
    parser.add_argument(
        "--input-shapes",
        default="",
        help='shapes of inputs with dynamic dimensions: "name:[1,3,224,224] other:[1,10]"',
    )
    return parser


def _tracker(text: str, key: str | None) -> tuple[str, int, str]:
    """``--rpc-tracker`` ``host[:port]`` and ``--rpc-key`` as ``(host, port, key)``."""
    host, sep, port = text.rpartition(":")
    if not sep:
        host, port = text, "9090"
    if not host or not port.isdigit():
        raise TVMValueError(f"--rpc-tracker {text!r}: expected host or host:port")
    if not key:
        raise TVMValueError("--rpc-tracker needs --rpc-key: the key the devices registered with")
    return host, int(port), key


def filter_tasks(tasks: Sequence[Any], expr: str) -> tuple[list[Any], bool]:
    """The tasks tvmc's ``--tasks`` selects, and whether to list them instead of tuning;
    ``expr`` is ``all``, ``list`` or comma-separated indices and ranges (``0,2,3-5``).

    Examples
    --------
    >>> filter_tasks(["a", "b", "c", "d"], "0,2-3")
    (['a', 'c', 'd'], False)
    """
    selected: set[int] = set()
    listing = chosen = False
    for item in (p.strip() for p in expr.split(",")):
        if item in ("list", "help"):
            listing = True
        elif item == "all":
            selected.update(range(len(tasks)))
        else:
            m = re.fullmatch(r"(\d*)-(\d*)|(\d+)", item)
            if m is None:
                raise TVMValueError(f"--tasks {expr!r}: cannot read {item!r}; e.g. 0,2,3-5")
            chosen = True
            lo, hi = (m[3], m[3]) if m[3] else (m[1] or "0", m[2] or str(len(tasks) - 1))
            for end in (lo, hi):
                if not 0 <= int(end) < len(tasks):
                    raise TVMValueError(
                        f"--tasks {expr!r}: task {end} out of range; there are {len(tasks)}"
                    )
            selected.update(range(int(lo), int(hi) + 1))
    if not chosen and not selected:
        selected.update(range(len(tasks)))
    return [t for i, t in enumerate(tasks) if i in selected], listing


def make_tuner(name: str, task: Any) -> Any:
    """The tuner ``--tuner name`` of ``task`` (tvmc's names; ``ga`` with a population of 50)."""
    from pytvm.autotvm import tuner as search

    if name == "ga":
        return search.GATuner(task, pop_size=50)
    if name == "random":
        return search.RandomTuner(task)
    if name == "gridsearch":
        return search.GridSearchTuner(task)
    if name not in _XGB:
        raise TVMValueError(f"--tuner {name!r}: expected one of {', '.join(TUNERS)}")
    from pytvm.autotvm.tuner.xgboost_tuner import XGBTuner

    loss, feature = _XGB[name]
    try:  # xgboost is imported when the cost model is made
        return XGBTuner(task, loss_type=loss, feature_type=feature)
    except ImportError as err:
        raise TVMValueError(
            f"--tuner {name}: {err}; or choose --tuner ga, random or gridsearch"
        ) from None


def _history(paths: Sequence[str | None]) -> list[tuple[Any, Any]]:
    from pytvm.autotvm.record import load_from_file

    records: list[tuple[Any, Any]] = []
    for path in paths:
        if path and Path(path).is_file():
            records += load_from_file(path)
    return records


def records_for(target: Any, records: Sequence[tuple[Any, Any]]) -> list[tuple[Any, Any]]:
    """The records of ``records`` measured for ``target`` (the same target string): a log
    may hold other targets' measurements, which neither resume nor teach this run.
    """
    return [(inp, res) for inp, res in records if str(inp.target) == str(target)]


def _shapes(task: Any) -> str:
    tensors = [a for a in task.args if isinstance(a, tuple) and a and a[0] == "TENSOR"]
    return " x ".join("x".join(str(d) for d in t[1]) for t in tensors) or "-"


def tune_tasks(
    tasks: Sequence[Any],
    log_file: str,
    measure_option: dict[str, Any],
    tuner: str,
    trials: int,
    early_stopping: int | None = None,
    tuning_records: str | None = None,
) -> list[TaskSummary]:
    """Tune each of ``tasks`` with ``--tuner tuner`` for up to ``trials`` trials (at most its
    space), appending the measurements to ``log_file`` (tvmc's ``tune_tasks``); the records of
    ``log_file`` and ``tuning_records`` resume it (see the module). A task's first trial is
    its default configuration (what an untuned build compiles) unless it is on record, so the
    log's best is never slower than the default as measured. Returns a row per task.
    """
    from pytvm.autotvm.tuner.callback import log_to_file

    history = _history([tuning_records, log_file])
    rows: list[TaskSummary] = []
    for i, task in enumerate(tasks):
        prefix = f"[Task {i + 1:2d}/{len(tasks):2d}]"
        search = make_tuner(tuner, task)
        mine = records_for(task.target, history)
        if mine:
            search.load_history(mine)
        seen = {int(inp.config.index) for inp, _ in mine if inp.task.workload == task.workload}
        n_trial = min(trials, len(task.config_space))
        progress = TaskProgress(f"{prefix} {task.name}", n_trial, len(seen), search.best_flops)
        if n_trial - len(seen) > 0:
            search.tune(
                n_trial=n_trial - len(seen),
                measure_option=measure_option,
                early_stopping=early_stopping,
                callbacks=[progress, log_to_file(log_file)],
                default_first=True,
            )
            progress.finish()
        else:
            progress.finish("all trials on record")
        best = search.best_config
        rows.append(
            TaskSummary(
                i,
                task.name,
                _shapes(task),
                progress.done,
                len(task.config_space),
                search.best_flops / 1e9,
                None if best is None else int(best.index),
            )
        )
    return rows


def _measure_option(args: argparse.Namespace, target: Any) -> tuple[dict[str, Any], list[Any]]:
    """TVM's ``measure_option`` for ``args``, and its builder and runner (to close when done)."""
    from pytvm.autotvm.measure import measure_methods as mm

    min_repeat_ms = args.min_repeat_ms
    if min_repeat_ms is None:
        min_repeat_ms = 0 if target.keys[0] == "cpu" else 1000
    timing = {
        "number": args.number,
        "repeat": args.repeat,
        "min_repeat_ms": min_repeat_ms,
        "timeout": args.timeout,
    }
    if args.rpc_tracker:
        host, port, key = _tracker(args.rpc_tracker, args.rpc_key)
        runner = mm.RPCRunner(key, host, port, n_parallel=args.parallel, **timing)
    else:
        runner = mm.LocalRunner(**timing)
    builder = mm.LocalBuilder(timeout=args.timeout, n_parallel=args.parallel)
    return mm.measure_option(builder=builder, runner=runner), [builder, runner]


def run(args: argparse.Namespace) -> int:
    """Tune ``args.model``'s tasks and append the measurements to ``args.output``."""
    from pytvm import autotvm
    from pytvm.target import Target
    from pytvm.transform import PassContext

    from .compile_model import import_model

    logging.basicConfig(level=logging.WARNING, format="%(message)s", stream=sys.stderr)
    start = time.perf_counter()
    for flag, value in (("--trials", args.trials), ("--parallel", args.parallel)):
        if value < 1:
            raise TVMValueError(f"{flag} {value}: expected at least 1")
    if args.rpc_tracker:
        _tracker(args.rpc_tracker, args.rpc_key)
    if args.tuning_records and not Path(args.tuning_records).is_file():
        raise TVMValueError(f"--tuning-records {args.tuning_records}: no such file")
    target, _ = Target.canon_target_and_host(args.target, args.target_host)
    mod, params = import_model(args.model, args.input_shapes)
    with PassContext(opt_level=3):
        tasks = autotvm.task.extract_from_program(mod, params, target, args.target_host)
    tasks, listing = filter_tasks(tasks, args.tasks)
    if listing:
        for i, task in enumerate(tasks):
            print(f"  {i}. {task.name} {_shapes(task)} (len={len(task.config_space)})")
        return 0
    if not tasks:
        print("no tunable tasks in the model", file=sys.stderr)
        return 0
    per_task = max(1, args.trials // len(tasks))
    print(
        f"tuning {len(tasks)} tasks, {per_task} trials each, tuner {args.tuner}, on "
        f"{'tracker ' + args.rpc_tracker if args.rpc_tracker else 'this machine'}",
        file=sys.stderr,
    )
    option, workers = _measure_option(args, target)
    try:
        rows = tune_tasks(
            tasks,
            args.output,
            option,
            args.tuner,
            per_task,
            args.early_stopping,
            args.tuning_records,
        )
    finally:
        for each in workers:  # the builder's worker processes, LocalRunner's tracker and server
            close = getattr(each, "close", None)
            if close is not None:
                close()
    print(format_table(rows))
    print(
        f"wrote {args.output} in {time.perf_counter() - start:.1f} s",
        file=sys.stderr,
    )
    return 0


if __name__ == "__main__":
    from typing import cast

    from pytvm.cli import _command

    # Runs through the shared error handling without importing pytvm.cli.main.
    this = cast(_command.Subcommand, sys.modules[__name__])
    sys.exit(_command.main(["tune", *sys.argv[1:]], [this]))
