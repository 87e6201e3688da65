"""Measuring configurations (TVM's ``autotvm.measure``): what a measurement takes and gives
(imported here), and the tuning layer's builders and runners, loaded on first use
(``measure_methods``: ``LocalBuilder``, ``RPCRunner``, ``LocalRunner``, ``measure_option``,
``create_measure_batch``; ``local_builder``, ``reference``; ``executor``: the worker processes
builds run in).
"""

from __future__ import annotations

import importlib
from typing import Any

from .measure import Builder, MeasureErrorNo, MeasureInput, MeasureResult, Runner

__all__ = [
    "BuildResult",
    "Builder",
    "Executor",
    "LocalBuilder",
    "LocalRunner",
    "MeasureErrorNo",
    "MeasureInput",
    "MeasureResult",
    "RPCRunner",
    "Runner",
    "create_measure_batch",
    "default_module_loader",
    "executor",
    "measure_methods",
    "measure_option",
    "request_remote",
]

#: Names of ``measure_methods`` (tuning layer: it imports the compiler driver and RPC).
_METHOD_NAMES = {
    "BuildResult",
    "LocalBuilder",
    "LocalRunner",
    "RPCRunner",
    "Runner",
    "create_measure_batch",
    "default_module_loader",
    "measure_option",
    "request_remote",
}


def __getattr__(name: str) -> Any:
    if name in _METHOD_NAMES:
        return getattr(importlib.import_module("pytvm.autotvm.measure.measure_methods"), name)
    if name == "measure_methods":
        return importlib.import_module("pytvm.autotvm.measure.measure_methods")
    if name == "executor":
        return importlib.import_module("pytvm.autotvm.measure.executor")
    if name == "Executor":
        return importlib.import_module("pytvm.autotvm.measure.executor").Executor
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
