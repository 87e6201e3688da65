"""Tuners led by a cost model (TVM's ``autotvm.tuner.model_based_tuner``).

A :class:`ModelBasedTuner` measures random configurations until ``plan_size`` results are in;
then, and after every further ``plan_size`` results, it fits its :class:`CostModel` to all
results so far (FLOPS; 0 for a failed measurement) and asks its :class:`ModelOptimizer` for the
``plan_size`` unvisited configurations the model scores highest: the next trials, in that
order. The last 5% of each plan are random picks instead (epsilon-greedy), as are picks when
the plan runs out. With ``diversity_filter_ratio`` the optimizer returns ``ratio * plan_size``
candidates and :func:`submodular_pick` keeps ``plan_size`` of them with the most distinct knob
values.

``load_history(records)`` is transfer learning: a base model (``spawn_base_model``) is fitted
on the records of tasks of the same template (``fit_log``; at least ``min_seed_records``
usable ones, else nothing happens); it picks the first plan right away, and the tuner's own
model starts from its predictions (``load_basemodel``).

A configuration is an index of the task's space; the space helpers here (:func:`point2knob`,
:func:`knob2point`, :func:`random_walk`, :func:`sample_ints`) read the knobs' sizes from
``space.space_map`` (the first knob varies fastest, as ``ConfigSpace.get``).
"""

from __future__ import annotations

import gc
import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..env import GLOBAL_SCOPE
from ..measure.measure import MeasureInput, MeasureResult
from .tuner import Tuner, score

__all__ = [
    "CostModel",
    "FeatureCache",
    "ModelBasedTuner",
    "ModelOptimizer",
    "knob2point",
    "knob_dims",
    "point2knob",
    "random_walk",
    "sample_ints",
    "submodular_pick",
]


#: Below this best FLOPS nothing measured has worked yet: no model is fitted.
_MIN_FLOPS = 1e-6


def knob_dims(space: Any) -> list[int]:
    """The number of choices of each knob of ``space``, in declaration order."""
    return [len(s) for s in space.space_map.values()]


def point2knob(index: int, dims: Sequence[int]) -> list[int]:
    """The knob indices of the space's point ``index`` (the first knob varies fastest).

    Examples
    --------
    >>> point2knob(7, [2, 3, 4])
    [1, 0, 1]
    """
    knob = []
    for dim in dims:
        knob.append(index % dim)
        index //= dim
    return knob


def knob2point(knob: Sequence[int], dims: Sequence[int]) -> int:
    """The point of knob indices ``knob`` (inverse of :func:`point2knob`)."""
    return sum(int(k) * math.prod(dims[:j]) for j, k in enumerate(knob))


def random_walk(index: int, dims: Sequence[int], rng: np.random.Generator) -> int:
    """A neighbour of ``index``: one knob (with more than one choice) set to another choice."""
    movable = [j for j, d in enumerate(dims) if d > 1]
    if not movable:
        return index
    knob = point2knob(index, dims)
    j = movable[int(rng.integers(len(movable)))]
    step = int(rng.integers(1, dims[j]))
    knob[j] = (knob[j] + step) % dims[j]
    return knob2point(knob, dims)


def sample_ints(n: int, space_len: int, rng: np.random.Generator) -> np.ndarray:
    """``min(n, space_len)`` distinct random points of a space of ``space_len`` points."""
    n = min(n, space_len)
    if space_len <= 4 * n:
        return rng.permutation(space_len)[:n].astype(np.int64)
    picked: set[int] = set()
    while len(picked) < n:
        picked.update(int(x) for x in rng.integers(space_len, size=n - len(picked)))
    return np.array(sorted(picked), dtype=np.int64)


def _rand_unvisited(space_len: int, visited: set[int], rng: np.random.Generator) -> int:
    left = space_len - len(visited)
    if left <= 0:
        raise TVMValueError(f"no unvisited configuration left in a space of {space_len}")
    if left * 4 > space_len:  # mostly unvisited: draw until a fresh one comes up
        while True:
            index = int(rng.integers(space_len))
            if index not in visited:
                return index
    rest = [i for i in range(space_len) if i not in visited]
    return rest[int(rng.integers(len(rest)))]


