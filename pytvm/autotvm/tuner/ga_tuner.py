"""The genetic-algorithm tuner (TVM's ``autotvm.tuner.GATuner``).

A gene is a configuration's knob indices (``[i_0, i_1, ...]``, one per knob, the first knob
varying fastest in the space's index). A generation of ``pop_size`` genes is measured in turn;
then the ``elite_num`` fittest genes of the generation and the previous elites are kept, and the
next generation is bred: two parents drawn in proportion to their FLOPS, a one-point crossover
of their knob indices, and each knob mutated to a random value with ``mutation_prob``. A child
whose configuration was proposed before is dropped, so no configuration is measured twice (after
``100 * pop_size`` such children, random unvisited points fill the generation). When
no more unvisited configurations remain than a population holds, they are the next generation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from ..measure.measure import MeasureInput, MeasureResult
from .tuner import Tuner, score

__all__ = ["GATuner"]


class GATuner(Tuner):
    """Tune with a genetic algorithm over knob indices (see the module)."""

    def __init__(
        self,
        task: Any,
        pop_size: int = 100,
        elite_num: int = 3,
        mutation_prob: float = 0.1,
        seed: int | None = None,
    ) -> None:
        super().__init__(task)
        if not 0 < elite_num <= pop_size:
            raise TVMValueError(
                f"GATuner: elite_num {elite_num} with pop_size {pop_size}; "
                "expected 0 < elite_num <= pop_size"
            )
        self.pop_size = min(pop_size, len(self.space))
        self.elite_num = min(self.pop_size, elite_num)
        self.mutation_prob = mutation_prob
        self.dims = [len(s) for s in self.space.space_map.values()]
        self.rng = np.random.default_rng(seed)
        self.genes: list[list[int]] = []
        self.scores: list[float] = []
        self.elites: list[list[int]] = []
        self.elite_scores: list[float] = []
        self.trial_pt = 0
        self._first_generation()

    def point2knob(self, index: int) -> list[int]:
        """The knob indices of the space's point ``index``."""
        knob = []
        for dim in self.dims:
            knob.append(index % dim)
            index //= dim
        return knob

    def knob2point(self, knob: Sequence[int]) -> int:
        """The space's index of the knob indices ``knob``."""
        return sum(k * math.prod(self.dims[:j]) for j, k in enumerate(knob))

    def _unvisited(self) -> list[int]:
        space = self.space
        return [
            i
            for i in range(space.range_length)
            if i not in self.visited and space.is_index_valid(i)
        ]

    def _take(self, indices: Iterable[int]) -> list[list[int]]:
        indices = list(indices)
        self.visited.update(indices)
        return [self.point2knob(i) for i in indices]

    def _draw(self, count: int) -> list[list[int]]:
        rest = self._unvisited()
        size = min(count, len(rest))
        return self._take(int(i) for i in self.rng.choice(rest, size=size, replace=False))

    def _first_generation(self) -> None:
        self.genes = self._draw(self.pop_size)

    def load_history(
        self, data_set: Iterable[tuple[MeasureInput, MeasureResult]], min_seed_records: int = 500
    ) -> None:
        """Resume from earlier measurements (see ``Tuner.load_history``); genes of the first,
        not yet measured generation that are on record are replaced by unvisited ones.
        """
        if self.trial_pt or self.scores:
            super().load_history(data_set, min_seed_records)
            return
        points = [self.knob2point(g) for g in self.genes]
        self.visited.difference_update(points)
        super().load_history(data_set, min_seed_records)
        keep = [p for p in points if p not in self.visited]
        self.genes = self._take(keep) + self._draw(self.pop_size - len(keep))

    def has_next(self) -> bool:
        """Whether a gene of this generation is unmeasured or a configuration unvisited."""
        pending = len(self.genes) - self.trial_pt
        return pending > 0 or len(self.visited) < len(self.space)

    def next_batch(self, batch_size: int) -> list[Any]:
        """The next ``batch_size`` unmeasured genes of the generation, as configurations."""
        ret: list[Any] = []
        while len(ret) < batch_size and self.trial_pt < len(self.genes):
            gene = self.genes[self.trial_pt]
            self.trial_pt += 1
            ret.append(self.space.get(self.knob2point(gene)))
        return ret

    def update(self, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]) -> None:
        """Record the FLOPS of the measured genes; breed the next generation after the last."""
        self.scores.extend(score(inp, res) for inp, res in zip(inputs, results, strict=True))
        if len(self.scores) < len(self.genes) or len(self.visited) >= len(self.space):
            return
        rest = self._unvisited()
        if len(rest) <= self.pop_size:
            next_genes = self._take(rest)
        else:
            next_genes = self._breed()
        self.genes, self.scores, self.trial_pt = next_genes, [], 0

    def _breed(self) -> list[list[int]]:
        genes = self.genes + self.elites
        scores = np.array(self.scores[: len(self.genes)] + self.elite_scores, dtype="float64")
        elite_idx = np.argpartition(scores, -self.elite_num)[-self.elite_num :]
        self.elites = [genes[i] for i in elite_idx]
        self.elite_scores = [float(scores[i]) for i in elite_idx]
        scores += 1e-8
        probs = scores / np.sum(scores)
        next_genes: list[list[int]] = []
        tries = 0
        while len(next_genes) < self.pop_size:
            tries += 1
            if tries > 100 * self.pop_size:  # the parents breed only visited points
                rest = self._unvisited()
                picked = self.rng.choice(rest, size=self.pop_size - len(next_genes), replace=False)
                return next_genes + self._take(int(i) for i in picked)
            if len(genes) > 1:
                p1, p2 = self.rng.choice(len(genes), size=2, replace=False, p=probs)
                point = int(self.rng.integers(len(self.dims)))
                child = genes[int(p1)][:point] + genes[int(p2)][point:]
            else:
                child = list(genes[0])
            for j, dim in enumerate(self.dims):
                if self.rng.random() < self.mutation_prob:
                    child[j] = int(self.rng.integers(dim))
            index = self.knob2point(child)
            if index not in self.visited and self.space.is_index_valid(index):
                self.visited.add(index)
                next_genes.append(child)
        return next_genes
