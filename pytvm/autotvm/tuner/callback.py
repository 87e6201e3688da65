"""Callbacks a tuner calls after each measured batch (TVM's ``autotvm.callback``): appending the
measurements to a tuning log, and a progress line.
"""

from __future__ import annotations

import os
import sys
import time
import weakref
from collections.abc import Sequence
from pathlib import Path
from typing import TextIO

from ..measure.measure import MeasureInput, MeasureResult
from ..record import encode
from .tuner import Callback, Tuner, format_si_prefix, score

__all__ = ["log_to_file", "progress_bar"]


def log_to_file(file_out: str | os.PathLike[str] | TextIO, protocol: str = "json") -> Callback:
    """Append each measurement to ``file_out`` (a path, or an open text file) as one line of
    AutoTVM's JSON log (``record.encode``); ``record.load_from_file`` reads it back.
    """

    def _callback(
        _tuner: Tuner, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]
    ) -> None:
        rows = "".join(
            encode(inp, res, protocol) + "\n" for inp, res in zip(inputs, results, strict=True)
        )
        if isinstance(file_out, str | os.PathLike):
            with Path(file_out).open("a", encoding="utf-8") as f:
                f.write(rows)
        else:
            file_out.write(rows)
            file_out.flush()

    return _callback


def progress_bar(total: int, prefix: str = "", si_prefix: str = "G") -> Callback:
    """Rewrite one line on stderr after each batch, in TVM's text:
    ``{prefix} Current/Best: {cur}/{best} GFLOPS | Progress: (done/total) | {secs} s``;
    `` Done.`` ends it once ``total`` trials are measured, or when the callback is released
    (tuning stopped early).
    """
    format_si_prefix(0, si_prefix)
    tic = time.time()
    done = [0]

    def _line(cur: float, best: float) -> str:
        return (
            f"\r{prefix} Current/Best: {format_si_prefix(cur, si_prefix):7.2f}/"
            f"{format_si_prefix(best, si_prefix):7.2f} {si_prefix}FLOPS | "
            f"Progress: ({done[0]}/{total}) | {time.time() - tic:.2f} s"
        )

    sys.stderr.write(_line(0, 0))
    sys.stderr.flush()
    ended = [False]

    def _end() -> None:
        if not ended[0]:
            ended[0] = True
            sys.stderr.write(" Done.\n")
            sys.stderr.flush()

    def _callback(
        tuner: Tuner, inputs: Sequence[MeasureInput], results: Sequence[MeasureResult]
    ) -> None:
        done[0] += len(inputs)
        cur = 0.0
        for inp, res in zip(inputs, results, strict=True):
            if res.error_no == 0:
                cur = score(inp, res)
        sys.stderr.write(_line(cur, tuner.best_flops))
        sys.stderr.flush()
        if done[0] >= total:
            _end()

    # Tuning that stops early (early_stopping, an exhausted space) ends the line when the
    # callback is released, as TVM's does, so the next output starts on a line of its own.
    weakref.finalize(_callback, _end)
    return _callback
