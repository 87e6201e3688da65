"""Dispatch contexts (TVM's ``autotvm.task.dispatcher``): which configuration a template gets
for a (target, workload).

Contexts nest with ``with``: :attr:`DispatchContext.current` is the innermost. ``query`` asks
the context itself (``_query_inside``) and, when it has nothing (None), the context it was
entered inside. The root is a :class:`FallbackContext`, which always answers: with a
:class:`~pytvm.autotvm.task.space.FallbackConfigEntity` it remembers per (target, workload).
Subclasses override ``_query_inside(target, workload)``; ``FallbackContext`` subclasses may use
``self.memory``, its cache, keyed by ``(str(target), workload)``.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any, ClassVar, Self

import numpy as np

from ...ffi.errors import TVMValueError
from ...target import Target
from ..env import GLOBAL_SCOPE
from .space import FallbackConfigEntity

__all__ = [
    "ApplyConfig",
    "ApplyGraphBest",
    "ApplyHistoryBest",
    "DispatchContext",
    "FallbackContext",
    "clear_fallback_cache",
    "get_config",
]

logger = logging.getLogger("autotvm")


def _model(target: Any) -> str:
    return str(target.attrs.get("model", "unknown")) if target is not None else "unknown"


class DispatchContext:
    """Base of dispatch contexts: ``query`` answers from this context or the enclosing one."""

    current: ClassVar[DispatchContext]
    #: Messages already logged (each fallback warning is logged once).
    warning_messages: ClassVar[set[str]] = set()

    def __init__(self) -> None:
        self._old_ctx: DispatchContext | None = getattr(DispatchContext, "current", None)

    def query(self, target: Any, workload: Any) -> Any:
        """The configuration for ``workload`` on ``target`` (this context, else the outer)."""
        ret = self._query_inside(target, workload)
        if ret is None:
            if self._old_ctx is None:
                raise TVMValueError(f"no dispatch context has a config for {workload}")
            ret = self._old_ctx.query(target, workload)
        return ret

    def update(self, target: Any, workload: Any, cfg: Any) -> None:
        """Record ``cfg`` as the configuration of ``workload`` on ``target``."""
        raise NotImplementedError(f"{type(self).__name__} does not record configurations")

    def _query_inside(self, target: Any, workload: Any) -> Any:
        """The answer of this context alone (None: ask the enclosing context)."""
        raise NotImplementedError(f"{type(self).__name__} must define _query_inside")

    def __enter__(self) -> Self:
        self._old_ctx = DispatchContext.current
        DispatchContext.current = self
        return self

    def __exit__(self, *exc: object) -> None:
        assert self._old_ctx is not None
        DispatchContext.current = self._old_ctx


class ApplyConfig(DispatchContext):
    """Answer every query with one configuration (and remember the last workload asked)."""

    def __init__(self, config: Any) -> None:
        super().__init__()
        self._config = config
        self.workload: Any = None

    def _query_inside(self, target: Any, workload: Any) -> Any:
        self.workload = workload
        return self._config

    def update(self, target: Any, workload: Any, cfg: Any) -> None:
        """Replace the configuration."""
        self.workload = workload
        self._config = cfg


class ApplyHistoryBest(DispatchContext):
    """Answer with the fastest successful record of a workload, matched by the target's model
    first, then by its keys (``records``: a log file's path, an open text file, or
    ``(MeasureInput, MeasureResult)`` pairs; several of them are merged).
    """

    def __init__(self, records: Any = None) -> None:
        super().__init__()
        self.best_by_targetkey: dict[tuple[str, Any], tuple[Any, Any]] = {}
        self.best_by_model: dict[tuple[str, Any], tuple[Any, Any]] = {}
        self._best_user_defined: dict[tuple[str, Any], Any] = {}
        if records:
            self.load(records)

    def load(self, records: Any) -> None:
        """Add ``records`` (see the class)."""
        for inp, res in _unpack_records(records):
            if res.error_no != 0:
                continue
            workload = inp.task.workload
            for key in inp.target.keys:
                _keep_faster(self.best_by_targetkey, (key, workload), inp, res)
            if _model(inp.target) != "unknown":
                _keep_faster(self.best_by_model, (_model(inp.target), workload), inp, res)

    def _query_inside(self, target: Any, workload: Any) -> Any:
        if target is None:
            raise TVMValueError(
                "ApplyHistoryBest needs a target to find the history best: call the template "
                "inside `with pytvm.target.Target('llvm'):`"
            )
        keys = [_model(target), *target.keys]
        for i, k in enumerate(keys):
            key = (k, workload)
            if key in self._best_user_defined:
                return self._best_user_defined[key]
            table = self.best_by_model if i == 0 else self.best_by_targetkey
            if key in table:
                return table[key][0].config
        return None

    def update(self, target: Any, workload: Any, cfg: Any) -> None:
        """Use ``cfg`` for ``workload`` on ``target`` (ahead of any record)."""
        cfg.cost = 0
        for k in (_model(target), *target.keys):
            self._best_user_defined[(k, workload)] = cfg


class ApplyGraphBest(DispatchContext):
    """Answer with the configurations a graph tuner chose (TVM's ``apply_graph_best``).

    ``records`` (a path, an open file or pairs, as :class:`ApplyHistoryBest` takes) hold one
    record per tuned node in node order, as ``BaseGraphTuner.write_opt_sch2record_file`` writes
    them. TVM hands them out by a counter in query order; pytvm matches each query by its
    workload and target key instead, since the compile engine lowers a kernel once for all the
    nodes that share it. A workload without a record gets a fallback configuration (TVM's
    warning, once).
    """

    def __init__(self, records: Any) -> None:
        super().__init__()
        self._records = _unpack_records(records)
        self._chosen: dict[tuple[str, Any], Any] = {}
        for inp, _res in self._records:
            for key in inp.target.keys:
                self._chosen.setdefault((key, inp.task.workload), inp.config)
        self._global_cfg_dict: dict[tuple[str, Any], Any] = {}

    def _query_inside(self, target: Any, workload: Any) -> Any:
        for key in target.keys if target is not None else ():
            if (key, workload) in self._chosen:
                return self._chosen[(key, workload)]
        key2 = (str(target), workload)
        if key2 not in self._global_cfg_dict:
            msg = (
                f"Config for target={target}, workload={workload} is missing in ApplyGraphBest "
                "context. A fallback configuration is used, which may bring great performance "
                "regression."
            )
            if not GLOBAL_SCOPE.silent and msg not in DispatchContext.warning_messages:
                DispatchContext.warning_messages.add(msg)
                logger.warning(msg)
            self._global_cfg_dict[key2] = FallbackConfigEntity()
        return self._global_cfg_dict[key2]

    def update(self, target: Any, workload: Any, cfg: Any) -> None:
        """Use ``cfg`` for ``workload`` on ``target``."""
        self._global_cfg_dict[(str(target), workload)] = cfg


def _keep_faster(
    table: dict[tuple[str, Any], tuple[Any, Any]], key: Any, inp: Any, res: Any
) -> None:
    old = table.get(key)
    if old is None or np.mean(old[1].costs) > np.mean(res.costs):
        table[key] = (inp, res)


#: The tuning log's readers, ``{"file": load_from_file, "buffer": load_from_buffer}``:
#: ``autotvm.record`` registers them when imported (it imports tasks, which import this module,
#: so this module cannot import it).
RECORD_READERS: dict[str, Any] = {}


def _reader(kind: str) -> Any:
    if kind not in RECORD_READERS:
        raise TVMValueError(
            "ApplyHistoryBest: no tuning-log reader registered; import pytvm.autotvm.record "
            "(importing pytvm.autotvm does) before reading records from a file"
        )
    return RECORD_READERS[kind]


def _unpack_records(records: Any) -> list[tuple[Any, Any]]:
    from ..measure.measure import MeasureInput

    if isinstance(records, str | bytes) or hasattr(records, "__fspath__"):
        return list(_reader("file")(records))
    if hasattr(records, "read"):
        return list(_reader("buffer")(records))
    out: list[tuple[Any, Any]] = []
    for item in records if isinstance(records, Iterable) else [records]:
        if isinstance(item, tuple) and item and isinstance(item[0], MeasureInput):
            out.append(item)
        else:
            out.extend(_unpack_records(item))
    return out


class FallbackContext(DispatchContext):
    """The root context: a :class:`FallbackConfigEntity` per (target, workload), cached in
    ``self.memory``; a warning is logged once per miss unless ``GLOBAL_SCOPE.silent``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.memory: dict[tuple[Any, Any], Any] = {}

    def _query_inside(self, target: Any, workload: Any) -> Any:
        key = (str(target), workload)
        if key in self.memory:
            return self.memory[key]
        if not GLOBAL_SCOPE.silent:
            msg = (
                f"Cannot find config for target={target}, workload={workload}. A fallback "
                "configuration is used, which may bring great performance regression."
            )
            if msg not in DispatchContext.warning_messages:
                DispatchContext.warning_messages.add(msg)
                logger.warning(msg)
        cfg = FallbackConfigEntity()
        self.memory[key] = cfg
        return cfg

    def clear_cache(self, target: Any, workload: Any) -> None:
        """Forget the configuration of ``workload`` on ``target``."""
        self.memory.pop((str(target), workload), None)

    def update(self, target: Any, workload: Any, cfg: Any) -> None:
        """Use ``cfg`` for ``workload`` on ``target``."""
        self.memory[(str(target), workload)] = cfg


DispatchContext.current = FallbackContext()


def clear_fallback_cache(target: Any, workload: Any) -> None:
    """Forget the fallback configuration of ``workload`` in the nearest fallback context."""
    ctx: DispatchContext | None = DispatchContext.current
    while ctx is not None and not isinstance(ctx, FallbackContext):
        ctx = ctx._old_ctx
    if ctx is not None:
        ctx.clear_cache(target, workload)


def get_config() -> Any:
    """The configuration the current dispatch context gives the current target for no
    particular workload (TVM's ``autotvm.get_config``; at the root: a fallback configuration).
    """
    return DispatchContext.current.query(Target.current(), None)
