"""What a measurement of a configuration takes and gives (TVM's ``autotvm.measure``)."""

from __future__ import annotations

from .measure import MeasureErrorNo, MeasureInput, MeasureResult

__all__ = ["MeasureErrorNo", "MeasureInput", "MeasureResult"]
