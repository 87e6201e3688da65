"""The progress bar of a graph build: drawn on a terminal once a build has run for a second.

``pytvm.graph.build`` reports its stages (optimize, lower each kernel, compile); nothing is
drawn for builds that finish within a second, nor when standard error is not a terminal (set
``PassContext`` config ``"graph.progress"`` to ``True`` or ``False`` to force either, and
``"graph.progress_delay_s"`` to change the second).
"""

from __future__ import annotations

import sys
import time
from typing import TextIO

__all__ = ["DELAY_S", "BuildProgress"]

_WIDTH = 24
DELAY_S = 1.0  # builds shorter than this draw nothing


class BuildProgress:
    """Draws ``[#####.....] stage k/n`` on one line of ``stream``."""

    def __init__(
        self,
        total: int,
        stream: TextIO | None = None,
        enabled: bool | None = None,
        delay_s: float = DELAY_S,
    ) -> None:
        self.stream = stream if stream is not None else sys.stderr
        self.delay_s = delay_s
        self.enabled = self.stream.isatty() if enabled is None else enabled
        self.total = max(total, 1)
        self.done = 0
        self.start = time.perf_counter()
        self.drawn = False
        self.stage = ""

    def step(self, stage: str, advance: int = 0) -> None:
        """Enter ``stage`` (and count ``advance`` units of work done); redraw if due."""
        self.stage = stage
        self.done = min(self.total, self.done + advance)
        if self.enabled and time.perf_counter() - self.start >= self.delay_s:
            filled = _WIDTH * self.done // self.total
            bar = "#" * filled + "." * (_WIDTH - filled)
            seconds = time.perf_counter() - self.start
            self.stream.write(f"\r[{bar}] {stage} ({seconds:.1f} s)\x1b[K")
            self.stream.flush()
            self.drawn = True

    def finish(self, summary: str) -> None:
        """End the bar with ``summary`` (only if a bar was drawn)."""
        if self.drawn:
            self.stream.write(f"\r[{'#' * _WIDTH}] {summary}\x1b[K\n")
            self.stream.flush()
