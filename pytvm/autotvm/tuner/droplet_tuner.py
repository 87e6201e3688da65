"""The droplet tuner (TVM's ``autotvm.tuner.DropletTuner``): a descent over knob indices.

A point of the space is a vector of knob indices. From the best point so far, the tuner
proposes its neighbours at distance ``d`` along every direction that moves a non-empty subset of
knobs by ``+d`` or ``-d`` each (an index past a knob's last value wraps around, one below 0
stays at 0). It starts at ``d = 1``; while a batch cannot be filled it widens ``d`` by ``step``
up to the largest knob size. A measured point becomes the best when its mean time is lower and
Student's two-sample t-test says the two samples differ (p-value at most ``pvalue``; a sample of
one time always counts as different); the search then restarts from it at ``d = 1``. Visited
points and points a ``multi_filter`` leaves out are never proposed. The tuning ends when no
neighbour is left, or after four batches of failed measurements in a row.
"""

from __future__ import annotations

import logging
import math
import os
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..measure.measure import MeasureInput, MeasureResult
from .tuner import Tuner

__all__ = ["DropletTuner", "ttest_pvalue"]

logger = logging.getLogger("autotvm")

#: Relative precision of the continued fraction.
_EPS = 1e-14

#: Failed batches in a row after which the tuning stops (TVM's ``iter > 3``).
_MAX_FAILED_BATCHES = 4


