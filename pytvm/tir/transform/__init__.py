"""Passes over the loop IR, one module each, and the pipeline that orders them.

Each pass module (``simplify.py`` ...) exposes a pure function ``(IRModule, PassContext) ->
IRModule`` of its own name and a :class:`Pass` record, exported here under TVM's name
(``Simplify``); ``Simplify(mod)`` and TVM's ``Simplify()(mod)`` both run it.
:mod:`.pipeline` lists the passes in order.

Options (``PassContext(config={...})``): ``"tir.verify"`` (check the IR after every pass),
``"tir.disable_vectorize"`` (vectorized loops stay serial), ``"tir.UnrollLoop"`` (a dict:
``auto_max_step``, ``auto_max_depth``, ``auto_max_extent``, ``explicit_unroll``),
``"tir.disable_storage_rewrite"``.
"""

from __future__ import annotations

from .flatten_buffer import FlattenBuffer
from .loop_partition import LoopPartition
from .lower_intrin import LowerIntrin
from .pipeline import PIPELINE, lower_if_needed, lower_pipeline
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .storage_rewrite import StorageRewrite
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop

__all__ = [
    "PIPELINE",
    "FlattenBuffer",
    "LoopPartition",
    "LowerIntrin",
    "RemoveNoOp",
    "Simplify",
    "StorageRewrite",
    "UnrollLoop",
    "VectorizeLoop",
    "lower_if_needed",
    "lower_pipeline",
]
