"""Vision operators (TVM's ``topi.vision``): ``reorg``."""

from __future__ import annotations

from . import rcnn
from .reorg import reorg

__all__ = ["rcnn", "reorg"]
