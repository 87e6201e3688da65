"""What ``pytvm tune`` shows while it tunes: a progress bar per task and the final table."""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TextIO

__all__ = ["TaskProgress", "TaskSummary", "format_table"]

_WIDTH = 20


_MINUTE, _HOUR = 60, 3600


def _seconds(s: float) -> str:
    """``s`` seconds as ``12.3 s``, ``4m05s`` or ``1h02m``."""
    if s < _MINUTE:
        return f"{s:.1f} s"
    if s < _HOUR:
        return f"{int(s // 60)}m{int(s % 60):02d}s"
    return f"{int(s // 3600)}h{int(s % 3600 // 60):02d}m"


class TaskProgress:
    """A tuner callback drawing ``[Task  2/ 5] [####......] 12/40 | best 3.21 GFLOPS |
    9.8 s, ~21.0 s left`` for one task.

    ``done`` counts the trials of the task measured before (records resumed) and this run;
    the time left is the time per trial this run times the trials left, which are the fewer
    of ``total - done`` and what early stopping leaves (``tuner.ttl``). On a terminal the line
    is redrawn in place; elsewhere each batch prints a line.
    """

    def __init__(
        self,
        prefix: str,
        total: int,
        done_before: int = 0,
        best_flops: float = 0.0,
        stream: TextIO | None = None,
    ) -> None:
        self.prefix = prefix
        self.total = max(total, 1)
        self.done_before = done_before
        self.measured = 0
        self.best_flops = best_flops
        self.stream = stream if stream is not None else sys.stderr
        self.tty = self.stream.isatty()
        self.start = time.perf_counter()
        self._draw(None)

    @property
    def done(self) -> int:
        """Trials of this task measured, before and in this run."""
        return self.done_before + self.measured

    def __call__(self, tuner: Any, inputs: Sequence[Any], results: Sequence[Any]) -> None:
        """The callback: count the batch and redraw."""
        self.measured += len(inputs)
        self.best_flops = max(self.best_flops, float(getattr(tuner, "best_flops", 0.0)))
        left = self.total - self.done
        ttl = getattr(tuner, "ttl", None)
        if ttl is not None:
            left = min(left, int(ttl))
        self._draw(max(left, 0))

    def line(self, left: int | None) -> str:
        """The progress text (``left``: trials still to measure, None before the first)."""
        done = min(self.done, self.total)
        filled = _WIDTH * done // self.total
        bar = "#" * filled + "." * (_WIDTH - filled)
        elapsed = time.perf_counter() - self.start
        text = (
            f"{self.prefix} [{bar}] {done}/{self.total} | best {self.best_flops / 1e9:.2f} "
            f"GFLOPS | {_seconds(elapsed)}"
        )
        if left is not None and self.measured:
            text += f", ~{_seconds(elapsed / self.measured * left)} left"
        return text

    def _draw(self, left: int | None) -> None:
        if self.tty:
            self.stream.write(f"\r{self.line(left)}\x1b[K")
        else:
            self.stream.write(self.line(left) + "\n")
        self.stream.flush()

    def finish(self, note: str = "done") -> None:
        """End the task's line with ``note``."""
        elapsed = time.perf_counter() - self.start
        if self.tty:
            self.stream.write(f"\r{self.line(0)} | {note} in {_seconds(elapsed)}\x1b[K\n")
        else:
            self.stream.write(f"{self.prefix} {note} in {_seconds(elapsed)}\n")
        self.stream.flush()


@dataclass(frozen=True, slots=True)
class TaskSummary:
    """One row of the final table: a task, its trials and the best measurement."""

    index: int
    name: str
    shapes: str
    trials: int
    space: int
    best_gflops: float
    best_config: int | None


def format_table(rows: Sequence[TaskSummary]) -> str:
    """The final table of ``pytvm tune``: one line per task."""
    head = ("#", "task", "data x weight", "trials", "space", "best GFLOPS", "config")
    body = [
        (
            str(r.index),
            r.name,
            r.shapes,
            str(r.trials),
            str(r.space),
            f"{r.best_gflops:.2f}" if r.best_config is not None else "-",
            str(r.best_config) if r.best_config is not None else "-",
        )
        for r in rows
    ]
    widths = [max(len(x) for x in col) for col in zip(head, *body, strict=True)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in [head]]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)) for row in body]
    return "\n".join(line.rstrip() for line in lines)
