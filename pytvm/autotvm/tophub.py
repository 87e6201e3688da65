"""TopHub, pre-tuned configurations per backend (TVM's ``autotvm.tophub``).

TVM downloads ``<backend>_<version>.log`` into ``~/.tvm/tophub`` on first use. pytvm does not
reach the network: :func:`context` loads a package only when it is already on disk (placed by
hand, or by an installed TVM), and otherwise returns a context with no records, saying once in
the ``autotvm`` log which file it looked for. Templates then use their fallback configurations,
as TVM does when its download fails. ``TOPHUB_LOCATION=NONE`` turns TopHub off, as in TVM.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from ..target import Target
from .record import load_from_file
from .task.dispatcher import ApplyHistoryBest, DispatchContext

__all__ = [
    "AUTOTVM_TOPHUB_NONE_LOC",
    "AUTOTVM_TOPHUB_ROOT_PATH",
    "PACKAGE_VERSION",
    "EmptyContext",
    "context",
    "load_reference_log",
    "package_path",
]

logger = logging.getLogger("autotvm")

#: Environment variable naming where TopHub lives; ``NONE`` disables it.
AUTOTVM_TOPHUB_LOC_VAR = "TOPHUB_LOCATION"
AUTOTVM_TOPHUB_NONE_LOC = "NONE"
#: Where TopHub packages are read from.
AUTOTVM_TOPHUB_ROOT_PATH = Path("~").expanduser() / ".tvm" / "tophub"
#: The package version of each backend (TVM v0.18's).
PACKAGE_VERSION = {
    "arm_cpu": "v0.08",
    "llvm": "v0.04",
    "cuda": "v0.10",
    "rocm": "v0.05",
    "opencl": "v0.04",
    "mali": "v0.06",
    "intel_graphics": "v0.02",
    "vta": "v0.10",
    "amd_apu": "v0.01",
    "adreno": "v0.01",
}
_ALIAS = {"vtacpu": "vta", "webgpu": "opencl", "vulkan": "opencl", "nvptx": "cuda"}
_reported: set[Path] = set()
#: load_reference_log's answers by (backend, model, template name).
REFERENCE_LOG_CACHE: dict[tuple[str, str, str], list[tuple[Any, Any]]] = {}


class EmptyContext:
    """A ``with`` block that changes nothing (TopHub turned off)."""

    def __enter__(self) -> EmptyContext:
        return self

    def __exit__(self, *exc: object) -> None:
        return None


def package_path(backend: str) -> Path | None:
    """The file TopHub's package of ``backend`` is read from (None: no such package)."""
    name = _ALIAS.get(backend, backend)
    if name not in PACKAGE_VERSION:
        return None
    return AUTOTVM_TOPHUB_ROOT_PATH / f"{name}_{PACKAGE_VERSION[name]}.log"


def _backends(target: Target) -> list[str]:
    return [*target.keys, target.kind.name]


def context(
    target: Target | str | Sequence[Target | str], extra_files: Sequence[str] | None = None
) -> DispatchContext | EmptyContext:
    """A dispatch context holding the pre-tuned records of ``target`` (and ``extra_files``).

    Examples
    --------
    >>> import pytvm
    >>> with pytvm.autotvm.tophub.context("llvm"):
    ...     pass
    """
    if os.environ.get(AUTOTVM_TOPHUB_LOC_VAR) == AUTOTVM_TOPHUB_NONE_LOC:
        return EmptyContext()
    best = ApplyHistoryBest([])
    targets: Sequence[Any] = [target] if isinstance(target, str | Target) else target
    for each in targets:
        tgt = Target(each) if isinstance(each, str) else each
        for backend in _backends(tgt):
            path = package_path(backend)
            if path is None:
                continue
            if path.is_file():
                best.load(path)
            elif path not in _reported:
                _reported.add(path)
                logger.warning(
                    "TopHub package %s is not on disk and pytvm does not download it; "
                    "templates use their fallback configurations",
                    path,
                )
            break  # one package per target, as TVM
    for filename in extra_files or ():
        best.load(filename)
    return best


def load_reference_log(backend: str, model: str, workload_name: str) -> list[tuple[Any, Any]]:
    """The records of template ``workload_name`` in ``backend``'s TopHub package for the device
    ``model`` (the model with the most records when the package has none of ``model``), for
    ``FallbackConfigEntity.fallback_with_reference_log``; empty when the package is not on disk
    (pytvm does not download it) or TopHub is off. Cached per arguments.
    """
    key = (backend, model, workload_name)
    if key in REFERENCE_LOG_CACHE:
        return REFERENCE_LOG_CACHE[key]
    path = package_path(backend)
    if (
        os.environ.get(AUTOTVM_TOPHUB_LOC_VAR) == AUTOTVM_TOPHUB_NONE_LOC
        or path is None
        or not path.is_file()
    ):
        return []
    records = load_from_file(path)
    counts: dict[str, int] = {}
    for inp, _ in records:
        name = str(inp.target.attrs.get("model", "unknown"))
        counts[name] = counts.get(name, 0) + 1
    if model not in counts and counts:
        model = max(counts.items(), key=lambda kv: kv[1])[0]
    found = [
        (inp, res)
        for inp, res in records
        if str(inp.target.attrs.get("model", "unknown")) == model and inp.task.name == workload_name
    ]
    REFERENCE_LOG_CACHE[key] = found
    return found
