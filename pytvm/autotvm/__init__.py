"""AutoTVM's dispatch layer (TVM's ``autotvm``): configuration spaces of tunable templates,
the dispatch contexts that pick a template's configuration, tuning records and TopHub.

A topi template (``topi.x86.dense_pack``) is called without a configuration; the current
:class:`DispatchContext` supplies it: the fallback at the root, a record's best configuration
inside ``ApplyHistoryBest`` / ``tophub.context``, a fixed one inside ``ApplyConfig``.
The tuners (``autotvm.tuner``) search a space; measuring is not part of this package yet.

Examples
--------
>>> from pytvm import autotvm
>>> cfg = autotvm.get_config()
>>> cfg.is_fallback
True
"""

from __future__ import annotations

from . import env, measure, record, task, tophub, tuner
from .env import GLOBAL_SCOPE
from .measure import MeasureErrorNo, MeasureInput, MeasureResult
from .task import (
    ApplyConfig,
    ApplyHistoryBest,
    ConfigEntity,
    ConfigSpace,
    DispatchContext,
    FallbackContext,
    get_config,
    register_topi_compute,
    register_topi_schedule,
)
from .task import ApplyHistoryBest as apply_history_best
from .tuner import callback

__all__ = [
    "GLOBAL_SCOPE",
    "ApplyConfig",
    "ApplyHistoryBest",
    "ConfigEntity",
    "ConfigSpace",
    "DispatchContext",
    "FallbackContext",
    "MeasureErrorNo",
    "MeasureInput",
    "MeasureResult",
    "apply_history_best",
    "callback",
    "env",
    "get_config",
    "measure",
    "record",
    "register_topi_compute",
    "register_topi_schedule",
    "task",
    "tophub",
    "tuner",
]
