"""TVM's ``tvm.contrib.debugger``: the debug graph executor (``debug_executor``)."""

from __future__ import annotations

from . import debug_executor

__all__ = ["debug_executor"]
