"""Databases of measurements keyed by their input (TVM's ``autotvm.database``), for replaying
measurements: :class:`RedisDatabase` on a Redis server (the ``redis`` package), and
:class:`DummyDatabase`, the same behaviour over a Python dictionary.

A key is ``record.measure_str_key(input)``; its value is the log rows (``record.encode``) of the
input's results joined by ``$``. ``load`` gives the latest result by timestamp (or all of them),
``save`` replaces them (or, with ``extend``, appends).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

from ..ffi.errors import TVMValueError
from .measure.measure import MeasureInput, MeasureResult
from .record import decode, encode, measure_str_key

__all__ = ["Database", "DummyDatabase", "RedisDatabase", "filter_inputs"]


class Database:
    """What a measurement database offers: ``load`` and ``save`` by input."""

    def load(self, inp: MeasureInput, get_all: bool = False) -> Any:
        """The latest result saved for ``inp`` (all of them with ``get_all``), or None."""
        raise NotImplementedError(f"{type(self).__name__}.load")

    def save(self, inp: MeasureInput, res: MeasureResult, extend: bool = False) -> None:
        """Save ``res`` for ``inp``, replacing earlier results (appending with ``extend``)."""
        raise NotImplementedError(f"{type(self).__name__}.save")


def filter_inputs(
    db: Database, measure_inputs: Sequence[MeasureInput], retry: bool = False
) -> tuple[list[MeasureResult | None], list[MeasureInput]]:
    """The saved result of each input (None where there is none, or, with ``retry``, where the
    saved one failed) and the inputs still to measure.
    """
    partial: list[MeasureResult | None] = []
    unsaved: list[MeasureInput] = []
    for inp in measure_inputs:
        res = db.load(inp)
        if res is None or (retry and res.error_no != 0):
            partial.append(None)
            unsaved.append(inp)
        else:
            partial.append(res)
    return partial, unsaved


class RedisDatabase(Database):
    """Measurements in a Redis database (``db_index``: TVM's numbering; the test database
    lives on 127.0.0.1, the others on ``$TVM_FLEET_HOST``).
    """

    REDIS_PROD = 15
    REDIS_LOCA = 14
    REDIS_TEST = 13
    REDIS_NIGHT_TEMP = 12
    MAGIC_SPLIT = "$"

    def __init__(self, db_index: int = REDIS_PROD) -> None:
        try:
            import redis  # type: ignore[import-not-found,unused-ignore]
        except ImportError:
            raise TVMValueError(
                "RedisDatabase needs the 'redis' package (pip install redis); "
                "DummyDatabase keeps records in memory without it"
            ) from None
        host = "127.0.0.1" if db_index == self.REDIS_TEST else os.environ.get("TVM_FLEET_HOST")
        self.db: Any = redis.StrictRedis(host=host, port=6379, db=db_index)
        self.db_index = db_index

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        self.db.set(key, value)

    def get(self, key: Any) -> str | None:
        """The value under ``key`` as text, or None."""
        value = self.db.get(key)
        return value.decode() if isinstance(value, bytes) else value

    def _results(self, value: str) -> list[tuple[MeasureInput, MeasureResult]]:
        rows = (decode(row) for row in value.split(self.MAGIC_SPLIT))
        return [rec for rec in rows if rec is not None]

    def load(self, inp: MeasureInput, get_all: bool = False) -> Any:
        """The latest result saved for ``inp`` (all of them with ``get_all``), or None."""
        value = self.get(measure_str_key(inp))
        if value is None:
            return None
        results = [res for _, res in self._results(value)]
        if get_all:
            return results
        return max(results, key=lambda r: r.timestamp) if results else None

    def save(self, inp: MeasureInput, res: MeasureResult, extend: bool = False) -> None:
        """Save ``res`` for ``inp``, replacing earlier results (appending with ``extend``)."""
        key = measure_str_key(inp)
        value = self.get(key)
        rows = value.split(self.MAGIC_SPLIT) if extend and value is not None else []
        self.set(key, self.MAGIC_SPLIT.join([*rows, encode(inp, res)]))

    def filter(
        self, func: Callable[[MeasureInput, Sequence[MeasureResult]], bool]
    ) -> list[tuple[MeasureInput, MeasureResult]]:
        """The (input, latest result) of each key whose input and results satisfy ``func``.

        Examples
        --------
        >>> db = DummyDatabase()
        >>> db.filter(lambda inp, results: any(r.error_no != 0 for r in results))
        []
        """
        matched: list[tuple[MeasureInput, MeasureResult]] = []
        for key in list(self.db.keys()):
            value = self.get(key)
            if value is None:
                continue
            try:
                records = self._results(value)
            except TVMValueError:  # a row in another format: not a record of ours
                continue
            if not records:
                continue
            results = [res for _, res in records]
            if func(records[0][0], results):
                matched.append((records[0][0], max(results, key=lambda r: r.timestamp)))
        return matched

    def flush(self) -> None:
        """Delete every record."""
        self.db.flushdb()


class DummyDatabase(RedisDatabase):
    """:class:`RedisDatabase`'s behaviour over a dictionary in memory (no server)."""

    def __init__(self) -> None:
        self.db = {}

    def set(self, key: str, value: str) -> None:
        """Store ``value`` under ``key``."""
        self.db[key] = value

    def flush(self) -> None:
        """Delete every record."""
        self.db = {}
