"""Pictures of the stack: the trace of a call across layers and hops (text, Mermaid, Perfetto),
memory plans (SVG) and the RAM plan of a microcontroller model (SVG, text).
"""

from __future__ import annotations

from . import memory_plan, ram_plan, trace
from .memory_plan import memory_plan_svg
from .ram_plan import memory_report_text, ram_plan_svg, ram_plan_text
from .trace import Trace

__all__ = [
    "Trace",
    "memory_plan",
    "memory_plan_svg",
    "memory_report_text",
    "ram_plan",
    "ram_plan_svg",
    "ram_plan_text",
    "trace",
]
