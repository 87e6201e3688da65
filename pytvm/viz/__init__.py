"""Pictures of the stack: the trace of a call across layers and hops (text, Mermaid, Perfetto)."""

from __future__ import annotations

from . import trace
from .trace import Trace

__all__ = ["Trace", "trace"]
