"""Vision operators (TVM's ``topi.vision``): ``reorg``."""

from __future__ import annotations

from .reorg import reorg

__all__ = ["reorg"]
