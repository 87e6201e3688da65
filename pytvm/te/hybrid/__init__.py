"""Hybrid scripts (TVM's ``te.hybrid``): tensor operations written as Python functions.

A function decorated with :func:`script` runs as Python on numpy arrays (the emulator, see
:mod:`.runtime`) and, called with tensors, parses into a :class:`HybridOp` whose body is a
loop-IR statement; :func:`build` dumps a schedule back to a script (:class:`HybridModule`).

Examples
--------
>>> from pytvm import te
>>> @te.hybrid.script
... def add_one(a):
...     b = output_tensor((4,), "float32")
...     for i in range(4):
...         b[i] = a[i] + 1.0
...     return b
>>> B = add_one(te.placeholder((4,), name="A"))
>>> B.op.name, type(B.op.body).__name__, B.op.body.loop_var.name
('add_one', 'For', 'i')
"""

from __future__ import annotations

from .module import HybridModule, build
from .op import HybridOp
from .parser import source_to_op
from .runtime import HYBRID_GLOBALS
from .script import script

__all__ = ["HYBRID_GLOBALS", "HybridModule", "HybridOp", "build", "script", "source_to_op"]
