"""Tuners that walk the indices of a space (TVM's ``autotvm.tuner.index_based_tuner``):
``GridSearchTuner`` in index order, ``RandomTuner`` in random order; neither repeats an index.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from .tuner import Tuner

__all__ = ["GridSearchTuner", "IndexBaseTuner", "RandomTuner"]


class IndexBaseTuner(Tuner):
    """A tuner over the indices ``range_idx = (first, last)`` of its space (all by default)."""

    def __init__(self, task: Any, range_idx: tuple[int, int] | None = None) -> None:
        super().__init__(task)
        if range_idx is None:
            range_idx = (0, len(self.space) - 1)
        first, last = range_idx
        if not 0 <= first <= last < len(self.space):
            raise TVMValueError(
                f"range_idx {range_idx} is not inside the space's indices 0..{len(self.space) - 1}"
            )
        self.index_offset = first
        self.range_length = last - first + 1

    def _unvisited_in_range(self) -> int:
        end = self.index_offset + self.range_length
        return self.range_length - sum(self.index_offset <= i < end for i in self.visited)

    def has_next(self) -> bool:
        """Whether an index of the range is not visited yet."""
        return self._unvisited_in_range() > 0


class GridSearchTuner(IndexBaseTuner):
    """Propose the range's indices in order, skipping visited ones."""

    def __init__(self, task: Any, range_idx: tuple[int, int] | None = None) -> None:
        super().__init__(task, range_idx)
        self.counter = 0

    def next_batch(self, batch_size: int) -> list[Any]:
        """The next ``batch_size`` unvisited indices' configurations, in index order."""
        ret: list[Any] = []
        while len(ret) < batch_size and self.counter < self.range_length:
            index = self.index_offset + self.counter
            self.counter += 1
            if index not in self.visited:
                self.visited.add(index)
                ret.append(self.space.get(index))
        return ret


class RandomTuner(IndexBaseTuner):
    """Propose the range's indices in random order (without replacement; ``seed`` for a fixed
    order).
    """

    def __init__(
        self, task: Any, range_idx: tuple[int, int] | None = None, seed: int | None = None
    ) -> None:
        super().__init__(task, range_idx)
        self.rng = np.random.default_rng(seed)

    def _draw(self) -> int:
        left = self._unvisited_in_range()
        if left * 2 > self.range_length:  # mostly unvisited: rejection sampling is quick
            while True:
                index = self.index_offset + int(self.rng.integers(self.range_length))
                if index not in self.visited:
                    return index
        end = self.index_offset + self.range_length
        rest = [i for i in range(self.index_offset, end) if i not in self.visited]
        return rest[int(self.rng.integers(len(rest)))]

    def next_batch(self, batch_size: int) -> list[Any]:
        """Up to ``batch_size`` configurations at random unvisited indices."""
        ret: list[Any] = []
        while len(ret) < batch_size and self.has_next():
            index = self._draw()
            self.visited.add(index)
            ret.append(self.space.get(index))
        return ret
