"""Device-specific extras above the C runtime (TVM's ``tvm.contrib``): the accelerator path,
TVM's ``graph_executor`` / ``debugger`` names for the runtime's graph executor, and TVM 0.18's
``utils`` / ``cc`` paths of :mod:`pytvm.support`.

Subpackages load on first use (``pytvm.contrib.hexagon``), so ``import pytvm`` stays light.
"""

from __future__ import annotations

import importlib
from types import ModuleType

__all__ = ["cc", "debugger", "graph_executor", "hexagon", "utils"]

_SUBPACKAGES = frozenset(__all__)


def __getattr__(name: str) -> ModuleType:
    if name in _SUBPACKAGES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
