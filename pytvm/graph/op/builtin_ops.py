"""Imports every module that registers graph operators."""

from __future__ import annotations

from . import elemwise, nn

__all__ = ["elemwise", "nn"]
