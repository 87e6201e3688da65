"""Pictures of the stack: the trace of a call across layers and hops (text, Mermaid, Perfetto)
and memory plans (SVG).
"""

from __future__ import annotations

from . import memory_plan, trace
from .memory_plan import memory_plan_svg
from .trace import Trace

__all__ = ["Trace", "memory_plan", "memory_plan_svg", "trace"]
