"""Where a stage's outputs live while lowering: their buffers, and how indices map into them."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from ..tir.expr import Buffer, IntImm, PrimExpr
from .schedule.layout_map import LayoutMap, physical_indices

__all__ = ["Placed"]


@dataclass
class Placed:
    """Where a stage's outputs live: one buffer each, and the region's start per dimension."""

    buffers: list[Buffer]
    mins: list[PrimExpr]
    extents: list[PrimExpr] = field(default_factory=list)
    layouts: list[LayoutMap] = field(default_factory=list)  # logical -> buffer indices

    def indices(self, logical: Sequence[PrimExpr]) -> tuple[PrimExpr, ...]:
        """The buffer indices of the logical (absolute) ``logical`` indices."""
        if not self.mins:  # every region starts at 0 (an extern op's outputs)
            return physical_indices(self.layouts, logical)
        rel = [
            i - lo if not (isinstance(lo, IntImm) and lo.value == 0) else i
            for i, lo in zip(logical, self.mins, strict=True)
        ]
        return physical_indices(self.layouts, rel)