class FeatureCache:
    """Features by configuration index, one dict per feature type, shared by a model and the
    base model it transfers from.
    """

    def __init__(self) -> None:
        self.feature_cache: dict[str, dict[int, Any]] = {}

    def get(self, key: str) -> dict[int, Any]:
        """The cache of feature type ``key`` (created empty)."""
        return self.feature_cache.setdefault(key, {})

    def size(self, key: str) -> int:
        """Entries cached for ``key``."""
        return len(self.feature_cache.get(key, {}))

    def clear(self, key: str) -> None:
        """Drop the cache of ``key``."""
        self.feature_cache[key] = {}
        gc.collect()


class CostModel:
    """Predicts the speed of configurations (by index) from measured ones."""

    def fit(self, xs: Sequence[int], ys: Sequence[float], plan_size: int) -> None:
        """Fit to configurations ``xs`` (indices) and their FLOPS ``ys``."""
        raise NotImplementedError

    def fit_log(
        self,
        records: Iterable[tuple[MeasureInput, MeasureResult]],
        plan_size: int,
        min_seed_records: int = 500,
    ) -> bool:
        """Fit to tuning records (other tasks too); False when fewer than
        ``min_seed_records`` are usable (nothing fitted).
        """
        raise NotImplementedError

    def predict(self, xs: Sequence[int] | np.ndarray, output_margin: bool = False) -> np.ndarray:
        """Scores of configurations ``xs`` (higher: faster); ``output_margin``: untransformed."""
        raise NotImplementedError

    def load_basemodel(self, base_model: Any) -> None:
        """Start from ``base_model``'s predictions (transfer learning)."""
        raise NotImplementedError

    def spawn_base_model(self) -> CostModel:
        """A model with the same parameters, to fit history records."""
        raise NotImplementedError


class ModelOptimizer:
    """Finds the configurations a cost model scores highest."""

    def find_maximums(self, model: CostModel, num: int, exclusive: set[int]) -> list[int]:
        """Up to ``num`` indices not in ``exclusive``, best predicted first."""
        raise NotImplementedError


