"""Which targets TVM-style tests run on: ``TVM_TEST_TARGETS`` (``;``-separated target strings)
or :data:`DEFAULT_TEST_TARGETS`, kept to those pytvm can compile for and run here.

pytvm runs ``llvm`` (with llvmlite) and ``c`` (with a C compiler) on the CPU; GPU kinds are
listed, as in TVM, but never runnable.

Examples
--------
>>> from pytvm.testing import targets
>>> targets.device_enabled("cuda"), targets.device_enabled("cpu")
(False, True)
"""

from __future__ import annotations

import logging
import os
from typing import Any, TypedDict

from ..ffi.libinfo import find_cc
from .env import has_llvm

__all__ = [
    "DEFAULT_TEST_TARGETS",
    "device_enabled",
    "enabled_targets",
    "get_targets",
    "target_kind_enabled",
]

DEFAULT_TEST_TARGETS = [
    "llvm",
    "cuda",
    "nvptx",
    "vulkan -from_device=0",
    "opencl",
    "metal",
    "rocm",
    "hexagon",
]


class TestTarget(TypedDict):
    """One test target: its string, kind, and whether pytvm can compile for / run it here."""

    target: str
    target_kind: str
    is_enabled: bool
    is_runnable: bool


def _kind_runs_here(kind: str) -> bool:
    if kind == "llvm":
        return has_llvm()
    if kind == "c":
        return find_cc() is not None
    return False


def _test_target_names() -> list[str]:
    names = os.environ.get("TVM_TEST_TARGETS", "")
    return [t.strip() for t in names.split(";") if t.strip()]


def get_targets(target_names: list[str] | None = None) -> list[TestTarget]:
    """The test targets (``TVM_TEST_TARGETS`` by default) with what pytvm can do with each; when
    none runs here, ``llvm`` alone (as TVM does).
    """
    names = target_names if target_names is not None else _test_target_names()
    names = names or DEFAULT_TEST_TARGETS
    found: list[TestTarget] = []
    for name in names:
        kind = name.split()[0]
        runs = _kind_runs_here(kind)
        found.append(TestTarget(target=name, target_kind=kind, is_enabled=runs, is_runnable=runs))
    if not any(t["is_runnable"] for t in found) and names != ["llvm"] and has_llvm():
        logging.getLogger(__name__).warning(
            "none of the test targets %s runs here; using llvm", names
        )
        return get_targets(["llvm"])
    return found


def target_kind_enabled(kind: str) -> bool:
    """Whether ``kind`` is among the test targets (whether or not it runs here)."""
    return any(t["target_kind"] == kind for t in get_targets())


def device_enabled(target: str | dict[str, Any]) -> bool:
    """Whether tests may use ``target`` here: its kind is a runnable test target (``cpu``
    always is).
    """
    kind = target.get("kind", "") if isinstance(target, dict) else target.split(maxsplit=1)[0]
    if kind == "cpu":
        return True
    return any(t["target_kind"] == kind and t["is_runnable"] for t in get_targets())


def enabled_targets() -> list[tuple[str, Any]]:
    """``(target string, device)`` for every runnable test target."""
    from ..runtime import device

    return [(t["target"], device(t["target"])) for t in get_targets() if t["is_runnable"]]
