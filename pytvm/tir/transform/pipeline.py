"""The loop-IR pass pipeline: from the schedule's lowered ``PrimFunc`` to what C code needs.

Input: multi-dimensional buffers, loops with kinds, ``likely`` guards of non-divisible splits,
allocations of intermediate stages. Output: 1-D buffers, simplified indices, vector statements,
expanded unrolled loops and C-level intrinsics.
"""

from __future__ import annotations

from ...ir.transform import Pass, PassContext, sequential
from ..function import IRModule
from .flatten_buffer import FlattenBuffer
from .loop_partition import LoopPartition
from .lower_intrin import LowerIntrin
from .remove_no_op import RemoveNoOp
from .simplify import Simplify
from .storage_rewrite import StorageRewrite
from .unroll_loop import UnrollLoop
from .vectorize_loop import VectorizeLoop

__all__ = ["PIPELINE", "lower_if_needed", "lower_pipeline"]

PIPELINE: tuple[Pass[IRModule], ...] = (
    # Split loops at their `likely` bound guards: guard-free main parts; strip `likely`.
    LoopPartition,
    # Multi-dimensional accesses -> 1-D row-major (or strided) indices.
    FlattenBuffer,
    # Fold constants, canonicalize indices, drop decided guards and trivial loops.
    Simplify,
    # Vectorized loops -> Ramp/Broadcast vector statements (serial when not possible).
    VectorizeLoop,
    # Expand unrolled loops (and small serial ones with tir.UnrollLoop options).
    UnrollLoop,
    # Fold what unrolling exposed (constant indices, decided conditions).
    Simplify,
    # Hoist allocations out of loops; buffers with disjoint lifetimes share memory.
    StorageRewrite,
    # sigmoid/rsqrt/floordiv/floormod -> what C has.
    LowerIntrin,
    # Drop statements that do nothing.
    RemoveNoOp,
)


def lower_pipeline(mod: IRModule, ctx: PassContext | None = None) -> IRModule:
    """Run :data:`PIPELINE` on ``mod`` under ``ctx`` (default: the current ``PassContext``)."""
    return sequential(PIPELINE, mod, ctx)


def lower_if_needed(mod: IRModule) -> IRModule:
    """``mod`` through :data:`PIPELINE` unless every function already went through it."""
    if all(f.attrs.get("tir.flattened", False) for f in mod.functions.values()):
        return mod
    return lower_pipeline(mod)
