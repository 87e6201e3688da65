"""Schedules (TVM's ``te.schedule``): stages, their primitives, bound inference, loop nests.

``s = te.create_schedule(C.op)`` makes one :class:`Stage` per computation; ``InferBound(s)``
gives every axis its range and ``ScheduleOps(s, bounds)`` the loop nests, as ``lower`` uses them.
"""

from __future__ import annotations

from ...tir.expr import Buffer, IterVar
from .auto_inline import AutoInlineBroadcast, AutoInlineElemWise, AutoInlineInjective
from .graph import CreateReadGraph, GetSubGraph, PostDFSOrder
from .lowering import InferBound, ScheduleOps
from .scan_graph import CreateAttachPath, ScanFixPointAnalysis, ScanGetBody
from .schedule import Schedule, create_schedule
from .stage import Fuse, Singleton, Split, Stage, StageGroup

__all__ = [
    "AutoInlineBroadcast",
    "AutoInlineElemWise",
    "AutoInlineInjective",
    "Buffer",
    "CreateAttachPath",
    "CreateReadGraph",
    "Fuse",
    "GetSubGraph",
    "InferBound",
    "IterVar",
    "PostDFSOrder",
    "ScanFixPointAnalysis",
    "ScanGetBody",
    "Schedule",
    "ScheduleOps",
    "Singleton",
    "Split",
    "Stage",
    "StageGroup",
    "create_schedule",
]
