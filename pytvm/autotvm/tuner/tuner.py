"""The tuning loop every AutoTVM tuner shares (TVM's ``autotvm.tuner.Tuner``).

A tuner proposes configurations of its task's space (``next_batch``), has them measured, and
learns from the results (``update``). ``tune`` runs that loop: it measures at most ``n_trial``
configurations, stops ``early_stopping`` trials after the best so far was found, keeps the best
(``best_config``, ``best_flops``, ``best_measure_pair``) and calls each callback with
``(tuner, inputs, results)`` after each batch.

A configuration is scored by FLOPS: the task's FLOP count (``task.flop``, else its space's
``flop``; 1 when neither is known, so the score orders by speed) over its mean run time.

Measuring goes through ``measure.measure_methods.create_measure_batch`` (builder + runner).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMError, TVMValueError
from ..env import GLOBAL_SCOPE
from ..measure.measure import MeasureInput, MeasureResult
from ..measure.measure_methods import create_measure_batch
from ..task.space import FallbackConfigEntity

__all__ = [
    "Callback",
    "MeasureBatch",
    "Tuner",
    "create_measure_batch",
    "default_config",
    "format_si_prefix",
]

logger = logging.getLogger("autotvm")

#: Measures a batch of inputs, one result each, in order.
MeasureBatch = Callable[[Sequence[MeasureInput]], Sequence[MeasureResult]]
#: Called after each batch with ``(tuner, inputs, results)``.
Callback = Callable[["Tuner", Sequence[MeasureInput], Sequence[MeasureResult]], None]

_SI_PREFIXES = {"E": 18, "P": 15, "T": 12, "G": 9, "M": 6, "K": 3, "": 0, "m": -3, "u": -6, "n": -9}


def format_si_prefix(x: float, si_prefix: str) -> float:
    """``x`` in units of ``si_prefix`` (TVM's ``autotvm.utils.format_si_prefix``).

    Examples
    --------
    >>> format_si_prefix(2.5e9, "G")
    2.5
    """
    if si_prefix not in _SI_PREFIXES:
        raise TVMValueError(
            f"si_prefix {si_prefix!r} is not an SI prefix; expected one of {list(_SI_PREFIXES)}"
        )
    return float(x) / float(10.0 ** _SI_PREFIXES[si_prefix])


def _same_entity(a: Any, b: Any) -> bool:
    """Whether two knob entities choose the same thing (split sizes, option, order, ...)."""
    return all(
        getattr(a, attr, None) == getattr(b, attr, None) for attr in ("size", "val", "perm", "anns")
    )


def default_config(task: Any) -> Any:
    """The point of ``task``'s space that is its template's default: the knobs its fallback
    configuration takes (an untuned build's), or None when the space does not hold them (or
    the template fails on the fallback).
    """
    space = task.config_space
    fallback = FallbackConfigEntity()
    try:
        task.instantiate(fallback)
    except TVMError:
        return None
    knob = []
    for name, transform in space.space_map.items():
        chosen = fallback._entity_map.get(name)
        pos = next((p for p in range(len(transform)) if _same_entity(transform[p], chosen)), None)
        if chosen is None or pos is None:
            return None
        knob.append(pos)
    point = space.knob2point(knob)
    return space.get(point) if space.is_index_valid(point) else None


def _flop_of(task: Any) -> float:
    flop = getattr(task, "flop", None) or getattr(task.config_space, "flop", None)
    return float(flop) if flop else 1.0


def score(inp: MeasureInput, res: MeasureResult) -> float:
    """FLOPS of a measurement (0 for a failed one)."""
    if res.error_no != 0:
        return 0.0
    return _flop_of(inp.task) / float(np.mean(res.costs))


class Tuner:
    """Base of the tuners: subclasses define ``has_next``, ``next_batch`` and ``update``.

    ``visited`` holds the indices of the configurations proposed or already measured (including
    those read by :meth:`load_history`); no tuner proposes one of them again.
    """

    def __init__(self, task: Any, **kwargs: Any) -> None:
        self.param = kwargs
        self.task = task
        self.space = task.config_space
        if self.space is None:
            raise TVMValueError(
                f"task {task.name!r} has no config_space; create it from its template first"
            )
        self.visited: set[int] = set()
        self.best_config: Any = None
        self.best_flops = 0.0
        self.best_measure_pair: tuple[MeasureInput, MeasureResult] | None = None
        self.best_iter = 0
        self.error_ct_threshold = 150
        self.ttl: int | None = None
        self.n_trial: int | None = None
        self.early_stopping: int | None = None

    def has_next(self) -> bool:
        """Whether there is a configuration left to propose."""
        raise NotImplementedError

    def next_batch(self, batch_size: int) -> list[Any]:
        """Up to ``batch_size`` configurations never proposed before."""
        raise NotImplementedError

    def update(self, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]) -> None:
        """Learn from measured ``inputs`` and their ``results`` (nothing by default)."""

    def tune(
        self,
        n_trial: int,
        measure_option: dict[str, Any],
        early_stopping: int | None = None,
        callbacks: Iterable[Callback] = (),
        si_prefix: str = "G",
        *,
        default_first: bool = False,
    ) -> None:
        """Measure up to ``n_trial`` configurations, stopping ``early_stopping`` trials after
        the best one (see the module).

        ``default_first`` (pytvm's): the first trial is the template's default configuration
        (:func:`default_config`, what an untuned build compiles) unless it is on record, so the
        records' best is never a configuration measured slower than the default.
        """
        format_si_prefix(0, si_prefix)
        measure_batch = create_measure_batch(self.task, measure_option)
        n_parallel = int(getattr(measure_batch, "n_parallel", 1))
        stop_after = early_stopping if early_stopping is not None else 10**9
        self.n_trial, self.early_stopping = n_trial, stop_after
        callbacks = list(callbacks)
        old_level = logger.level
        GLOBAL_SCOPE.in_tuning = True
        i = error_ct = 0
        pending = self._default_pending(default_first and n_trial > 0)
        try:
            while i < n_trial and (pending or self.has_next()):
                # the default is measured alone, outside the tuner's own proposals
                configs = (
                    [pending.pop()] if pending else self.next_batch(min(n_parallel, n_trial - i))
                )
                if not configs:
                    break
                inputs = [MeasureInput(self.task.target, self.task, c) for c in configs]
                results = list(measure_batch(inputs))
                for k, (inp, res) in enumerate(zip(inputs, results, strict=True)):
                    flops = score(inp, res)
                    error_ct = 0 if res.error_no == 0 else error_ct + 1
                    if flops > self.best_flops:
                        self.best_flops, self.best_config = flops, inp.config
                        self.best_measure_pair, self.best_iter = (inp, res), i + k
                    logger.debug(
                        "No: %d\t%sFLOPS: %.2f/%.2f\tresult: %s\t%s",
                        i + k + 1,
                        si_prefix,
                        format_si_prefix(flops, si_prefix),
                        format_si_prefix(self.best_flops, si_prefix),
                        res,
                        inp.config,
                    )
                i += len(results)
                self.ttl = min(stop_after + self.best_iter, n_trial) - i
                self.update(inputs, results)
                for callback in callbacks:
                    callback(self, inputs, results)
                if i >= self.best_iter + stop_after:
                    logger.debug("Early stopped. Best iter: %d.", self.best_iter)
                    break
                if error_ct > self.error_ct_threshold:
                    logger.warning("Too many errors happen in the tuning. Switching to debug mode.")
                    logger.setLevel(logging.DEBUG)
                else:
                    logger.setLevel(old_level)
        finally:
            GLOBAL_SCOPE.in_tuning = False
            logger.setLevel(old_level)

    def _default_pending(self, wanted: bool) -> list[Any]:
        """The default configuration, marked visited, when ``wanted`` and not on record (nor
        unknown).
        """
        default = default_config(self.task) if wanted else None
        if default is None or int(default.index) in self.visited:
            return []
        self.visited.add(int(default.index))
        return [default]

    def reset(self) -> None:
        """Forget the best configuration."""
        self.best_config, self.best_flops, self.best_measure_pair = None, 0.0, None

    def load_history(
        self, data_set: Iterable[tuple[MeasureInput, MeasureResult]], min_seed_records: int = 500
    ) -> None:
        """Resume from earlier measurements (``record.load_from_file``'s pairs): those of this
        task's workload are marked visited, so they are not measured again, and the fastest
        becomes the best so far. ``min_seed_records`` is TVM's (for model-based tuners).
        """
        del min_seed_records
        workload = self.task.workload
        for inp, res in data_set:
            if inp.task.workload != workload:
                continue
            self.visited.add(int(inp.config.index))
            flops = score(MeasureInput(inp.target, self.task, inp.config), res)
            if flops > self.best_flops:
                self.best_flops, self.best_config = flops, inp.config
                self.best_measure_pair = (inp, res)

    def set_error_threshold(self, threshold: int) -> None:
        """Switch to debug logging after ``threshold`` failed measurements in a row."""
        self.error_ct_threshold = threshold
