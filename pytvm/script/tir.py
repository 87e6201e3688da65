"""TVM 0.18's spelling of TVMScript's ``T`` namespace (``from tvm.script import tir as T``):
the names of :mod:`pytvm.script.tirx`.

Examples
--------
>>> from pytvm.script import tir as T
>>> T.int32.name
'int32'
"""

from __future__ import annotations

from . import tirx as _tirx
from .tirx import *  # noqa: F403 - tirx's names, listed once there

__all__ = _tirx.__all__
