"""The records of one measurement (its input: target, task, configuration; its result) and the
interfaces of what builds and runs candidates (TVM's ``Builder`` / ``Runner``).
"""

from __future__ import annotations

import enum
import logging
import os
from collections.abc import Sequence
from typing import Any, NamedTuple

__all__ = ["Builder", "MeasureErrorNo", "MeasureInput", "MeasureResult", "Runner"]


class MeasureInput(NamedTuple):
    """What was measured: a configuration of a task on a target."""

    target: Any
    task: Any
    config: Any


class MeasureResult(NamedTuple):
    """Run times in seconds (or the errors), the error kind, the whole cost and when."""

    costs: Any
    error_no: int
    all_cost: float
    timestamp: float


class MeasureErrorNo(enum.IntEnum):
    """Why a measurement failed (TVM's numbering)."""

    NO_ERROR = 0
    INSTANTIATION_ERROR = 1
    COMPILE_HOST = 2
    COMPILE_DEVICE = 3
    RUNTIME_DEVICE = 4
    WRONG_ANSWER = 5
    BUILD_TIMEOUT = 6
    RUN_TIMEOUT = 7
    UNKNOWN_ERROR = 8


class Builder:
    """What builds candidates in tuning (TVM's base class): ``build(inputs)`` gives one build
    result per input. ``build_kwargs`` given here override the runner's
    (``Runner.get_build_kwargs``) in :meth:`set_task`.
    """

    def __init__(
        self,
        timeout: float = 10,
        n_parallel: int | None = None,
        build_kwargs: dict[str, Any] | None = None,
    ) -> None:
        self.timeout = timeout
        self.n_parallel = int(n_parallel) if n_parallel else (os.cpu_count() or 1)
        self.user_build_kwargs = dict(build_kwargs) if build_kwargs is not None else {}
        self.build_kwargs: dict[str, Any] = {}
        self.task: Any = None

    def set_task(self, task: Any, build_kwargs: dict[str, Any] | None = None) -> None:
        """Build candidates of ``task`` from now on, with the runner's ``build_kwargs``."""
        self.task = task
        self.build_kwargs = dict(build_kwargs) if build_kwargs is not None else {}
        overridden = sorted(k for k in self.user_build_kwargs if k in self.build_kwargs)
        if overridden:
            logging.getLogger("autotvm").warning(
                "Overriding these runner-supplied kwargs with user-supplied: %s", overridden
            )
        self.build_kwargs.update(self.user_build_kwargs)

    def build(self, measure_inputs: Sequence[MeasureInput]) -> list[Any]:
        """One build result (or failed :class:`MeasureResult`) per input."""
        raise NotImplementedError(f"{type(self).__name__}.build: a Builder must define build()")


class Runner:
    """What runs and times built candidates in tuning (TVM's base class): ``run(inputs,
    build_results)`` gives one :class:`MeasureResult` per input.
    """

    def __init__(self, timeout: float = 5, n_parallel: int | None = None) -> None:
        self.timeout = timeout
        self.n_parallel = int(n_parallel) if n_parallel else (os.cpu_count() or 1)
        self.task: Any = None

    def set_task(self, task: Any) -> None:
        """Run candidates of ``task`` from now on."""
        self.task = task

    def get_build_kwargs(self) -> dict[str, Any]:
        """Keyword arguments the builder's build function needs for this runner's device."""
        raise NotImplementedError(
            f"{type(self).__name__}.get_build_kwargs: a Runner must define get_build_kwargs()"
        )

    def run(
        self, measure_inputs: Sequence[MeasureInput], build_results: Sequence[Any]
    ) -> list[MeasureResult]:
        """One :class:`MeasureResult` per input."""
        raise NotImplementedError(f"{type(self).__name__}.run: a Runner must define run()")
