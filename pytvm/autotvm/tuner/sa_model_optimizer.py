"""Simulated annealing over a cost model (TVM's ``autotvm.tuner.SimulatedAnnealingOptimizer``).

``parallel_size`` walkers start at random points (or, ``persistent``, where the previous search
left them). Each round every walker proposes a neighbour (one knob changed,
``model_based_tuner.random_walk``), the model scores all proposals in one batch, and a walker
moves with probability ``exp(min((new - old) / t, 1))``; the temperature ``t`` cools linearly
from ``temp[0]`` to ``temp[1]`` over ``n_iter`` rounds. A heap keeps the ``num`` best points
seen outside ``exclusive``; the search stops after ``n_iter`` rounds or ``early_stop`` rounds
without a change of the heap. Points scored below 0 are not returned (as TVM's).
"""

from __future__ import annotations

import heapq
import logging
import time
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from .model_based_tuner import CostModel, ModelOptimizer, knob_dims, random_walk, sample_ints

__all__ = ["SimulatedAnnealingOptimizer"]

logger = logging.getLogger("autotvm")


class SimulatedAnnealingOptimizer(ModelOptimizer):
    """Parallel simulated annealing (see the module); ``seed`` (pytvm's) fixes the walk."""

    def __init__(
        self,
        task: Any,
        n_iter: int = 500,
        temp: float | tuple[float, float] = (1, 0),
        persistent: bool = True,
        parallel_size: int = 128,
        early_stop: int | None = 50,
        log_interval: int = 50,
        seed: int | None = None,
    ) -> None:
        if n_iter < 0 or parallel_size < 1:
            raise TVMValueError(
                f"SimulatedAnnealingOptimizer: n_iter={n_iter}, parallel_size={parallel_size}; "
                "expected n_iter >= 0 and parallel_size >= 1"
            )
        self.task = task
        self.space_len = len(task.config_space)
        self.dims = knob_dims(task.config_space)
        self.n_iter = n_iter
        self.temp = temp
        self.persistent = persistent
        self.parallel_size = min(parallel_size, self.space_len)
        self.early_stop = early_stop or 10**9
        self.log_interval = log_interval
        self.rng = np.random.default_rng(seed)
        self.points: np.ndarray | None = None
        #: Whether the space has a multi filter (some indices are not valid points).
        self._filtered = task.config_space.range_length != self.space_len

    def _sample(self) -> np.ndarray:
        """``parallel_size`` distinct valid points at random."""
        space = self.task.config_space
        if not self._filtered:
            return sample_ints(self.parallel_size, self.space_len, self.rng)
        valid = [i for i in range(space.range_length) if space.is_index_valid(i)]
        return self.rng.permutation(np.array(valid, dtype=np.int64))[: self.parallel_size]

    def find_maximums(self, model: CostModel, num: int, exclusive: set[int]) -> list[int]:
        """Up to ``num`` points outside ``exclusive`` with the highest predicted scores."""
        tic = time.time()
        space = self.task.config_space
        if self.persistent and self.points is not None:
            points = self.points
        else:
            points = self._sample()
        scores = np.asarray(model.predict(points), dtype="float64")

        heap: list[tuple[float, int]] = [(-np.inf, -1 - i) for i in range(num)]
        heapq.heapify(heap)
        in_heap = set(exclusive) | {p for _, p in heap}

        def offer(s: float, p: int) -> bool:
            if s > heap[0][0] and p not in in_heap:
                popped = heapq.heapreplace(heap, (s, p))
                in_heap.discard(popped[1])
                in_heap.add(p)
                return True
            return False

        for s, p in zip(scores, points, strict=True):
            offer(float(s), int(p))

        if isinstance(self.temp, tuple | list | np.ndarray):
            t, cool = float(self.temp[0]), (self.temp[0] - self.temp[1]) / (self.n_iter + 1)
        else:
            t, cool = float(self.temp), 0.0
        k = k_last_modify = 0
        while k < self.n_iter and k < k_last_modify + self.early_stop:
            new_points = np.array([random_walk(int(p), self.dims, self.rng) for p in points])
            if self._filtered:  # a walk onto a point the multi filter leaves out stays put
                keep = np.array([space.is_index_valid(int(p)) for p in new_points])
                new_points = np.where(keep, new_points, points)
            new_scores = np.asarray(model.predict(new_points), dtype="float64")
            ac_prob = np.exp(np.minimum((new_scores - scores) / (t + 1e-5), 1))
            accept = self.rng.random(len(ac_prob)) < ac_prob
            points[accept] = new_points[accept]
            scores[accept] = new_scores[accept]
            for s, p in zip(new_scores, new_points, strict=True):
                if offer(float(s), int(p)):
                    k_last_modify = k
            k += 1
            t -= cool
            if self.log_interval and k % self.log_interval == 0:
                logger.debug(
                    "SA iter: %d\tlast_update: %d\tmax-0: %.2f\tmax-1: %.2f\ttemp: %.2f\t"
                    "elapsed: %.2f",
                    k,
                    k_last_modify,
                    heap[0][0],
                    max(v for v, _ in heap),
                    t,
                    time.time() - tic,
                )
        best = sorted((x for x in heap if x[0] >= 0), key=lambda x: -x[0])
        logger.debug(
            "SA iter: %d\tlast_update: %d\telapsed: %.2f", k, k_last_modify, time.time() - tic
        )
        if self.persistent:
            self.points = points
        return [p for _, p in best]
