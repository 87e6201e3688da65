"""The ONNX frontend: ``from_onnx`` (an ONNX model to a graph module and its weights) and
ONNX's backend interface (:mod:`pytvm.frontend.onnx.backend`).
"""

from __future__ import annotations

from .converters import supported_operators
from .errors import (
    ConstantSizeError,
    DynamicValueError,
    OnnxImportError,
    UnknownInputError,
    UnsupportedOperatorsError,
)
from .importer import from_onnx, load_model

__all__ = [
    "ConstantSizeError",
    "DynamicValueError",
    "OnnxImportError",
    "UnknownInputError",
    "UnsupportedOperatorsError",
    "from_onnx",
    "load_model",
    "supported_operators",
]
