"""Tuners that walk the indices of a space (TVM's ``autotvm.tuner.index_based_tuner``):
``GridSearchTuner`` in index order, ``RandomTuner`` in random order; neither repeats an index
and both skip the points a space's ``multi_filter`` leaves out.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ...ffi.errors import TVMValueError
from .tuner import Tuner

__all__ = ["GridSearchTuner", "IndexBaseTuner", "RandomTuner"]


class IndexBaseTuner(Tuner):
    """A tuner over the indices ``range_idx = (first, last)`` (inclusive) of its space, all
    by default.

    Attributes (TVM's): ``begin_idx`` and ``end_idx`` (exclusive) bound the range,
    ``range_length`` is its number of indices, ``visited_max`` its number of valid points.
    """

    def __init__(self, task: Any, range_idx: tuple[int, int] | None = None) -> None:
        super().__init__(task)
        total = self.space.range_length
        if range_idx is None:
            range_idx = (0, total - 1)
        if not isinstance(range_idx, tuple) or len(range_idx) != 2:  # noqa: PLR2004 (first, last)
            raise TVMValueError(f"range_idx {range_idx!r}; expected None or (first, last)")
        first, last = (int(i) for i in range_idx)
        if not 0 <= first <= last < total:
            raise TVMValueError(
                f"range_idx {range_idx} is not inside the space's indices 0..{total - 1}"
            )
        self.begin_idx, self.end_idx = first, last + 1
        self.range_length = self.end_idx - self.begin_idx
        self.visited_max = self.space.subrange_length(self.begin_idx, self.end_idx)

    def _visited_in_range(self) -> int:
        return sum(self.begin_idx <= i < self.end_idx for i in self.visited)

    def has_next(self) -> bool:
        """Whether a valid index of the range is not visited yet."""
        return bool(self._visited_in_range() < self.visited_max)


class GridSearchTuner(IndexBaseTuner):
    """Propose the range's valid indices in order (``index``: the next one), skipping visited
    ones.
    """

    def __init__(self, task: Any, range_idx: tuple[int, int] | None = None) -> None:
        super().__init__(task, range_idx)
        index: int | None = self.begin_idx
        if not self.space.is_index_valid(self.begin_idx):
            index = self._next(self.begin_idx)
        self.index = index

    def _next(self, index: int) -> int | None:
        nxt: int | None = self.space.get_next_index(index, start=self.begin_idx, end=self.end_idx)
        return nxt

    def next_batch(self, batch_size: int) -> list[Any]:
        """The next ``batch_size`` unvisited valid indices' configurations, in index order."""
        ret: list[Any] = []
        while len(ret) < batch_size and self.index is not None:
            index = self.index
            self.index = self._next(index)
            if index not in self.visited:
                self.visited.add(index)
                ret.append(self.space.get(index))
        return ret


class RandomTuner(IndexBaseTuner):
    """Propose the range's valid indices in random order (without replacement; ``seed`` for
    a fixed order).
    """

    def __init__(
        self, task: Any, range_idx: tuple[int, int] | None = None, seed: int | None = None
    ) -> None:
        super().__init__(task, range_idx)
        self.rng = np.random.default_rng(seed)

    def _draw(self) -> int:
        left = self.visited_max - self._visited_in_range()
        if left * 2 > self.range_length:  # mostly unvisited: rejection sampling is quick
            while True:
                index = self.begin_idx + int(self.rng.integers(self.range_length))
                if index not in self.visited and self.space.is_index_valid(index):
                    return index
        rest = [
            i
            for i in range(self.begin_idx, self.end_idx)
            if i not in self.visited and self.space.is_index_valid(i)
        ]
        return rest[int(self.rng.integers(len(rest)))]

    def next_batch(self, batch_size: int) -> list[Any]:
        """Up to ``batch_size`` configurations at random unvisited valid indices."""
        ret: list[Any] = []
        while len(ret) < batch_size and self.has_next():
            index = self._draw()
            self.visited.add(index)
            ret.append(self.space.get(index))
        return ret
