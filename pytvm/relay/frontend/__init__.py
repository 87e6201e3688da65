"""TVM's ``relay.frontend``: model importers (``from_onnx``) and their ``common`` helpers."""

from __future__ import annotations

from ...frontend.onnx import from_onnx
from . import common

__all__ = ["common", "from_onnx"]