def _betacf(a: float, b: float, x: float) -> float:
    """The continued fraction of the regularized incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 300):
        m2 = 2 * m
        for aa in (m * (b - m) * x / ((qam + m2) * (a + m2)),
                   -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):  # fmt: skip
            d = 1.0 + aa * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + aa / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < _EPS:
            break
    return h


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function ``I_x(a, b)`` for ``0 <= x <= 1``."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
    front = math.exp(log_front + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def ttest_pvalue(sample_a: Sequence[float], sample_b: Sequence[float]) -> float:
    """The two-sided p-value of Student's t-test that two samples (pooled variance, each of at
    least two values) have the same mean (what ``scipy.stats.ttest_ind`` returns).

    Examples
    --------
    >>> round(ttest_pvalue([1.0, 2.0, 3.0], [1.0, 2.0, 3.0]), 6)
    1.0
    """
    a, b = np.asarray(sample_a, dtype="float64"), np.asarray(sample_b, dtype="float64")
    if a.size < 2 or b.size < 2:  # noqa: PLR2004 (a variance needs two values)
        raise TVMValueError(
            f"ttest_pvalue: samples of {a.size} and {b.size} values; each needs at least 2"
        )
    df = a.size + b.size - 2
    pooled = ((a.size - 1) * a.var(ddof=1) + (b.size - 1) * b.var(ddof=1)) / df
    diff = float(a.mean() - b.mean())
    if pooled == 0.0:
        return 1.0 if diff == 0.0 else 0.0
    t = diff / math.sqrt(pooled * (1.0 / a.size + 1.0 / b.size))
    return _betainc(df / 2.0, 0.5, df / (df + t * t))


class DropletTuner(Tuner):
    """Tune by the droplet descent over knob indices (see the module).

    ``start_position``: the knob indices to start from (all 0 by default); ``pvalue``: the
    t-test's significance level for a faster point to become the best.
    """

    def __init__(
        self, task: Any, start_position: Sequence[int] | None = None, pvalue: float = 0.05
    ) -> None:
        super().__init__(task)
        self.dims: list[int] = list(self.space.dims) or [1]
        start = [0] * len(self.dims) if start_position is None else [int(v) for v in start_position]
        if len(start) != len(self.dims) or not all(
            0 <= v < d for v, d in zip(start, self.dims, strict=True)
        ):
            raise TVMValueError(
                f"DropletTuner: start_position {start} does not fit the knob sizes {self.dims}"
            )
        if not 0.0 < pvalue < 1.0:
            raise TVMValueError(f"DropletTuner: pvalue {pvalue}; expected 0 < pvalue < 1")
        #: (index, knob indices, times) of the best point; index -1 before any measurement.
        self.best_choice: tuple[int, list[int], list[float]] = (-1, [0] * len(self.dims), [99999])
        self.execution, self.total_execution, self.pvalue = 1, max(self.dims), pvalue
        self.step, self.iter, self.batch = 1, 0, max(16, os.cpu_count() or 1)
        point = self.space.knob2point(start)
        self._proposed: dict[int, list[int]] = {}
        self.next: list[tuple[int, list[int]]] = []
        if self.space.is_index_valid(point):
            self.visited.add(point)
            self.next.append((point, start))
        else:  # a start the multi filter leaves out: begin with its valid neighbours
            self.best_choice = (-1, start, [99999])
            self.next = self.next_pos(self.search_space())
            self.speculation()

    def num_to_bin(self, value: int, factor: int = 1) -> list[int]:
        """The bits of ``value`` (one per knob, most significant first) times ``factor``."""
        n = len(self.dims)
        return [factor * ((value >> (n - 1 - i)) & 1) for i in range(n)]

    def search_space(self, factor: int = 1) -> list[list[int]]:
        """Every direction at distance ``factor``: each non-empty subset of knobs moved by
        ``+factor`` and by ``-factor``.
        """
        out: list[list[int]] = []
        for mask in range(2 ** len(self.dims) - 1, 0, -1):
            out += [self.num_to_bin(mask, factor), self.num_to_bin(mask, -factor)]
        return out

    def next_pos(self, new_positions: Iterable[Sequence[int]]) -> list[tuple[int, list[int]]]:
        """The unvisited valid points the best point reaches along ``new_positions`` (marked
        visited), a batch's worth at most.
        """
        found: list[tuple[int, list[int]]] = []
        best = self.best_choice[1]
        for move in new_positions:
            if len(found) > self.batch:
                break
            knob = [
                (x + y) % self.dims[i] if x + y > 0 else 0
                for i, (x, y) in enumerate(zip(move, best, strict=True))
            ]
            point = self.space.knob2point(knob)
            if point not in self.visited and self.space.is_index_valid(point):
                self.visited.add(point)
                found.append((point, knob))
        return found

    def p_value(self, elem_1: Sequence[float], elem_2: Sequence[float]) -> bool:
        """Whether two samples of times differ significantly (always, for a sample of one)."""
        if len(elem_1) <= 1 or len(elem_2) <= 1:
            return True
        return ttest_pvalue(elem_1, elem_2) <= self.pvalue

    def speculation(self) -> None:
        """Widen the distance until the pending points fill a batch (or no knob is that big)."""
        while len(self.next) < self.batch and self.execution < self.total_execution:
            self.execution += self.step
            self.next += self.next_pos(self.search_space(self.execution))

    def has_next(self) -> bool:
        """Whether a point is pending."""
        return len(self.next) > 0

    def next_batch(self, batch_size: int) -> list[Any]:
        """Up to ``batch_size`` pending points, as configurations."""
        self.batch = batch_size
        taken, self.next = self.next[:batch_size], self.next[batch_size:]
        self._proposed = dict(taken)
        return [self.space.get(point) for point, _ in taken]

    def update(self, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]) -> None:
        """Move the best point to a significantly faster measured one; plan the next points."""
        proposed = self._proposed
        found_best, valid = False, 0
        for inp, res in zip(inputs, results, strict=True):
            if res.error_no != 0:
                continue
            valid += 1
            costs = [float(c) for c in res.costs]
            if np.mean(self.best_choice[2]) > np.mean(costs) and self.p_value(
                self.best_choice[2], costs
            ):
                point = int(inp.config.index)
                knob = proposed.get(point) or self.space.point2knob(point)
                self.best_choice = (point, list(knob), costs)
                found_best = True
        self.iter = 0 if valid else self.iter + 1
        if found_best:
            self.next += self.next_pos(self.search_space())
            self.execution = 1
        self.speculation()
        if self.iter >= _MAX_FAILED_BATCHES:
            logger.warning(
                "DropletTuner: stopping after %d batches in a row without a valid measurement",
                self.iter,
            )
            self.next = []

    def load_history(
        self, data_set: Iterable[tuple[MeasureInput, MeasureResult]], min_seed_records: int = 500
    ) -> None:
        """Resume (see ``Tuner.load_history``): recorded points are not proposed again, and the
        descent restarts from the fastest recorded one.
        """
        data = list(data_set)
        super().load_history(data, min_seed_records)
        workload = self.task.workload
        recorded = {int(inp.config.index) for inp, _ in data if inp.task.workload == workload}
        self.next = [entry for entry in self.next if entry[0] not in recorded]
        if self.best_measure_pair is not None:
            inp, res = self.best_measure_pair
            point = int(inp.config.index)
            costs = [float(c) for c in res.costs]
            self.best_choice = (point, self.space.point2knob(point), costs)
            self.execution = 1
            self.next += self.next_pos(self.search_space())
        self.speculation()
