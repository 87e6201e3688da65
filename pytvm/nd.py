"""``pytvm.nd``: make arrays on devices (TVM's ``tvm.nd`` namespace)."""

from __future__ import annotations

from .runtime.dlpack import from_dlpack
from .runtime.ndarray import NDArray, array, empty

__all__ = ["NDArray", "array", "empty", "from_dlpack"]
