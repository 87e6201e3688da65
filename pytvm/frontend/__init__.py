"""Model importers (TVM's ``relay.frontend``): ``from_onnx``."""

from __future__ import annotations

from . import onnx
from .onnx import from_onnx

__all__ = ["from_onnx", "onnx"]
