"""AutoTVM (TVM's ``autotvm``): configuration spaces of tunable templates, the dispatch contexts
that pick a template's configuration, tuning records, TopHub, and tuning itself.

A topi template (``topi.x86.dense_pack``) is called without a configuration; the current
:class:`DispatchContext` supplies it: the fallback at the root, a record's best configuration
inside ``ApplyHistoryBest`` / ``tophub.context``, a fixed one inside ``ApplyConfig``.

This package root is a facade: the dispatch layer's names are imported here, the tuning layer's
(``tuner``, ``callback``, ``LocalBuilder``, ``RPCRunner``, ``LocalRunner``, ``measure_option``,
``create_measure_batch``) load on first use, so importing topi (which imports the dispatch
modules, and so this package) never imports the compiler driver or the graph.

Examples
--------
>>> from pytvm import autotvm
>>> cfg = autotvm.get_config()
>>> cfg.is_fallback
True
"""

from __future__ import annotations

import importlib
from typing import Any

from . import database, env, measure, record, task, tophub
from .env import GLOBAL_SCOPE
from .measure import MeasureErrorNo, MeasureInput, MeasureResult
from .task import (
    ApplyConfig,
    ApplyHistoryBest,
    ConfigEntity,
    ConfigSpace,
    DispatchContext,
    FallbackContext,
    create,
    get_config,
    register_topi_compute,
    register_topi_schedule,
    template,
)
from .task import ApplyGraphBest as apply_graph_best
from .task import ApplyHistoryBest as apply_history_best

__all__ = [
    "GLOBAL_SCOPE",
    "ApplyConfig",
    "ApplyHistoryBest",
    "ConfigEntity",
    "ConfigSpace",
    "DispatchContext",
    "FallbackContext",
    "LocalBuilder",
    "LocalRunner",
    "MeasureErrorNo",
    "MeasureInput",
    "MeasureResult",
    "RPCRunner",
    "apply_graph_best",
    "apply_history_best",
    "callback",
    "create",
    "create_measure_batch",
    "database",
    "env",
    "feature",
    "get_config",
    "measure",
    "measure_option",
    "record",
    "register_topi_compute",
    "register_topi_schedule",
    "task",
    "template",
    "tophub",
    "tuner",
]

#: Tuning-layer names of ``autotvm.measure`` (``measure_methods``), loaded on first use.
_MEASURE_NAMES = {
    "LocalBuilder",
    "LocalRunner",
    "RPCRunner",
    "create_measure_batch",
    "measure_option",
}


def __getattr__(name: str) -> Any:
    if name in _MEASURE_NAMES:
        return getattr(importlib.import_module("pytvm.autotvm.measure.measure_methods"), name)
    if name == "tuner":
        return importlib.import_module("pytvm.autotvm.tuner")
    if name == "feature":
        return importlib.import_module("pytvm.autotvm.feature")
    if name == "callback":
        return importlib.import_module("pytvm.autotvm.tuner.callback")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