class ModelBasedTuner(Tuner):
    """Tune by fitting ``cost_model`` every ``plan_size`` results and measuring the maximums
    ``model_optimizer`` finds (see the module). ``seed`` (pytvm's) fixes the random picks.
    """

    def __init__(
        self,
        task: Any,
        cost_model: CostModel,
        model_optimizer: ModelOptimizer,
        plan_size: int,
        diversity_filter_ratio: float | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(task)
        if plan_size < 1:
            raise TVMValueError(f"plan_size={plan_size}; expected a positive number of trials")
        if diversity_filter_ratio is not None and diversity_filter_ratio < 1:
            raise TVMValueError(
                f"diversity_filter_ratio={diversity_filter_ratio}; expected None or >= 1"
            )
        self.target = task.target
        self.plan_size = plan_size
        self.cost_model = cost_model
        self.model_optimizer = model_optimizer
        self.diversity_filter_ratio = diversity_filter_ratio
        self.rng = np.random.default_rng(seed)
        self.dims = knob_dims(self.space)
        self.trials: list[int] = []
        self.trial_pt = 0
        self.xs: list[int] = []
        self.ys: list[float] = []
        self.flops_max = 0.0
        self.train_ct = 0

    def _is_index_valid(self, index: int) -> bool:
        """Inside the space's index range and kept by its multi filter (if any)."""
        return 0 <= index < self.space.range_length and bool(self.space.is_index_valid(index))

    def _rand_unvisited_valid(self) -> int:
        space = self.space
        if space.range_length == len(space):  # no multi filter: every index is valid
            return _rand_unvisited(len(space), self.visited, self.rng)
        rest = [
            i
            for i in range(space.range_length)
            if i not in self.visited and space.is_index_valid(i)
        ]
        if not rest:
            raise TVMValueError(f"no unvisited configuration left in a space of {len(space)}")
        return rest[int(self.rng.integers(len(rest)))]

    def next_batch(self, batch_size: int) -> list[Any]:
        """The next ``batch_size`` unvisited configurations of the plan (random ones for the
        plan's last 5% and once it is used up).
        """
        ret: list[Any] = []
        while len(ret) < batch_size and self.has_next():
            while self.trial_pt < len(self.trials):
                index = self.trials[self.trial_pt]
                if index not in self.visited and self._is_index_valid(index):
                    break
                self.trial_pt += 1
            if self.trial_pt >= len(self.trials) - int(0.05 * self.plan_size):
                index = self._rand_unvisited_valid()
            ret.append(self.space.get(index))
            self.visited.add(index)
        return ret

    def update(self, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]) -> None:
        """Record the results; every ``plan_size`` of them, refit and plan anew."""
        for inp, res in zip(inputs, results, strict=True):
            index = int(inp.config.index)
            if not self._is_index_valid(index):
                raise TVMValueError(
                    f"update: config index {index} is not a valid point of the space "
                    f"(indices 0..{self.space.range_length - 1}, multi filter applied)"
                )
            flops = score(inp, res)
            self.flops_max = max(self.flops_max, flops)
            self.xs.append(index)
            self.ys.append(flops)
            self.visited.add(index)
        if len(self.xs) >= self.plan_size * (self.train_ct + 1) and self.flops_max > _MIN_FLOPS:
            self.cost_model.fit(self.xs, self.ys, self.plan_size)
            self.trials = self._plan(self.cost_model)
            self.trial_pt = 0
            self.train_ct += 1

    def _plan(self, model: CostModel) -> list[int]:
        if not self.diversity_filter_ratio:
            return list(self.model_optimizer.find_maximums(model, self.plan_size, self.visited))
        wanted = int(self.plan_size * self.diversity_filter_ratio)
        candidate = self.model_optimizer.find_maximums(model, wanted, self.visited)
        if not candidate:
            return []
        knobs = [point2knob(x, self.dims) for x in candidate]
        picked = submodular_pick(np.zeros(len(candidate)), knobs, self.plan_size, knob_weight=1)
        return [int(candidate[i]) for i in picked]

    def load_history(
        self, data_set: Iterable[tuple[MeasureInput, MeasureResult]], min_seed_records: int = 500
    ) -> None:
        """Resume (this task's records are marked visited, the best kept) and transfer: fit a
        base model on the records of this template's tasks and plan the first trials with it.
        """
        records = list(data_set)
        super().load_history(records, min_seed_records)
        GLOBAL_SCOPE.in_tuning = True
        try:
            base_model = self.cost_model.spawn_base_model()
            if not base_model.fit_log(records, self.plan_size, min_seed_records):
                return
            if not self.trials:
                self.trials = self._plan(base_model)
                self.trial_pt = 0
            self.cost_model.load_basemodel(base_model)
        finally:
            GLOBAL_SCOPE.in_tuning = False

    def has_next(self) -> bool:
        """Whether a configuration is left unvisited."""
        return len(self.visited) < len(self.space)


def submodular_pick(
    scores: np.ndarray, knobs: Sequence[Sequence[int]], n_pick: int, knob_weight: float = 1.0
) -> list[int]:
    """Greedily pick ``n_pick`` points maximising ``sum(scores) + knob_weight * (distinct knob
    values among the picked)`` (monotone submodular, so greedy is within 1 - 1/e).

    Examples
    --------
    >>> submodular_pick(np.zeros(3), [[0, 0], [0, 1], [1, 1]], 2)
    [0, 2]
    """
    if len(scores) != len(knobs):
        raise TVMValueError(f"submodular_pick: {len(scores)} scores for {len(knobs)} points")
    n_knobs = len(knobs[0]) if knobs else 0
    seen: list[set[int]] = [set() for _ in range(n_knobs)]
    ret: list[int] = []
    remain = list(range(len(scores)))
    for _ in range(min(n_pick, len(remain))):
        best, best_delta = -1, -math.inf
        for x in remain:
            delta = float(scores[x]) + knob_weight * sum(
                knobs[x][i] not in seen[i] for i in range(n_knobs)
            )
            if delta > best_delta:
                best, best_delta = x, delta
        ret.append(best)
        remain.remove(best)
        for i in range(n_knobs):
            seen[i].add(knobs[best][i])
    return ret
